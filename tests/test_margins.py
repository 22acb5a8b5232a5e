"""Margins estimated before drawing (viz.margins): room for the labels and the colour bar,
so Plotly draws a chart once instead of twice. The browser side (the drawn margins equal
the estimated ones) is checked in tests/e2e/test_pages.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import viz
from tests.figures import plotly_figure
from viz import margins
from viz._common import MARGIN

WEIGHTS = np.full((3, 3), 1 / 3)


def test_text_width_grows_with_the_text_and_counts_wide_characters_wider() -> None:
    assert margins.text_px("teacher", 12) > margins.text_px("the", 12) > 0
    assert margins.text_px("학교", 12) > margins.text_px("ab", 12)
    assert margins.text_px("😀", 12) > margins.text_px("a", 12)
    # Labels reach figures HTML-escaped: "&lt;" is drawn as one character.
    assert margins.text_px("&lt;", 12) == margins.text_px("<", 12)
    assert margins.text_px("x", 24) == 2 * margins.text_px("x", 12)


def test_a_heatmap_gets_room_for_its_labels_titles_and_colour_bar() -> None:
    fig = plotly_figure(viz.attention_heatmap(WEIGHTS, ["a", "b", "c"]))
    m = fig.layout.margin
    assert m.t == MARGIN["t"]  # the title's room is fixed, not estimated
    assert m.l > MARGIN["l"] and m.b > MARGIN["b"]  # tick labels and the axis titles
    assert m.r > MARGIN["r"]  # the colour bar
    # Longer labels, more room on both token axes; the colour bar's room stays.
    long = plotly_figure(viz.attention_heatmap(WEIGHTS, ["a", "b", "extraordinarily"]))
    assert long.layout.margin.l > m.l
    assert long.layout.margin.b > m.b
    assert long.layout.margin.r == m.r


def test_labels_are_measured_in_their_own_font_and_rotation() -> None:
    axis = {"tickmode": "array", "ticktext": ["river", "bank"], "tickfont": {"size": 12}}
    flat = margins.axis_room(axis, 14, horizontal_labels=False)
    steep = margins.axis_room({**axis, "tickangle": -60}, 14, horizontal_labels=False)
    across = margins.axis_room(axis, 14, horizontal_labels=True)
    assert flat < steep  # standing up (rotated), a label needs more room than lying flat
    assert flat < across  # a y axis's labels are laid across its room
    bigger = margins.axis_room({**axis, "tickfont": {"size": 24}}, 14, horizontal_labels=True)
    assert bigger > across
    titled = margins.axis_room({**axis, "title": {"text": "key"}}, 14, horizontal_labels=True)
    assert titled > across
    assert margins.axis_room({**axis, "visible": False}, 14, horizontal_labels=True) == 0


def test_a_colour_bar_title_wider_than_the_bar_takes_more_room() -> None:
    plain = margins.colorbar_room({"thickness": 14}, 14)
    assert margins.colorbar_room({"thickness": 14, "title": {"text": "w"}}, 14) == plain
    wide = margins.colorbar_room({"thickness": 14, "title": {"text": "probability"}}, 14)
    assert wide > plain


def test_charts_it_cannot_estimate_keep_their_margins() -> None:
    two = [{"type": "scatter", "y": [1, 2], "name": n} for n in ("a", "b")]
    assert margins.estimate({}, two) is None  # a legend
    right = {"yaxis": {"side": "right"}, "margin": MARGIN}
    assert margins.estimate(right, []) is None
    overlaid = {"yaxis": {}, "yaxis2": {"overlaying": "y"}, "margin": MARGIN}
    assert margins.estimate(overlaid, []) is None
    below = {"type": "heatmap", "z": [[0.0]], "colorbar": {"orientation": "h", "y": -0.3}}
    assert margins.estimate({"margin": MARGIN}, [below]) is None


def test_in_a_grid_only_the_bottom_row_and_first_column_take_margin_room() -> None:
    labels = {"tickmode": "array", "ticktext": ["extraordinarily"], "tickangle": -90}
    short = {"tickmode": "array", "ticktext": ["a"]}
    layout = {
        "margin": MARGIN,
        "xaxis": {**short, "anchor": "y", "domain": [0, 0.5]},  # top left: its labels
        "xaxis2": {**labels, "anchor": "y2", "domain": [0.5, 1]},  # top right  sit between
        "yaxis": {**short, "anchor": "x", "domain": [0.5, 1]},  # rows, not in the margin
        "yaxis2": {**labels, "anchor": "x2", "domain": [0.5, 1]},
        "xaxis3": {**short, "anchor": "y3", "domain": [0, 0.5]},  # bottom left
        "yaxis3": {**short, "anchor": "x3", "domain": [0, 0.5]},
    }
    bottom = margins.edge_axes(layout, "x")
    left = margins.edge_axes(layout, "y")
    assert bottom == [layout["xaxis3"]] and left == [layout["yaxis"], layout["yaxis3"]]
    narrow = margins.estimate(layout, [])
    layout["xaxis3"] = {**labels, "anchor": "y3", "domain": [0, 0.5]}
    assert margins.estimate(layout, [])["b"] > narrow["b"]
    # The three-panel input figure: the shared token axis on the left, one colour bar.
    rng = np.random.default_rng(0)
    fig = plotly_figure(viz.embedding_plus_position(
        rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), ["a", "b", "extraordinarily"]
    ))  # fmt: skip
    assert fig.layout.margin.l > margins.text_px("extraordinarily", 14) * 0.8
    assert fig.layout.margin.r > MARGIN["r"] and fig.layout.margin.b > MARGIN["b"]


def test_the_estimate_never_shrinks_the_margins_given() -> None:
    layout = {
        "margin": {"l": 300, "r": 300, "t": 60, "b": 300},
        "yaxis": {"tickmode": "array", "ticktext": ["a"]},
    }
    heat = {"type": "heatmap", "z": [[0.0]]}
    assert margins.estimate(layout, [heat]) == layout["margin"]


def test_a_zoomed_figure_has_room_for_its_larger_labels() -> None:
    """A window of a long sentence draws its labels in a larger font (viz.zoom): the
    margins grow with them, so estimating again asks for nothing more."""
    n = 200
    tokens = [f"token{i}" for i in range(n)]
    full = plotly_figure(viz.attention_heatmap(np.full((n, n), 1 / n), tokens))
    spec = viz.zoom(viz.attention_heatmap(np.full((n, n), 1 / n), tokens), (0, 31))
    zoomed = plotly_figure(spec)
    assert zoomed.layout.yaxis.tickfont.size > full.layout.yaxis.tickfont.size
    assert zoomed.layout.margin.l > full.layout.margin.l
    again = margins.estimate(spec["layout"], spec["data"])
    assert again == zoomed.layout.margin.to_plotly_json()


def test_a_title_given_as_plain_text_is_measured() -> None:
    axis = {"tickmode": "array", "ticktext": ["a"]}
    plain = margins.axis_room({**axis, "title": "key"}, 14, horizontal_labels=True)
    assert plain == margins.axis_room({**axis, "title": {"text": "key"}}, 14, True)
    assert plain > margins.axis_room(axis, 14, horizontal_labels=True)


def test_a_row_of_panels_is_laid_out_as_plotly_lays_out_subplots() -> None:
    """viz._common.panel_row stands in for make_subplots(rows=1, shared_yaxes=True): the
    same domains, shared y axes and panel titles, compared with plotly's own layout."""
    from plotly.subplots import make_subplots

    from viz._common import panel_row

    for widths, gap in (([0.75, 0.25], 0.03), ([1, 1, 1], 0.06)):
        titles = [f"panel {i}" for i in range(len(widths))]
        plotly = make_subplots(
            rows=1, cols=len(widths), shared_yaxes=True, column_widths=list(widths),
            horizontal_spacing=gap, subplot_titles=titles,
        ).layout.to_plotly_json()  # fmt: skip
        ours = panel_row(widths, gap, titles)
        for key in [k for k in plotly if k[1:5] == "axis"]:
            np.testing.assert_allclose(ours[key]["domain"], plotly[key]["domain"])
            assert ours[key]["anchor"] == plotly[key]["anchor"]
            assert ours[key].get("matches") == plotly[key].get("matches")
        assert [(a["text"], round(a["x"], 9)) for a in ours["annotations"]] == [
            (a["text"], round(a["x"], 9)) for a in plotly["annotations"]
        ]


