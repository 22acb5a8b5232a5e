"""Caches: one model per (name, device) for every session, one trace per (text, model,
device, options), and the small computations the pages repeat.

Cache keys are strings, numbers and tuples only: the Bundle itself never enters a key
(DESIGN.md: `st.cache_data` cannot hash tensors). Everything cached with `cache_data`
comes back as numpy or plain Python, a fresh copy per call.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

import model
from model import Bundle, Trace
from model.tokenizer import SPECIAL_TOKENS

# The models the sidebar offers (more later: translation, ViT), with a short description.
MODELS: dict[str, str] = {
    "mlm": "mlm · masked, BERT-style (encoder)",
    "clm": "clm · causal, GPT-style (decoder)",
}
WARM_UP_TEXT = "The cat sat on the mat."


def cuda_available() -> bool:
    return torch.cuda.is_available()


def resolve_device(choice: str) -> str:
    """ "auto" -> "cuda" when there is a GPU, else "cpu"; other choices as they are."""
    if choice == "auto":
        return "cuda" if cuda_available() else "cpu"
    return choice


@st.cache_resource(show_spinner="Loading the model…", max_entries=8)
def load_bundle(name: str, device: str) -> Bundle:
    """The model `name` on `device`, loaded once for all sessions and warmed up once, so
    the first sentence's measured time is the model's, not PyTorch's start-up."""
    bundle = model.load(name, device)
    bundle.trace(WARM_UP_TEXT)
    return bundle


@st.cache_data(show_spinner=False, max_entries=128)
def get_trace(text: str, name: str, device: str, positions: bool = True) -> Trace:
    """The trace of `text` through model `name` on `device` (numpy arrays)."""
    return load_bundle(name, device).trace(text, positions=positions)


@st.cache_data(show_spinner=False, max_entries=256)
def get_trace_ids(ids: tuple[int, ...], name: str, device: str) -> Trace:
    """The trace of token ids as they are (masked tokens, generated tokens)."""
    return load_bundle(name, device).trace_ids(list(ids))


@st.cache_data(show_spinner=False, max_entries=128)
def fill_mask_ids(ids: tuple[int, ...], name: str, device: str, k: int) -> list:
    """One ranked [(token, prob), ...] per [MASK] id, in order."""
    return load_bundle(name, device).fill_mask_ids(list(ids), k)


@st.cache_data(show_spinner=False, max_entries=256)
def next_distribution(
    ids: tuple[int, ...],
    name: str,
    device: str,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
) -> np.ndarray:
    """[V] probabilities of the next token after `ids`, after temperature/top-k/top-p."""
    probs = load_bundle(name, device).next_distribution(list(ids), temperature, top_k, top_p)
    out = probs.double().cpu().numpy()
    return out / out.sum()


@st.cache_data(show_spinner=False, max_entries=8)
def vocabulary(name: str, device: str) -> list[str]:
    """Every token of the vocabulary, by id."""
    tok = load_bundle(name, device).tokenizer
    return [tok.id_to_token(i) for i in range(tok.get_vocab_size())]


@st.cache_data(show_spinner=False, max_entries=8)
def special_ids(name: str, device: str) -> dict[str, int]:
    """The ids of the special tokens, by name ("[MASK]": 4, ...)."""
    tok = load_bundle(name, device).tokenizer
    return {n: tok.token_to_id(n) for n in SPECIAL_TOKENS if tok.token_to_id(n) is not None}


@st.cache_data(show_spinner=False, max_entries=512)
def neighbours(name: str, device: str, token_id: int, k: int) -> tuple[list, np.ndarray]:
    """The k nearest vocabulary tokens to `token_id` by cosine: [(token, cos)], [k, D]."""
    bundle = load_bundle(name, device)
    near = bundle.nearest_tokens(token_id, k)
    ids = [bundle.tokenizer.token_to_id(tok) for tok, _ in near]
    return near, bundle.embedding_matrix()[ids]


@st.cache_data(show_spinner=False, max_entries=64)
def attention_weights(name: str, device: str, layer: int) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V [H, D, Dh], their biases [H, Dh], W_O [D, D] and b_O [D]."""
    return load_bundle(name, device).attention_weights(layer)
