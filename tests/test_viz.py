"""Tests for viz: pure Plotly figure builders (no Streamlit, no torch, no model), their
dict figures read back through tests.figures.plotly_figure (validated by Plotly)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import viz
from analysis import pca_2d
from model import additive_mask, causal_mask
from tests.figures import plotly_figure
from viz._common import MAX_HEIGHT, MIN_HEIGHT

ROOT = Path(__file__).resolve().parents[1]
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]  # "the" twice: two separate ticks
T = len(TOKENS)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def attention_weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Random rows that sum to 1, like a softmax."""
    w = rng.random(shape)
    return w / w.sum(axis=-1, keepdims=True)


def assert_token_axis(axis: go.layout.XAxis | go.layout.YAxis, tokens: list[str]) -> None:
    """Integer positions 0..n-1 as tick values, the tokens as tick text."""
    assert list(axis.tickvals) == list(range(len(tokens)))
    assert all(isinstance(v, int) for v in axis.tickvals)
    assert list(axis.ticktext) == tokens
    assert axis.type in (None, "linear", "-")  # never a categorical axis


def heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [trace for trace in fig.data if isinstance(trace, go.Heatmap)]


# --- shared behaviour -------------------------------------------------------------------


def test_importing_viz_pulls_in_no_streamlit_torch_or_model() -> None:
    code = (
        "import sys, viz; "
        "print(sorted(m for m in ('streamlit', 'torch', 'model') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_every_builder_is_exported() -> None:
    for name in viz.__all__:
        assert callable(getattr(viz, name))


def test_script_token_is_escaped_in_tick_labels_and_hover(rng: np.random.Generator) -> None:
    tokens = ["hi", "<script>", "a&b"]
    spec = viz.attention_heatmap(attention_weights(rng, 3, 3), tokens)
    fig = plotly_figure(spec)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert list(axis.ticktext) == ["hi", "&lt;script&gt;", "a&amp;b"]
        assert not any("<script>" in text for text in axis.ticktext)
    assert "<script>" not in viz.to_json(spec)
    # the template itself is ours: no token is ever formatted into it
    assert "script" not in fig.data[0].hovertemplate


def test_long_heatmap_height_is_capped_and_short_one_is_small(rng: np.random.Generator) -> None:
    long_tokens = [f"t{i}" for i in range(256)]
    long_fig = plotly_figure(viz.attention_heatmap(attention_weights(rng, 256, 256), long_tokens))
    assert MIN_HEIGHT <= long_fig.layout.height <= MAX_HEIGHT
    assert long_fig.layout.yaxis.tickfont.size < 14
    short_fig = plotly_figure(viz.attention_heatmap(attention_weights(rng, 3, 3), ["a", "b", "c"]))
    assert short_fig.layout.height < long_fig.layout.height
    assert short_fig.layout.height <= 400
    assert short_fig.layout.title.font.size >= 14


def test_figures_serialise_to_json(rng: np.random.Generator) -> None:
    scores = rng.normal(size=(T, T)) + additive_mask(causal_mask(T))
    for spec in (
        viz.matrix_heatmap(scores, TOKENS, TOKENS, title="scores"),
        viz.causal_mask_figure(additive_mask(causal_mask(T)), TOKENS),
        viz.attention_grid(attention_weights(rng, 2, 2, T, T), TOKENS),
    ):
        plotly_figure(spec)
        json.loads(viz.to_json(spec))  # JSON has no inf: masked cells must not break it


# --- tokens -----------------------------------------------------------------------------


def test_token_strip_shows_each_token_and_id() -> None:
    ids = np.array([5, 17, 99, 3, 5, 40])
    spec = viz.token_strip(TOKENS, ids, highlight=[2])
    assert isinstance(spec, dict) and set(spec) == {"data", "layout"}  # Plotly's figure JSON
    fig = plotly_figure(spec)
    assert len(fig.layout.shapes) == T  # one chip per token, repeated "the" included
    token_trace, id_trace = fig.data
    assert list(token_trace.text) == TOKENS
    assert list(id_trace.text) == [str(i) for i in ids]
    assert [list(row) for row in token_trace.customdata][4] == [4, "the", 5]
    assert fig.layout.shapes[2].fillcolor != fig.layout.shapes[0].fillcolor


def test_token_strip_wraps_long_sentences() -> None:
    tokens = [f"word{i}" for i in range(60)]
    fig = plotly_figure(viz.token_strip(tokens, list(range(60))))
    assert len({round(y, 3) for y in fig.data[0].y}) > 1
    assert fig.layout.height <= MAX_HEIGHT


def test_token_strip_rejects_mismatched_ids() -> None:
    with pytest.raises(ValueError):
        viz.token_strip(TOKENS, [1, 2])


# --- matrices and embeddings ------------------------------------------------------------


def test_matrix_heatmap_rows_are_tokens_columns_are_dimensions(rng: np.random.Generator) -> None:
    values = rng.normal(size=(T, 20))
    fig = plotly_figure(viz.matrix_heatmap(values, TOKENS, title="token embeddings"))
    (trace,) = heatmaps(fig)
    np.testing.assert_array_equal(trace.z, values)
    assert_token_axis(fig.layout.yaxis, TOKENS)
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.xaxis.tickvals is None  # plain dimension numbers
    assert list(trace.x) == list(range(20))
    assert trace.zmid == 0 and trace.colorscale is not None
    assert trace.text is None  # 6 x 20 is too big for numbers in the cells
    cells = np.asarray(trace.customdata, dtype=object)  # row labels: the hover says %{x}
    assert cells[4, 3, 0] == "the" and cells.shape == (T, 20, 1)
    assert "%{z:.3f}" in trace.hovertemplate  # every value finite: the hover reads z


def test_matrix_heatmap_small_prints_numbers_and_masks_infinity(rng: np.random.Generator) -> None:
    scores = rng.normal(size=(3, 3)) + additive_mask(causal_mask(3))
    fig = plotly_figure(
        viz.matrix_heatmap(scores, ["a", "b", "c"], ["a", "b", "c"], hover_fmt=".2f")
    )
    (trace,) = heatmaps(fig)
    assert trace.text is not None
    assert trace.text[0, 2] == "-∞"
    assert np.isnan(trace.z[0, 2]) and trace.z[1, 0] == scores[1, 0]
    assert_token_axis(fig.layout.xaxis, ["a", "b", "c"])
    assert fig.layout.plot_bgcolor is not None  # masked cells show dark


def test_matrix_heatmap_unsigned_and_forced_text(rng: np.random.Generator) -> None:
    values = rng.random((20, 20))
    labels = [str(i) for i in range(20)]
    (trace,) = heatmaps(plotly_figure(viz.matrix_heatmap(values, labels, signed=False)))
    assert trace.zmid is None
    (trace,) = heatmaps(
        plotly_figure(viz.matrix_heatmap(values, labels, signed=False, text_auto=True))
    )
    assert trace.text is not None


def test_matrix_heatmap_rejects_wrong_labels(rng: np.random.Generator) -> None:
    with pytest.raises(ValueError):
        viz.matrix_heatmap(rng.normal(size=(3, 4)), ["a", "b"])


def test_similarity_heatmap(rng: np.random.Generator) -> None:
    vectors = rng.normal(size=(T, 8))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sim = unit @ unit.T
    fig = plotly_figure(viz.similarity_heatmap(sim, TOKENS, "cosine similarity"))
    (trace,) = heatmaps(fig)
    np.testing.assert_array_equal(trace.z, sim)
    assert (trace.zmin, trace.zmax, trace.zmid) == (-1, 1, 0)
    assert_token_axis(fig.layout.xaxis, TOKENS)
    assert_token_axis(fig.layout.yaxis, TOKENS)
    cells = np.asarray(trace.customdata, dtype=object)
    assert cells[0, 1, 0] == "the" and cells[0, 1, 1] == "cat"


def test_pca_2d_recovers_the_dominant_direction(rng: np.random.Generator) -> None:
    direction = rng.normal(size=10)
    direction /= np.linalg.norm(direction)
    t = rng.normal(size=50)
    X = np.outer(t, direction) + 3.0  # rank 1 after centring
    points = pca_2d(X)
    assert points.shape == (50, 2)
    np.testing.assert_allclose(np.abs(points[:, 0]), np.abs(t - t.mean()), atol=1e-9)
    np.testing.assert_allclose(points[:, 1], 0.0, atol=1e-9)
    np.testing.assert_array_equal(points, pca_2d(X))  # deterministic, sign included
    np.testing.assert_allclose(pca_2d(-X)[:, 0], -points[:, 0], atol=1e-9)  # same axis


def test_pca_2d_tiny_inputs() -> None:
    assert pca_2d(np.ones((1, 4))).shape == (1, 2)
    assert pca_2d(np.arange(6.0).reshape(3, 2)).shape == (3, 2)


def test_embedding_map_one_trace_per_group(rng: np.random.Generator) -> None:
    points = rng.normal(size=(5, 2))
    labels = ["bank", "river", "cash", "<b>", "shore"]
    groups = ["sentence", "sentence", "neighbour of 'bank'", "sentence", "neighbour of 'bank'"]
    fig = plotly_figure(viz.embedding_map(points, labels, groups, "bank and friends"))
    assert [trace.name for trace in fig.data] == ["sentence", "neighbour of 'bank'"]
    first = fig.data[0]
    np.testing.assert_array_equal(first.x, points[[0, 1, 3], 0])
    assert list(first.text) == ["bank", "river", "&lt;b&gt;"]


def test_layer_trajectory_rows_are_layers(rng: np.random.Generator) -> None:
    vectors = rng.normal(size=(4, 16))
    cosine = np.array([1.0, 0.9, 0.7, 0.6])
    fig = plotly_figure(viz.layer_trajectory(vectors, "bank", cosine))
    (trace,) = heatmaps(fig)
    np.testing.assert_array_equal(trace.z, vectors)
    assert list(fig.layout.yaxis.ticktext) == ["input", "layer 1", "layer 2", "layer 3"]
    line = next(t for t in fig.data if isinstance(t, go.Scatter))
    np.testing.assert_array_equal(line.x, cosine)
    assert "bank" in fig.layout.title.text


# --- positional encoding ----------------------------------------------------------------


def test_binary_table_shows_bits_as_text() -> None:
    bits = (np.arange(8)[:, None] >> np.arange(3)[::-1]) & 1
    fig = plotly_figure(viz.binary_table(bits, col_labels=["4", "2", "1"]))
    (trace,) = heatmaps(fig)
    np.testing.assert_array_equal(trace.z, bits)
    assert trace.text[5].tolist() == ["1", "0", "1"]
    assert list(fig.layout.xaxis.ticktext) == ["4", "2", "1"]
    assert fig.layout.yaxis.autorange == "reversed"


def test_sinusoidal_heatmap_and_waves(rng: np.random.Generator) -> None:
    pe = np.sin(rng.normal(size=(T, 8)))
    fig = plotly_figure(viz.sinusoidal_heatmap(pe, TOKENS))
    (trace,) = heatmaps(fig)
    np.testing.assert_array_equal(trace.z, pe)
    assert trace.zmid == 0
    assert list(fig.layout.yaxis.ticktext) == [f"{i} {tok}" for i, tok in enumerate(TOKENS)]

    waves = plotly_figure(viz.positional_waves(pe, [0, 3]))
    assert [trace.name for trace in waves.data] == ["dimension 0", "dimension 3"]
    np.testing.assert_array_equal(waves.data[1].y, pe[:, 3])
    with pytest.raises(ValueError):
        viz.positional_waves(pe, [8])


def test_embedding_plus_position(rng: np.random.Generator) -> None:
    emb, pos = rng.normal(size=(T, 8)), rng.normal(size=(T, 8))
    fig = plotly_figure(viz.embedding_plus_position(emb, pos, TOKENS))
    panels = heatmaps(fig)
    assert len(panels) == 3
    for trace, expected in zip(panels, (emb, pos, emb + pos), strict=True):
        np.testing.assert_array_equal(trace.z, expected)
        assert trace.coloraxis == "coloraxis"  # one shared colour scale
    assert fig.layout.coloraxis.cmid == 0
    texts = [a.text for a in fig.layout.annotations]
    assert "+" in texts and "=" in texts
    assert {"token embedding", "positional encoding", "input"} <= set(texts)
    assert_token_axis(fig.layout.yaxis, TOKENS)


# --- attention --------------------------------------------------------------------------


def test_attention_heatmap_data_axes_and_hover(rng: np.random.Generator) -> None:
    weights = attention_weights(rng, T, T)
    fig = plotly_figure(viz.attention_heatmap(weights, TOKENS, "layer 1, head 1"))
    (trace,) = heatmaps(fig)
    np.testing.assert_array_equal(trace.z, weights)
    assert (trace.zmin, trace.zmax) == (0, 1)
    assert_token_axis(fig.layout.xaxis, TOKENS)
    assert_token_axis(fig.layout.yaxis, TOKENS)
    assert fig.layout.yaxis.autorange == "reversed"
    # query row 1 ("cat"), key column 4 (the second "the")
    assert list(np.asarray(trace.customdata, dtype=object)[1, 4][:2]) == ["cat", "the"]
    assert "→" in trace.hovertemplate and "%{customdata[0]}" in trace.hovertemplate
    assert trace.text is not None  # 6 x 6: the weights are printed


def test_attention_heatmap_cross_attention_keys(rng: np.random.Generator) -> None:
    keys = ["I", "go", "to", "school"]
    weights = attention_weights(rng, 3, 4)
    fig = plotly_figure(viz.attention_heatmap(weights, ["나는", "학교에", "간다"], key_tokens=keys))
    assert_token_axis(fig.layout.xaxis, keys)
    assert_token_axis(fig.layout.yaxis, ["나는", "학교에", "간다"])
    assert list(np.asarray(fig.data[0].customdata, dtype=object)[2, 3][:2]) == ["간다", "school"]
    with pytest.raises(ValueError):
        viz.attention_heatmap(weights, ["a", "b", "c"])


def test_attention_grid_has_a_panel_per_layer_and_head(rng: np.random.Generator) -> None:
    weights = attention_weights(rng, 2, 3, T, T)
    fig = plotly_figure(viz.attention_grid(weights, TOKENS))
    panels = heatmaps(fig)
    assert len(panels) == 2 * 3
    np.testing.assert_array_equal(panels[4].z, weights[1, 1])  # L2 H2
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:3] == ["L1 H1", "L1 H2", "L1 H3"] and titles[-1] == "L2 H3"
    assert {trace.coloraxis for trace in panels} == {"coloraxis"}
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert list(np.asarray(panels[0].customdata, dtype=object)[0, 1][:2]) == ["the", "cat"]
    assert fig.layout.height <= MAX_HEIGHT


