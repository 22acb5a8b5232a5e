"""The Positional page's word-order demo through AppTest (issue 12): a repeated word gets a
row per occurrence, and the caption says only what the shipped model's numbers show."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import analysis

ROOT = Path(__file__).resolve().parent.parent


def positional(model_name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "positional.py"), default_timeout=180)
    at.session_state["sentence"] = "the dog bit the man"
    at.session_state["model"] = model_name
    at.session_state["positional_section"] = "order"  # the demo's tab: drawn only when open
    return at.run()


def test_word_pairs_pair_each_occurrence() -> None:
    a = ["[BOS]", "the", "dog", "bit", "the", "man", "[EOS]"]
    b = ["[BOS]", "the", "man", "bit", "the", "dog", "[EOS]"]
    assert analysis.word_pairs(a, b) == [
        ("the", 1, 1), ("dog", 2, 5), ("bit", 3, 3), ("the", 4, 4), ("man", 5, 2),
    ]  # fmt: skip
    assert analysis.word_pairs(["the", "the", "cat"], ["the", "dog"]) == [("the", 0, 0)]


@pytest.mark.parametrize("model_name", ["mlm", "clm"])
def test_the_order_demo_has_a_row_per_occurrence_and_a_true_caption(model_name: str) -> None:
    at = positional(model_name)
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    words = list(table.iloc[:, 0])
    assert words.count("the") == 2, words  # "the dog bit the man": both "the"
    off = list(table["cosine without positions"])
    text = " ".join(c.value for c in at.caption if "Each row pairs" in c.value)
    assert text, [c.value for c in at.caption]
    # The demo runs on an encoder, which without positions cannot tell the orders apart:
    assert min(off) >= 0.9999, off
    assert f"every cosine {min(off):.4f}" in text
    if model_name == "clm":  # the page's model is causal: the caption says why it switched
        assert "mlm" in text and "causal" in text
    assert "(cosine 1)" not in text
