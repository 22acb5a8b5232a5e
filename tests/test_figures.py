"""viz builds Plotly's figure JSON as plain dicts (viz._common.Figure) and writes it itself
(viz.to_json): every builder's figure is valid by Plotly's schema, and the app sends what
plotly.py would have sent for it."""

from __future__ import annotations

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest
from _plotly_utils.utils import to_typed_array_spec
from plotly.subplots import make_subplots

import viz
from tests.figures import (
    NOT_BUILDERS,
    builder_inputs,
    builders,
    decoded,
    every_figure,
    plotly_figure,
)
from viz._common import SIGNED_SCALE, WEIGHT_SCALE, panel_grid, typed_array, white

NAMES = list(every_figure())


@pytest.fixture(scope="module")
def figures() -> dict[str, viz.Figure]:
    return every_figure()


def test_every_builder_has_inputs_here() -> None:
    """A new builder (a public function of a viz module that returns a Figure) must be given
    inputs in tests/figures.py, so the checks below cover it."""
    found = builders()
    assert set(viz.__all__) - NOT_BUILDERS <= set(found)
    assert set(found) == set(builder_inputs()), set(found) ^ set(builder_inputs())


@pytest.mark.parametrize("name", NAMES)
def test_a_figure_is_plain_data_that_plotly_accepts(name: str, figures: dict) -> None:
    spec = figures[name]
    assert isinstance(spec, dict) and set(spec) == {"data", "layout"}
    assert all(isinstance(trace, dict) and trace.get("type") for trace in spec["data"])
    assert spec["layout"]["template"] == white()
    plotly_figure(spec)  # raises on any property Plotly does not know or accept


@pytest.mark.parametrize("name", NAMES)
def test_the_app_sends_what_plotly_would_send(name: str, figures: dict) -> None:
    spec = figures[name]
    ours = json.loads(viz.to_json(spec))
    theirs = json.loads(plotly_figure(spec).to_json())
    assert decoded(ours) == decoded(theirs)
    # the same typed arrays, not only the same numbers
    for mine, plotly in zip(ours["data"], theirs["data"], strict=True):
        for key, value in plotly.items():
            if isinstance(value, dict) and "bdata" in value:
                assert mine[key] == value, (name, key)


def test_the_colour_scales_are_plotly_pys_named_ones() -> None:
    """Plotly.js has scales of the same names that differ: the figures carry plotly.py's."""
    assert go.Heatmap(colorscale="Blues").colorscale == tuple(map(tuple, WEIGHT_SCALE))
    assert go.Heatmap(colorscale="RdBu_r").colorscale == tuple(map(tuple, SIGNED_SCALE))


def test_the_template_is_written_as_plotly_writes_it() -> None:
    template = white()
    assert go.layout.Template(template).to_plotly_json() == template
    assert template["layout"]["xaxis"] is not white()["layout"]["xaxis"]  # each its own


@pytest.mark.parametrize("rows, cols, h, v", [(2, 3, 0.02, 0.08), (1, 1, 0.02, 0.9),
                                              (4, 2, 0.02, 0.05)])  # fmt: skip
def test_a_grid_of_panels_is_laid_out_as_plotly_lays_out_subplots(rows, cols, h, v) -> None:
    titles = [f"L{r} H{c}" for r in range(rows) for c in range(cols)]
    plotly = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=h,
                           vertical_spacing=v).layout.to_plotly_json()  # fmt: skip
    plotly.pop("template", None)  # plotly.io's default template: not part of the grid
    ours = panel_grid(rows, cols, h, v, titles)
    assert ours["annotations"] == [dict(a) for a in plotly.pop("annotations")]
    assert {k: v for k, v in ours.items() if k != "annotations"} == plotly


# --- viz.to_json -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "array",
    [
        np.arange(6, dtype=np.int64),  # narrowed to int8
        np.array([0, 300, -5]),  # int16
        np.array([0, 2**20]),  # int32
        np.array([0, 2**40]),  # too big: a list
        np.arange(4, dtype=np.uint64),
        np.array([1.5, np.nan, -np.inf]),
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.arange(24.0).reshape(2, 3, 4),
        np.arange(12.0).reshape(3, 4)[:, 1:3],  # not contiguous
        np.array([True, False]),
        np.array(["a", "b"], dtype=object),
        np.array(["a", "b"]),
        np.zeros((0,)),
    ],
    ids=lambda a: f"{a.dtype}{list(a.shape)}",
)
def test_arrays_are_written_as_plotly_writes_them(array: np.ndarray) -> None:
    expected = to_typed_array_spec(array)
    if isinstance(expected, np.ndarray):
        expected = expected.tolist()
    assert typed_array(array) == expected
    spec = {"data": [{"type": "scatter", "y": array}]}
    assert json.loads(viz.to_json(spec))["data"] == json.loads(go.Figure(spec).to_json())["data"]


def test_the_json_is_compact_strict_and_safe_in_html() -> None:
    spec = {
        "data": [{
            "type": "scatter", "x": [np.float64("nan"), np.int64(3), np.float32(0.5)],
            "y": [[float("inf"), 1.0], np.array([1.0, 2.0])], "text": ["</script>", "NaN"],
            "customdata": np.array([[1, "a"], [math.nan, "b"]], dtype=object),
        }],
        "layout": {"xaxis": {"range": np.array([0.0, 1.0])}, "height": np.int64(300)},
    }  # fmt: skip
    text = viz.to_json(spec)
    assert " " not in text and "NaN," not in text and "Infinity" not in text
    assert "<" not in text and ">" not in text and "/" not in text
    data = json.loads(text)
    assert data["data"][0]["x"] == [None, 3, 0.5]
    assert data["data"][0]["y"] == [[None, 1.0], [1.0, 2.0]]  # an array in a list: a list
    assert data["data"][0]["text"] == ["</script>", "NaN"]
    assert data["data"][0]["customdata"] == [[1, "a"], [None, "b"]]
    assert data["layout"] == {"xaxis": {"range": [0.0, 1.0]}, "height": 300}
    plotly = json.loads(go.Figure(spec).to_json())
    assert data["data"] == plotly["data"]
    assert data["layout"].items() <= plotly["layout"].items()  # (plotly adds its template)


def test_to_json_leaves_the_figure_as_it_was() -> None:
    z = np.arange(4.0).reshape(2, 2)
    spec = {"data": [{"type": "heatmap", "z": z}], "layout": {"height": 300}}
    viz.to_json(spec)
    assert spec["data"][0]["z"] is z and spec["layout"] == {"height": 300}


def test_the_class_bars_are_top_k_bars_named_for_the_class() -> None:
    """ui.lecture.classroom.class_bars edits a viz figure (its x axis title) as a dict."""
    from ui.lecture.classroom import class_bars

    spec = class_bars([("river", 0.6), ("<b>cash</b>", 0.4)], "t")
    fig = plotly_figure(spec)
    assert fig.layout.xaxis.title.text == "share of the class"
    assert fig.layout.xaxis.tickformat == ".0%"  # the rest of topk_bar's axis kept
    assert decoded(json.loads(viz.to_json(spec))) == decoded(json.loads(fig.to_json()))
