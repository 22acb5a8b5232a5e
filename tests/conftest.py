"""Shared fixtures: a tiny tokenizer and tiny random models, built in memory (no downloads)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import torch
from streamlit.components.v2 import manifest_scanner

from model.checkpoint import save_checkpoint
from model.lm import TransformerLM
from model.transformer import Config, build
from training.tokenizer import train_tokenizer

# Every new AppTest scans every installed package for Streamlit components (0.16-0.27 s
# here), and the suite makes hundreds of them: once per process is enough, as nothing is
# installed while it runs. tests/test_structure.py fails if AppTest stops calling it.
manifest_scanner.scan_component_manifests = functools.cache(
    manifest_scanner.scan_component_manifests
)

TINY_TEXT = [
    "the dog bit the boy near the river bank",
    "the man walked the dog to the bank to get cash",
    "a cat sat on the warm mat and slept",
    "students walk to school every morning",
    "steel is strong and aluminum is light",
    "python and haskell are programming languages",
    "she opened the door and smiled at the dog",
    "the researcher asked the assistant to check the results",
] * 4


@pytest.fixture(scope="session")
def tiny_tokenizer():
    return train_tokenizer(TINY_TEXT, vocab_size=200)


def tiny_config(kind: str, vocab_size: int, **overrides) -> Config:
    base = dict(
        kind=kind,
        vocab_size=vocab_size,
        d_model=32,
        n_heads=4,
        n_layers=2,
        n_decoder_layers=2,
        d_mlp=64,
        max_len=24,
        dropout=0.0,
    )
    return Config(**{**base, **overrides})


def tiny_model(tokenizer, kind: str = "encoder", seed: int = 0, **overrides) -> TransformerLM:
    """A tiny untrained language model (kind "encoder" or "decoder"), in memory."""
    torch.manual_seed(seed)
    cfg = tiny_config(kind, tokenizer.get_vocab_size(), **overrides)
    return TransformerLM(build(cfg).eval(), cfg, tokenizer, "cpu", f"tiny-{kind}")


def save_tiny(folder: Path, tokenizer, kind: str, seed: int = 0, **overrides) -> Path:
    """A tiny untrained checkpoint of `kind` ("encoder", "decoder", "encoder-decoder",
    "recurrent", "vision") in `folder`, for model.load(folder) or model.register(name, folder)."""
    torch.manual_seed(seed)
    if kind == "vision":  # no tokenizer: patches are the tokens
        from model.vit import VisionConfig, VisionTransformer, save_vit

        cfg = VisionConfig(d_model=16, n_heads=4, n_layers=2, d_mlp=32, dropout=0.0)
        return save_vit(VisionTransformer(cfg).eval(), folder)
    if kind == "recurrent":
        from model.lstm import LSTMSeq2Seq, RecurrentConfig

        cfg = RecurrentConfig(vocab_size=tokenizer.get_vocab_size(), d_model=32, max_len=24)
        return save_checkpoint(LSTMSeq2Seq(cfg).eval(), cfg, tokenizer, folder)
    cfg = tiny_config(kind, tokenizer.get_vocab_size(), **overrides)
    return save_checkpoint(build(cfg).eval(), cfg, tokenizer, folder)


@pytest.fixture(scope="session")
def tiny_mlm(tiny_tokenizer) -> TransformerLM:
    return tiny_model(tiny_tokenizer, "encoder")


@pytest.fixture(scope="session")
def tiny_clm(tiny_tokenizer) -> TransformerLM:
    return tiny_model(tiny_tokenizer, "decoder")
