"""The causal page's sampling controls and its click-by-click generation state."""

from __future__ import annotations

import streamlit as st

from model import Sampling, draw
from ui import cache


def sampling_controls() -> tuple[Sampling, int]:
    """Temperature, top-k and top-p sliders (keys causal_temp/topk/topp), and how many bars."""
    c1, c2, c3, c4 = st.columns(4)
    temperature = c1.slider(
        "Temperature",
        0.0,
        2.0,
        1.0,
        0.05,
        key="causal_temp",
        help="Below 1 sharpens the distribution, above 1 flattens it; 0 always picks the most "
        "likely token (greedy).",
    )
    top_k = c2.slider(
        "Top-k (0 = off)", 0, 100, 0, key="causal_topk", help="Keep only the k most likely tokens."
    )
    top_p = c3.slider(
        "Top-p (1 = off)",
        0.05,
        1.0,
        1.0,
        0.05,
        key="causal_topp",
        help="Keep the fewest most likely tokens whose probabilities add up to p.",
    )
    bars = c4.slider("Bars", 5, 30, 10, key="causal_bars")
    return Sampling.of(temperature, top_k, top_p), bars


def current_settings() -> Sampling:
    """The sampling sliders' values as they are now (also when drawn in another fragment)."""
    state = st.session_state
    return Sampling.of(
        state.get("causal_temp", 1.0), state.get("causal_topk", 0), state.get("causal_topp", 1.0)
    )


def generation_for(prompt: list[int]) -> dict:
    """This session's generation ({"prompt", "steps"}); the page's frame drops it (its reset
    key "gen") when the sentence or the model changes, and a new one starts here."""
    if "gen" not in st.session_state:
        st.session_state["gen"] = {"prompt": list(prompt), "steps": []}
    return st.session_state["gen"]


def all_ids(gen: dict) -> list[int]:
    return gen["prompt"] + [s["id"] for s in gen["steps"]]


def ended(gen: dict, eos_id: int) -> bool:
    return bool(gen["steps"]) and gen["steps"][-1]["id"] == eos_id


def extend(gen: dict, n: int, seed: int, sampling: Sampling, name: str, device: str) -> None:
    """Append up to n sampled tokens (stopping at [EOS]); step i draws with (seed, i), as
    the model's own `generate` does."""
    vocab = cache.vocabulary(name, device)
    eos = cache.special_ids(name, device)["[EOS]"]
    for _ in range(n):
        if ended(gen, eos):
            return
        probs = cache.next_distribution(tuple(all_ids(gen)), name, device, sampling)
        pick = draw(probs, seed, len(gen["steps"]))
        gen["steps"].append(
            {
                "id": pick,
                "token": vocab[pick],
                "probability": float(probs[pick]),
                "temperature": sampling.temperature,
                "top_k": sampling.top_k,
                "top_p": sampling.top_p,
            }
        )
