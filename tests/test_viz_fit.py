"""Issue 12's figure flaws: tokens keyed by position in every builder (repeated tokens keep
their own rows, columns and bars), numbers in cells only where they fit, continuous
sinusoid waves, every token named in the layer x head grid."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

import viz
from model import additive_mask, binary_encoding, causal_mask, sinusoidal_encoding
from tests.figures import plotly_figure
from viz._common import CELL_FONT_MIN, cell_font, plot_width

# "the" three times, "bank" twice: a builder that keys by text would merge them.
TOKENS = ["[BOS]", "the", "bank", "of", "the", "river", "and", "the", "bank", "[EOS]"]
T = len(TOKENS)


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    w = rng.random(shape)
    return w / w.sum(axis=-1, keepdims=True)


def _token_axes(fig: go.Figure) -> list[tuple[str, list, list]]:
    """Every axis that carries tick labels: (name, tickvals, ticktext)."""
    out = []
    for name in fig.layout:
        if name.startswith(("xaxis", "yaxis")):
            axis = fig.layout[name]
            if axis.ticktext is not None:
                out.append((name, list(axis.tickvals), list(axis.ticktext)))
    return out


def _figures(rng: np.random.Generator) -> dict[str, tuple[go.Figure, int]]:
    """Every builder of a token-by-something figure, built on TOKENS: (figure, how many
    positions it must draw)."""
    d = 8
    pe = sinusoidal_encoding(T, d)
    emb = rng.normal(size=(T, d))
    vectors = rng.normal(size=(3, d))
    candidates = [("the", 0.4), ("bank", 0.3), ("the", 0.2), ("bank", 0.1)]
    specs = {
        "token_strip": (viz.token_strip(TOKENS, np.arange(T)), T),
        "matrix_heatmap": (viz.matrix_heatmap(emb, TOKENS), T),
        "matrix_heatmap_tokens": (viz.matrix_heatmap(emb @ emb.T, TOKENS, TOKENS), T),
        "similarity_heatmap": (viz.similarity_heatmap(np.corrcoef(emb), TOKENS), T),
        "embedding_map": (viz.embedding_map(rng.normal(size=(T, 2)), TOKENS, ["s"] * T), T),
        "layer_trajectory": (viz.layer_trajectory(vectors, "the", np.ones(3)), 3),
        "binary_table": (viz.binary_table(binary_encoding(T), TOKENS), T),
        "sinusoidal_heatmap": (viz.sinusoidal_heatmap(pe, TOKENS), T),
        "embedding_plus_position": (viz.embedding_plus_position(emb, pe, TOKENS), T),
        "attention_heatmap": (viz.attention_heatmap(_weights(rng, T, T), TOKENS), T),
        "attention_grid": (viz.attention_grid(_weights(rng, 2, 2, T, T), TOKENS), T),
        "attention_row": (viz.attention_row(_weights(rng, T), TOKENS, "bank", 8), T),
        "attention_rows": (viz.attention_rows([_weights(rng, T)] * 2, [TOKENS] * 2, "bank",
                                              [8, 8], ["A", "B"]), T),  # fmt: skip
        "causal_mask_figure": (viz.causal_mask_figure(additive_mask(causal_mask(T)), TOKENS), T),
        "topk_bar": (viz.topk_bar(candidates), 4),
        "distribution_bar": (viz.distribution_bar(np.full(T, 1 / T), TOKENS, k=T), T),
    }
    return {name: (plotly_figure(spec), n) for name, (spec, n) in specs.items()}


@pytest.mark.parametrize("name", list(_figures(np.random.default_rng(0))))
def test_every_builder_keys_tokens_by_position(name: str) -> None:
    fig, n = _figures(np.random.default_rng(0))[name]
    for trace in fig.data:
        if isinstance(trace, go.Heatmap):
            z = np.asarray(trace.z)
            assert z.shape[0] == n or z.shape[1] == n, (name, z.shape)
            for axis in ("x", "y"):
                values = getattr(trace, axis)
                if values is not None:
                    assert len(set(values)) == len(values), (name, axis)  # one cell each
        elif isinstance(trace, go.Bar):
            places = trace.y if trace.orientation == "h" else trace.x
            assert len(set(places)) == len(places) == n, (name, list(places))
        elif isinstance(trace, go.Scatter) and trace.text is not None:
            assert len(trace.x) == n, name  # one point (chip, label) per token
    for axis, values, text in _token_axes(fig):
        if len(text) in (n, T) and len(text) > 3:
            assert len(set(values)) == len(values) == len(text), (name, axis)
            assert all(float(v).is_integer() for v in values), (name, axis)


@pytest.mark.parametrize("name", ["binary_table", "sinusoidal_heatmap"])
def test_positional_rows_name_each_position_once(name: str) -> None:
    fig, _ = _figures(np.random.default_rng(0))[name]
    (_, values, text) = next(a for a in _token_axes(fig) if a[0].startswith("yaxis"))
    assert values == list(range(T)) and len(set(text)) == T  # "1 the" and "4 the"


def test_the_layer_head_grid_names_every_token() -> None:
    tokens = [f"w{i}" for i in range(21)]
    weights = _weights(np.random.default_rng(0), 2, 3, 21, 21)
    fig = plotly_figure(viz.attention_grid(weights, tokens))
    labelled = [(a, v, t) for a, v, t in _token_axes(fig) if t]
    assert labelled and all(v == list(range(21)) and t == tokens for _, v, t in labelled)


# --- numbers in the cells only where they fit -----------------------------------------------


def _cell_text_shown(fig: go.Figure) -> bool:
    return any(trace.text is not None and trace.texttemplate for trace in fig.data)


def test_cell_font_shrinks_then_gives_up() -> None:
    assert cell_font(4, 4, ["0.12"], 240) == 14
    small = cell_font(7, 7, ["-1.23"], 240)
    assert small is not None and CELL_FONT_MIN <= small < 14
    assert cell_font(12, 12, ["-0.12"], 240) is None
    assert cell_font(12, 12, ["1"], 240) is not None  # one character fits where four do not
    # The rule is the text's width against the cell's: the widest text fits its cell.
    for n in range(1, 40):
        size = cell_font(n, n, ["0.00"], 240)
        if size is not None:
            assert 4 * size * 0.6 <= 240 / n


def test_the_plot_width_leaves_room_for_labels_and_colour_bar() -> None:
    short = plot_width(["a", "b"], "")
    assert plot_width(["0 · [BOS]", "1 · the"], "") < short
    assert plot_width(["a", "b"], "dot product") < short < plot_width(["a", "b"], None)


@pytest.mark.parametrize(
    "build, n, shown",
    [
        (lambda w, t: viz.attention_heatmap(w, t), 5, True),
        (lambda w, t: viz.attention_heatmap(w, t), 10, False),  # the causal page's 1.000.000.00
        (lambda w, t: viz.similarity_heatmap(2 * w - 1, t), 12, False),  # cosines at 12
        (lambda w, t: viz.similarity_heatmap(40 * w - 20, t, metric="dot product"), 7, False),
        (lambda w, t: viz.matrix_heatmap(w, t, t), 12, False),
        (lambda w, t: viz.causal_mask_figure(additive_mask(causal_mask(len(t))), t), 8, True),
        (lambda w, t: viz.causal_mask_figure(additive_mask(causal_mask(len(t))), t), 24, False),
    ],
)
def test_numbers_are_printed_in_cells_only_where_they_fit(build, n: int, shown: bool) -> None:
    rng = np.random.default_rng(1)
    fig = plotly_figure(build(_weights(rng, n, n), [f"t{i}" for i in range(n)]))
    assert _cell_text_shown(fig) is shown
    for trace in fig.data:
        assert trace.customdata is not None  # hover always has the number
        if shown:
            size = trace.textfont.size
            longest = max(len(str(v)) for v in np.asarray(trace.text).ravel())
            assert longest * size * 0.6 <= plot_width(list(range(n)), None) / n


# --- the sinusoid waves ------------------------------------------------------------------------


def test_waves_are_continuous_curves_through_the_integer_positions() -> None:
    span, d, k = 20, 16, 16
    pe, curve = sinusoidal_encoding(span, d), sinusoidal_encoding(span, d, per_position=k)
    fig = plotly_figure(viz.positional_waves(pe, [0, 1], curve=curve))
    lines = [t for t in fig.data if t.mode == "lines"]
    dots = [t for t in fig.data if t.mode == "markers"]
    assert len(lines) == len(dots) == 2
    for line, dot, dim in zip(lines, dots, (0, 1), strict=True):
        x = np.asarray(line.x)
        assert len(x) == (span - 1) * k + 1 and np.allclose(np.diff(x), 1 / k)
        # the curve is the formula itself between the positions, not straight segments
        formula = np.sin(x) if dim == 0 else np.cos(x)
        np.testing.assert_allclose(line.y, formula, atol=1e-6)
        assert list(dot.x) == list(range(span))
        np.testing.assert_array_equal(dot.y, pe[:, dim])
        assert line.line.color == dot.marker.color
    with pytest.raises(ValueError):
        viz.positional_waves(pe, [0], curve=curve[:-3])
