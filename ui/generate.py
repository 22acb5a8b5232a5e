"""The causal page's sampling controls and its click-by-click generation state."""

from __future__ import annotations

import streamlit as st

from ui import cache, numbers

Settings = tuple[float, int | None, float | None]  # temperature, top-k, top-p


def sampling_controls() -> tuple[Settings, int]:
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
    return numbers.sampling(temperature, top_k, top_p), bars


def current_settings() -> Settings:
    """The sampling sliders' values as they are now (also when drawn in another fragment)."""
    state = st.session_state
    return numbers.sampling(
        state.get("causal_temp", 1.0), state.get("causal_topk", 0), state.get("causal_topp", 1.0)
    )


def generation_for(prompt: list[int]) -> dict:
    """This session's generation for `prompt` ({"prompt", "steps"}); a new prompt starts over."""
    gen = st.session_state.get("gen")
    if not gen or gen["prompt"] != prompt:
        gen = st.session_state["gen"] = {"prompt": list(prompt), "steps": []}
    return gen


def all_ids(gen: dict) -> list[int]:
    return gen["prompt"] + [s["id"] for s in gen["steps"]]


def ended(gen: dict, eos_id: int) -> bool:
    return bool(gen["steps"]) and gen["steps"][-1]["id"] == eos_id


def extend(gen: dict, n: int, seed: int, settings: Settings, name: str, device: str) -> None:
    """Append up to n sampled tokens (stopping at [EOS]); step i draws with (seed, i)."""
    vocab = cache.vocabulary(name, device)
    eos = cache.special_ids(name, device)["[EOS]"]
    for _ in range(n):
        if ended(gen, eos):
            return
        probs = cache.next_distribution(tuple(all_ids(gen)), name, device, *settings)
        pick = numbers.sample(probs, seed, len(gen["steps"]))
        gen["steps"].append(
            {
                "id": pick,
                "token": vocab[pick],
                "probability": float(probs[pick]),
                "temperature": settings[0],
                "top_k": settings[1],
                "top_p": settings[2],
            }
        )