def test_the_trajectory_keys_its_colours_between_its_panels_and_is_estimated() -> None:
    """The layer trajectory's colour bar stands between the heatmap and the cosine panel
    (in the plot area, so it needs no margin); its axes' room is estimated."""
    spec = viz.layer_trajectory(np.ones((3, 8)), "bank", np.ones(3))
    fig = plotly_figure(spec)
    bar = fig.data[0].colorbar
    assert fig.layout.xaxis.domain[1] < bar.x < fig.layout.xaxis2.domain[0]
    assert bar.xanchor == "left"
    assert fig.layout.margin.l > MARGIN["l"] and fig.layout.margin.b > MARGIN["b"]
    # Right of the cosine panel: room for its last x label only, none for a colour bar.
    label = margins.overhang_room(fig.layout.xaxis2.to_plotly_json(), 14, "r")
    assert fig.layout.margin.r == math.ceil(label + margins.EXTRA_PX)
    again = margins.estimate(spec["layout"], spec["data"])
    assert again == fig.layout.margin.to_plotly_json()


def _scatter_with_legend(names: list[str], y: float = -0.15, **legend: object) -> viz.Figure:
    fig = {
        "data": [{"type": "scatter", "x": [0, 1], "y": [0, 1], "name": name} for name in names],
        "layout": {
            "height": 500, "margin": {"l": 10, "r": 10, "t": 60, "b": 10}, "showlegend": True,
            "legend": {"orientation": "h", "y": y, **legend},
        },
    }  # fmt: skip
    plotly_figure(fig)  # valid by Plotly's schema
    return fig