def test_attention_row_bars_over_the_keys(rng: np.random.Generator) -> None:
    row = attention_weights(rng, T)
    fig = plotly_figure(viz.attention_row(row, TOKENS, "sat", query_index=2))
    (bar,) = fig.data
    assert isinstance(bar, go.Bar)
    np.testing.assert_array_equal(bar.y, row)
    assert_token_axis(fig.layout.xaxis, TOKENS)
    assert list(bar.customdata[3]) == ["sat (2)", "on"]
    assert bar.marker.color[2] != bar.marker.color[0]  # the query's own position stands out


def test_causal_mask_is_minus_infinity_exactly_above_the_diagonal() -> None:
    mask = additive_mask(causal_mask(T))
    above = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert np.all(np.isneginf(mask[above])) and np.all(mask[~above] == 0)

    fig = plotly_figure(viz.causal_mask_figure(additive_mask(causal_mask(T)), TOKENS))
    (trace,) = heatmaps(fig)
    assert fig.layout.title.text == "causal mask: -∞ above the diagonal"
    np.testing.assert_array_equal(np.asarray(trace.z) == 1, above)  # dark exactly above
    text = np.asarray(trace.text)
    assert np.all(text[above] == "-∞") and np.all(text[~above] == "0")
    assert np.all(np.asarray(trace.customdata, dtype=object)[:, :, 2][above] == "-∞")
    assert_token_axis(fig.layout.xaxis, TOKENS)
    assert_token_axis(fig.layout.yaxis, TOKENS)


