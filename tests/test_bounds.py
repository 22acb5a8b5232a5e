"""Bounded work for any input (issue 14): a visitor must not be able to hold the server.
Each text page gets the worst inputs (300 [MASK] tokens, a 60,000-character sentence,
3,000 emoji, a 256-token sentence) and the work it does is counted, not timed: forward
passes of the model, charts drawn, numbers sent to the browser, on its first view and on
each of its section tabs. bench/bench_hostile.py
times the same inputs."""

from __future__ import annotations

import json

import pytest
import streamlit as st

from model.lm import TransformerLM
from tests.charts import charts as drawn_charts
from tests.test_app import assert_ok, page
from ui.show import section_ids, section_key

HOSTILE = {
    "300 masks": " ".join(["[MASK]"] * 300),
    "60k characters": ("the dog bit the man " * 3000)[:60000],
    "3000 emoji": "😀" * 3000,
    "256 tokens": " ".join(["the dog bit the man and"] * 60),
}
TEXT_PAGES = ["tokens", "positional", "attention", "masked", "causal"]
MAX_FORWARD = 6  # forward passes on a page's first run (trace, masked trace, predictions...)
MAX_CHARTS = 16
MAX_NUMBERS = 100_000  # numbers in all the figures of one page together


def numbers_in(spec: dict) -> int:
    """How many numbers a figure sends: its traces' z, x and y arrays."""
    total = 0
    for trace in spec["data"]:
        for name in ("z", "x", "y"):
            value = trace.get(name)
            if isinstance(value, dict) and "shape" in value:  # a typed array
                size = 1
                for n in str(value["shape"]).split(","):
                    size *= int(n)
                total += size
            elif isinstance(value, list):
                total += len(json.dumps(value).split(","))
    return total


@pytest.fixture
def forward_passes(monkeypatch) -> list[int]:
    """Counts TransformerLM.forward calls (every trace, fill-mask and next-token pass)."""
    calls: list[int] = []
    original = TransformerLM.forward

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TransformerLM, "forward", counted)
    st.cache_data.clear()
    return calls


@pytest.mark.parametrize("label", list(HOSTILE))
@pytest.mark.parametrize("name", TEXT_PAGES)
def test_a_page_bounds_its_work_whatever_the_input(name: str, label: str,
                                                    forward_passes: list[int]) -> None:  # fmt: skip
    at = page(name, HOSTILE[label])
    for tab in [None, *section_ids(name)[1:]]:  # the first view, then every other section tab
        if tab is not None:
            forward_passes.clear()
            at.session_state[section_key(name)] = tab
            at.run()
        assert_ok(at)
        charts = drawn_charts(at)
        assert len(forward_passes) <= MAX_FORWARD, f"{tab}: {len(forward_passes)} forward passes"
        assert len(charts) <= MAX_CHARTS, f"{tab}: {len(charts)} charts"
        sent = sum(numbers_in(c.figure) for c in charts)
        assert sent <= MAX_NUMBERS, f"{tab}: {sent:,} numbers sent to the browser"


def test_300_masks_are_all_predicted_but_six_drawn() -> None:
    at = page("masked", HOSTILE["300 masks"])
    assert_ok(at)
    keys = [c.key for c in drawn_charts(at)]
    assert sum(k.startswith("mask_topk_") for k in keys) == 6
    assert any("more masks, first guesses" in c.value for c in at.caption)
    at.session_state["masked_section"] = "looked"
    assert_ok(at.run())
    keys = [c.key for c in drawn_charts(at)]
    assert sum(k.startswith("mask_row_") for k in keys) == 6