def test_a_legend_below_the_plot_gets_the_room_plotly_hangs_it_in() -> None:
    """b = (G + |y| (H - t)) / (1 + |y|): Plotly hangs the legend |y| plot heights below the
    plot. One row of two short names (G = 42 px at 14 px): 94 px, as Chromium drew it."""
    short = _scatter_with_legend(["sentence", "neighbour"])
    assert margins.legend_room(short["layout"], short["data"], 14) == pytest.approx(
        93.9, abs=0.5
    )
    # Names too long for one row stand in columns as wide as the widest: three rows here,
    # each 21 px more legend (18 px more margin, the plot shrinking with it).
    names = ["sentence", "selected: bank", "nearest to bank in the vocabulary"]
    long = _scatter_with_legend(names)
    room = margins.legend_room(long["layout"], long["data"], 14)
    assert room == pytest.approx(93.9 + 2 * 21 / 1.15, abs=0.5)
    # Hung lower, more room; a legend above or beside the plot is not estimated.
    lower = _scatter_with_legend(["sentence", "neighbour"], y=-0.3)
    assert margins.legend_room(lower["layout"], lower["data"], 14) > 94
    above = _scatter_with_legend(["sentence", "neighbour"], y=1.1)
    assert margins.legend_room(above["layout"], above["data"], 14) is None
    assert margins.estimate(above["layout"], above["data"]) is None


def test_the_embedding_map_is_estimated_with_its_legend() -> None:
    spec = viz.embedding_map(np.eye(3)[:, :2], ["a", "b", "c"], ["sentence", "x", "sentence"])
    fig = plotly_figure(spec)
    need = margins.legend_room(spec["layout"], spec["data"], 14)
    assert fig.layout.margin.b >= need + margins.EXTRA_PX
    assert fig.layout.margin.l > MARGIN["l"]  # the y axis title and labels, estimated too


def test_x_labels_reaching_past_the_plot_get_room_beside_it() -> None:
    """A chart with no y labels still needs room for its first slanted x label (which ends
    at its tick), and an upright label centred on the last tick reaches past the right."""
    axis = {"tickmode": "array", "ticktext": ["patch 0,0", "b"], "tickangle": -45}
    first = margins.text_px("patch 0,0", 14)
    assert margins.overhang_room(axis, 14, "l") > first * 0.7
    assert margins.overhang_room(axis, 14, "r") == 0.0
    steep = {**axis, "tickangle": -90}
    assert margins.overhang_room(steep, 14, "l") == pytest.approx(margins.LABEL_PAD)
    upright = {**axis, "tickangle": 0}
    assert margins.overhang_room(upright, 14, "r") == pytest.approx(first / 2 + margins.LABEL_PAD)
    numbers = margins.overhang_room({}, 14, "r")  # a plain numeric axis: "−0.5" at most
    assert numbers == pytest.approx(margins.text_px(margins.NUMBER, 14) / 2 + margins.LABEL_PAD)


def test_short_labels_too_wide_for_a_narrow_plot_are_slanted_before_drawing() -> None:
    """Left to Plotly, labels that overlap are slanted after a first draw (a second draw
    with more room); token_axis slants them itself when they would not fit a narrow plot."""
    from viz._common import token_axis

    assert token_axis(["[BOS]", "the", "cat", "[EOS]"]).get("tickangle") is None
    assert token_axis(["[BOS]", "i", "go", "to", "school", "[EOS]"])["tickangle"] == -30
    assert token_axis(["[BOS]"] * 9)["tickangle"] == -60
    assert "tickangle" not in token_axis(["[BOS]", "i", "go", "to", "school"], vertical=True)
