"""The figures in Korean (issue 31): every builder with a title or an axis title draws it in
Hangul under `using("ko")`, and in English exactly as before under `using("en")`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go
import pytest

import viz
from i18n import using
from tests.figures import plotly_figure
from viz._common import plot_width
from viz.layers import attention_grid_page
from viz.learning import learning_curve, toy_answer
from viz.margins import estimate, text_px

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
RNG = np.random.default_rng(0)
WEIGHTS = RNG.random((6, 6))
WEIGHTS /= WEIGHTS.sum(-1, keepdims=True)
MASK = np.where(np.tril(np.ones((6, 6))) > 0, 0.0, -np.inf)
BITS = (np.arange(6)[:, None] >> np.arange(3)) & 1
PE = RNG.random((6, 8)) - 0.5
IMAGE = RNG.random((8, 8)) * 16

# builder -> what its English figure reads: (title, x axis title, y axis title), None where
# the figure has none (a caller's own title, "t", stays as given).
BUILDERS: dict[str, tuple[Callable[[], viz.Figure], tuple[str | None, ...]]] = {
    "attention_heatmap": (lambda: viz.attention_heatmap(WEIGHTS, TOKENS),
                          ("attention weights (rows: queries, columns: keys)", "key", "query")),
    "attention_grid": (lambda: viz.attention_grid(RNG.random((2, 2, 6, 6)), TOKENS),
                       ("attention in every layer and head", None, None)),
    "attention_grid_page": (lambda: attention_grid_page(RNG.random((1, 2, 6, 6)), TOKENS, 2),
                            ("attention in every layer and head", None, None)),
    "attention_row": (lambda: viz.attention_row(WEIGHTS[2], TOKENS, "sat", query_index=2),
                      ("attention of 'sat' over the keys", "key", "weight")),
    "attention_rows": (lambda: viz.attention_rows([WEIGHTS[2], WEIGHTS[3]], [TOKENS, TOKENS],
                                                  "sat", [2, 3], ["A", "B"], title="t"),
                       ("t", None, "weight")),
    "causal_mask_figure": (lambda: viz.causal_mask_figure(MASK, TOKENS),
                           ("causal mask: -∞ above the diagonal", "key", "query")),
    "cosine_by_layer": (lambda: viz.cosine_by_layer(["a", "b"], {"x": [1, 0.5]}, "t"),
                        ("t", None, "cosine")),
    "similarity_heatmap": (lambda: viz.similarity_heatmap(WEIGHTS, TOKENS),
                           ("cosine similarity between tokens", None, None)),
    "embedding_map": (lambda: viz.embedding_map(RNG.random((6, 2)), TOKENS, ["a"] * 6),
                      ("embeddings in 2-D (PCA)", "principal component 1",
                       "principal component 2")),
    "layer_trajectory": (lambda: viz.layer_trajectory(RNG.random((3, 8)), "cat", [1, 0.5, 0.2]),
                         ("'cat' through the layers", "dimension", None)),
    "attention_beside_attribution": (
        lambda: viz.attention_beside_attribution(TOKENS, WEIGHTS[0], RNG.random(6), "t"),
        ("t", "token", "share")),
    "rank_by_layer": (lambda: viz.rank_by_layer(["a", "b"], [30, 1], "cat", "t"),
                      ("t", None, "rank of cat")),
    "matrix_heatmap": (lambda: viz.matrix_heatmap(RNG.random((6, 4)), TOKENS),
                       ("", "dimension", "token")),
    "binary_table": (lambda: viz.binary_table(BITS, TOKENS),
                     ("binary position encoding", "bit", "position")),
    "sinusoidal_heatmap": (lambda: viz.sinusoidal_heatmap(PE),
                           ("sinusoidal positional encoding", "dimension", "position")),
    "positional_waves": (lambda: viz.positional_waves(PE, [0, 2]),
                         ("positional encoding: one wave per dimension", "position", "value")),
    "embedding_plus_position": (lambda: viz.embedding_plus_position(PE, PE, TOKENS),
                                ("token embedding + positional encoding = input", "dimension",
                                 None)),
    "topk_bar": (lambda: viz.topk_bar([("a", 0.5), ("b", 0.3)]),
                 ("top predictions", "probability", None)),
    "distribution_bar": (lambda: viz.distribution_bar(RNG.random(5), list("abcde"), 3),
                         ("top predictions", "probability", None)),
    "token_strip": (lambda: viz.token_strip(TOKENS, range(6)), ("tokens", None, None)),
    "shifted_targets": (lambda: viz.shifted_targets(TOKENS, TOKENS, TOKENS, RNG.random(6), "t"),
                        ("t", "position", None)),
    "accuracy_by_length": (lambda: viz.accuracy_by_length([1, 2], {"lstm": [1.0, 0.5]}),
                           ("exact match by number of clauses", "clauses in the sentence",
                            "exact match")),
    "image_with_patches": (lambda: viz.image_with_patches(IMAGE),
                           ("the image, cut into patches", None, None)),
    "patch_tokens": (lambda: viz.patch_tokens(RNG.random((4, 2, 2)), ["p0", "p1", "p2", "p3"]),
                     ("the patches as a row of tokens", None, None)),
    "position_similarity_grid": (lambda: viz.position_similarity_grid(RNG.random((4, 4)), 2),
                                 ("position embeddings: cosine similarity", None, None)),
    "attention_over_image": (lambda: viz.attention_over_image(IMAGE, RNG.random((4, 4))),
                             ("[CLS] attention over the image", None, None)),
    "learning_curve": (lambda: learning_curve({"loss": ([0, 1], [2, 1])}, "t", "t"),
                       ("t", "training step", "t")),
    "toy_answer": (lambda: toy_answer([1, 2], [2, 2], [2, 1], "t"), ("t", "position", None)),
}  # fmt: skip


def _hangul(text: str | None) -> bool:
    return any("가" <= ch <= "힣" for ch in text or "")


def _title(axis: object) -> str | None:
    return axis.title.text if axis is not None and axis.title else None


def _read(fig: go.Figure) -> tuple[str | None, ...]:
    """(title, x axis title, y axis title): what a person reads first."""
    layout = fig.layout
    return layout.title.text, _title(layout.xaxis), _title(layout.yaxis)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_figure_reads_in_korean_and_in_english_as_before(name: str) -> None:
    build, english = BUILDERS[name]
    with using("en"):
        en_spec = build()
    with using("ko"):
        ko_spec = build()
    en, ko = plotly_figure(en_spec), plotly_figure(ko_spec)
    assert _read(en) == english
    words = [text for text in _read(ko) if text and text != "t"]  # a caller's title stays
    assert words and all(_hangul(text) for text in words), _read(ko)
    assert viz.to_json(en_spec) != viz.to_json(ko_spec)


def test_hovers_legends_and_colour_bars_are_translated() -> None:
    with using("ko"):
        heatmap = plotly_figure(viz.attention_heatmap(WEIGHTS, TOKENS))
        waves = plotly_figure(viz.positional_waves(PE, [0, 2]))
        panels = plotly_figure(viz.embedding_plus_position(PE, PE, TOKENS))
        strip = plotly_figure(viz.token_strip(TOKENS, range(6)))
    assert heatmap.data[0].colorbar.title.text == "가중치"
    assert [trace.name for trace in waves.data] == ["차원 0", "차원 2"]
    assert "위치 %{x}" in waves.data[0].hovertemplate  # Plotly's own placeholders kept
    assert [a.text for a in panels.layout.annotations][:3] == ["토큰 임베딩", "위치 인코딩", "입력"]
    assert strip.data[0].hovertemplate.endswith("<extra></extra>")
    assert _hangul(strip.data[0].hovertemplate)


def test_tokens_and_numbers_stay_as_they_are_in_korean() -> None:
    with using("ko"):
        fig = plotly_figure(viz.attention_row(WEIGHTS[2], TOKENS, "sat", query_index=2))
    assert list(fig.layout.xaxis.ticktext) == TOKENS
    assert "'sat'" in fig.layout.title.text
    assert list(fig.data[0].text) == [f"{w:.0%}" for w in WEIGHTS[2]]


def test_a_korean_colour_bar_title_is_measured_full_width() -> None:
    # "가중치" is three syllables about 1 em each: wider than three Latin letters.
    assert plot_width(TOKENS, "가중치") < plot_width(TOKENS, "abc")
    assert plot_width(TOKENS, "weight") == plot_width(TOKENS, "weight")  # English as before
    with using("ko"):
        spec = viz.similarity_heatmap(WEIGHTS, TOKENS)
    bar = plotly_figure(spec).data[0].colorbar.title.text
    assert _hangul(bar)
    right = estimate(spec["layout"], spec["data"])["r"]
    assert right >= text_px(bar, 1.2 * 14)  # the colour bar's title fits in the margin


def test_a_korean_axis_title_gets_its_room() -> None:
    with using("ko"):
        fig = plotly_figure(viz.topk_bar([("a", 0.5), ("b", 0.3)]))
    with using("en"):
        en = plotly_figure(viz.topk_bar([("a", 0.5), ("b", 0.3)]))
    assert fig.layout.margin.b == en.layout.margin.b  # one line of title either way
    assert fig.layout.margin.b >= 14 * 1.3 + 15  # the title's line and its standoff