# --- predictions and export -------------------------------------------------------------


def test_topk_bar_highest_on_top() -> None:
    candidates = [("shore", 0.2), ("bank", 0.5), ("side", 0.05), ("<b>x", 0.25)]
    fig = plotly_figure(viz.topk_bar(candidates, "what fills [MASK]?"))
    (bar,) = fig.data
    assert bar.orientation == "h"
    assert list(bar.x) == [0.5, 0.25, 0.2, 0.05]
    assert list(bar.text) == ["50.0%", "25.0%", "20.0%", "5.0%"]
    assert_token_axis(fig.layout.yaxis, ["bank", "&lt;b&gt;x", "shore", "side"])
    assert fig.layout.yaxis.autorange == "reversed"  # position 0 (the highest) on top


def test_distribution_bar_takes_the_top_k(rng: np.random.Generator) -> None:
    probs = rng.dirichlet(np.ones(30))
    labels = [f"tok{i}" for i in range(30)]
    fig = plotly_figure(viz.distribution_bar(probs, labels, k=5))
    expected = np.sort(probs)[::-1][:5]
    np.testing.assert_allclose(fig.data[0].x, expected)
    assert fig.layout.yaxis.ticktext[0] == labels[int(np.argmax(probs))]


def test_matrix_to_csv_round_trips_and_quotes() -> None:
    values = np.array([[0.5, -np.inf], [1.25, 2.0]])
    rows = ['say "hi"', "a,b"]
    text = viz.matrix_to_csv(values, rows, ["x", "=SUM(A1)"])
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["", "x", "'=SUM(A1)"]
    assert parsed[1] == ['say "hi"', "0.5", "-inf"]
    assert parsed[2] == ["a,b", "1.25", "2"]
    plain = list(csv.reader(io.StringIO(viz.matrix_to_csv(values, ["-", "+"]))))
    assert plain[0] == ["", "0", "1"] and [r[0] for r in plain[1:]] == ["-", "+"]


