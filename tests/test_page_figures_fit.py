"""The pages' figures through AppTest (issue 12): numbers in cells only where they fit, the
sinusoid waves as continuous curves through the integer positions."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.charts import figures

ROOT = Path(__file__).resolve().parent.parent


def charts(name: str, sentence: str, model_name: str = "mlm", **state: object) -> dict[str, dict]:
    """The page's charts by widget key; `state` opens a section tab (positional_section=...)."""
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=180)
    at.session_state["sentence"] = sentence
    at.session_state["model"] = model_name
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return figures(at)


# Plot areas measured in Chromium at 1280x720 (the charts' .nsewdrag boxes), in px.
PLOT_PX = {"tok_cosine": 169, "pos_dot": 104, "causal_attention": 217}


def _cells_fit(fig: dict, plot_px: float) -> bool:
    """Every heatmap with numbers in its cells draws them at a size that fits a cell of a
    plot area `plot_px` wide."""
    for trace in fig["data"]:
        if trace.get("type") != "heatmap" or not trace.get("texttemplate"):
            continue
        text = trace["text"]
        cols = len(text[0])
        longest = max(len(str(v)) for row in text for v in row)
        if longest * trace["textfont"]["size"] * 0.6 > plot_px / cols:
            return False
    return True


@pytest.mark.parametrize(
    "page, widget, sentence, model_name",
    [
        # the cosine matrix at 12 tokens
        ("tokens", "tok_cosine", "the cat sat on the mat and the dog sat", "mlm"),
        # the dot product between positions at 7 tokens
        ("positional", "pos_dot", "the dog bit the man", "mlm"),
        # the causal page's attention ("1.000.000.00")
        ("causal", "causal_attention", "the dog bit the man and the", "clm"),
    ],
)
def test_numbers_in_cells_only_where_they_fit(
    page: str, widget: str, sentence: str, model_name: str
) -> None:
    tab = {"pos_dot": {"positional_section": "sinusoidal"}}.get(widget, {})
    fig = charts(page, sentence, model_name, **tab)[widget]
    assert _cells_fit(fig, PLOT_PX[widget]), widget
    assert all(trace.get("customdata") is not None for trace in fig["data"])  # on hover


def test_the_waves_are_continuous_curves_through_the_positions() -> None:
    fig = charts("positional", "the dog bit the man", positional_section="sinusoidal")["pos_waves"]
    lines = [t for t in fig["data"] if t.get("mode") == "lines"]
    dots = [t for t in fig["data"] if t.get("mode") == "markers"]
    assert lines and len(lines) == len(dots)

    def n(values: list | dict) -> int:
        if isinstance(values, list):
            return len(values)
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).size

    for line, dot in zip(lines, dots, strict=True):
        assert n(line["x"]) >= 8 * n(dot["x"]), "many points between two positions"