def test_accuracy_by_length_draws_one_line_per_model() -> None:
    spec = viz.accuracy_by_length(
        range(1, 9), {"translate": [1.0] * 8, "<b>lstm</b>": [1, 1, 0.9, 0.8, 0.6, 0.4, 0.2, None]}
    )
    fig = plotly_figure(spec)
    assert [t.name for t in fig.data] == ["translate", "&lt;b&gt;lstm&lt;/b&gt;"]
    assert list(fig.data[1].y)[-1] is None and list(fig.data[0].x) == list(range(1, 9))
    assert fig.layout.yaxis.tickformat == ".0%"
    json.loads(viz.to_json(spec))
    with pytest.raises(ValueError, match="lengths"):
        viz.accuracy_by_length([1, 2], {"m": [1.0]})


def test_the_widest_cells_decide_the_font_as_every_cell_would() -> None:
    """heatmap_trace formats every cell's number only when they are shown: whether they fit
    is decided from the widest texts alone (widest_cells), as it was from every cell's."""
    from viz._common import cell_text, cell_text_font, widest_cells

    rng = np.random.default_rng(0)
    for scale in (0.004, 0.3, 7.0, 120.0, 5000.0):
        for shape in ((3, 4), (8, 8), (12, 30), (20, 128)):
            values = rng.normal(0.0, scale, shape)
            values[0, 0] = -np.inf if scale < 1 else np.nan
            for fmt in (".2f", ".0f"):
                every = cell_text(values, fmt)
                widest = widest_cells(values, fmt)
                assert max(map(len, widest)) == max(len(t) for t in every.ravel())
                for auto in (None, True):
                    for px in (200.0, 600.0):
                        assert cell_text_font(shape, widest, auto, px) == cell_text_font(
                            shape, every, auto, px)


def test_enlarge_grows_text_margins_and_height_but_not_cell_numbers() -> None:
    """Presenter mode's charts (viz.zoom.enlarge): every font, margin and the height grow by
    the factor; numbers inside heatmap cells keep the size they were fitted to."""
    from viz.zoom import enlarge

    fig = viz.matrix_heatmap(np.eye(3), ["a", "b", "c"], ["a", "b", "c"], title="t",
                             text_auto=True)  # fmt: skip
    before = json.loads(json.dumps(fig, default=lambda a: np.asarray(a).tolist()))
    out = enlarge(fig, 1.25)
    layout, old = out["layout"], before["layout"]
    assert layout["font"]["size"] == round(old["font"]["size"] * 1.25, 1)
    assert layout["height"] == round(old["height"] * 1.25)
    for side in ("l", "r", "t", "b"):
        assert layout["margin"][side] == round(old["margin"][side] * 1.25)
    assert layout["title"]["font"]["size"] == round(old["title"]["font"]["size"] * 1.25, 1)
    for new, was in zip(out["data"], before["data"], strict=True):
        assert new.get("textfont") == was.get("textfont")  # the cells' numbers
    assert enlarge(out, 1) is out
