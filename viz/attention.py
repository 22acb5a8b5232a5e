"""Attention: one head's weights (queries down, keys across), every layer x head at once,
one query's attention row, and the causal mask of a decoder."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import (
    MASKED_COLOUR,
    MAX_HEIGHT,
    MINUS_INF,
    WEIGHT_SCALE,
    Figure,
    apply_layout,
    as_array,
    cell_customdata,
    cell_text_font,
    check_length,
    escape_all,
    figure_height,
    heatmap_trace,
    hover_all,
    hover_label,
    merged,
    panel_axes,
    panel_grid,
    plot_width,
    tick_font_size,
    token_axis,
    update_axes,
)

ATTENTION_HOVER = "%{customdata[0]} (%{y}) → %{customdata[1]} (%{x}): %{z:.3f}<extra></extra>"
GRID_HOVER_CELLS_MAX = 250_000  # beyond this many cells the grid's hover shows positions only
GRID_PANEL_PX = 170  # a panel's least height
GRID_LABEL_PX = 10  # a query row's least height, so its label can be read
GRID_FONT_MIN = 7  # px: the smallest token label in the grid
GRID_WIDTH_PX = 600  # the panels' total width at full width on a 1280-px projector (measured)
BAR_COLOUR = "#2f6db5"
QUERY_COLOUR = "#d9731a"
ALLOWED_COLOUR = "#e8f0fe"


def attention_heatmap(
    weights: npt.ArrayLike,
    tokens: Sequence[str],
    title: str = "",
    key_tokens: Sequence[str] | None = None,
    text_auto: bool | None = None,
    tall_as: int | None = None,
) -> Figure:
    """One head's attention weights [T_query, T_key]: query rows (top-down), key columns.

    Weights are on a fixed 0..1 scale. Hover reads "bank (7) → river (3): 0.412". For
    cross-attention pass the encoder's tokens as `key_tokens` (the keys differ from the
    queries). The weights are printed in the cells where they fit (else on hover only).
    `tall_as`: the figure is as tall as this many queries would make it (default: its own),
    so that two heatmaps side by side end level.
    """
    matrix = as_array(weights, 2, "weights")
    keys = list(tokens) if key_tokens is None else list(key_tokens)
    check_length(tokens, matrix.shape[0], "tokens (queries)")
    check_length(keys, matrix.shape[1], "key_tokens")
    trace = heatmap_trace(
        matrix,
        tokens,
        keys,
        hovertemplate=ATTENTION_HOVER,
        signed=False,
        text_auto=text_auto,
        zmin=0.0,
        zmax=1.0,
        colorbar_title=_("weight"),
    )
    return apply_layout(
        {"data": [trace]},
        title or _("attention weights (rows: queries, columns: keys)"),
        figure_height(tall_as or matrix.shape[0]),
        xaxis=token_axis(keys, _("key")),
        yaxis=token_axis(tokens, _("query"), vertical=True),
    )


def _grid_ticks(labels: Sequence[str], room_px: float) -> dict:
    """A token axis of a grid panel `room_px` long: every token, in a font that fits
    (GRID_FONT_MIN..11 px, one label per font-size of room), or every k-th token at the
    smallest font when even that does not fit (hover names every cell's tokens)."""
    n = len(labels)
    each = max(room_px, 1.0) / max(n, 1)
    font = int(min(11, max(GRID_FONT_MIN, each)))
    step = max(1, math.ceil(GRID_FONT_MIN / each)) if each < GRID_FONT_MIN else 1
    picks = list(range(0, n, step))
    safe = escape_all(labels)
    return {
        "tickmode": "array",
        "tickvals": picks,
        "ticktext": [safe[i] for i in picks],
        "tickfont": {"size": font},
        "showgrid": False,
        "zeroline": False,
    }


def attention_grid(
    weights: npt.ArrayLike,
    tokens: Sequence[str],
    title: str | None = None,
    key_tokens: Sequence[str] | None = None,
    panel_titles: Sequence[str] | None = None,
) -> Figure:
    """Every layer x head as a small heatmap [L, H, T_query, T_key] (rows: layers).

    Panels are titled "L1 H1", ... (or `panel_titles`, row by row: any grid of attention
    maps of one sentence); they share one 0..1 colour scale. The left column and
    the bottom row name every token (small, the keys turned upright), or as many as fit;
    panels grow to give each query row room for its label. For very large grids (over 250k
    cells) hover shows positions instead of tokens to keep the figure light. The title
    defaults to "attention in every layer and head".
    """
    grid = as_array(weights, 4, "weights")
    layers, heads, n_query, n_key = grid.shape
    keys = list(tokens) if key_tokens is None else list(key_tokens)
    check_length(tokens, n_query, "tokens (queries)")
    check_length(keys, n_key, "key_tokens")

    panel_px = min(max(GRID_PANEL_PX, n_query * GRID_LABEL_PX), (MAX_HEIGHT - 160) / layers)
    height = int(min(MAX_HEIGHT, max(300, layers * panel_px + 160)))
    vertical_spacing = min(40 / height, 0.9 / max(layers - 1, 1))
    names = escape_all(panel_titles or [f"L{lay + 1} H{head + 1}" for lay in range(layers)
                                        for head in range(heads)])  # fmt: skip
    check_length(names, layers * heads, "panel_titles")
    layout = panel_grid(layers, heads, min(0.02, 0.9 / max(heads - 1, 1)), vertical_spacing,
                        names)  # fmt: skip
    with_tokens = grid.size <= GRID_HOVER_CELLS_MAX
    customdata = (
        cell_customdata(tokens, keys, None)  # the hover reads the weight from z
        if with_tokens
        else None
    )
    traces = []
    for lay in range(layers):
        for head in range(heads):
            prefix = f"{names[lay * heads + head]}<br>"
            hover = (
                prefix + ATTENTION_HOVER
                if with_tokens
                else prefix + _("query %{y} → key %{x}: %{z:.3f}<extra></extra>")
            )
            x, y = panel_axes(lay * heads + head)
            trace = {
                "type": "heatmap",
                "z": grid[lay, head],
                "x": list(range(n_key)),
                "y": list(range(n_query)),
                "hovertemplate": hover,
                "coloraxis": "coloraxis",
                "xaxis": x,
                "yaxis": y,
            }
            if customdata is not None:
                trace["customdata"] = customdata
            traces.append(trace)
    update_axes(layout, "x", showticklabels=False, showgrid=False, zeroline=False)
    update_axes(
        layout, "y", showticklabels=False, showgrid=False, zeroline=False, autorange="reversed"
    )
    for head in range(heads):  # the bottom row names the keys
        x, _y = panel_axes((layers - 1) * heads + head)
        ticks = {**_grid_ticks(keys, GRID_WIDTH_PX / heads), "showticklabels": True}
        layout[f"xaxis{x[1:]}"] = merged(layout[f"xaxis{x[1:]}"], {**ticks, "tickangle": -90})
    for lay in range(layers):  # the first column names the queries
        _x, y = panel_axes(lay * heads)
        ticks = {**_grid_ticks(tokens, panel_px), "showticklabels": True}
        layout[f"yaxis{y[1:]}"] = merged(layout[f"yaxis{y[1:]}"], ticks)
    for note in layout["annotations"]:
        note["font"] = {"size": 12}
    return apply_layout(
        {"data": traces, "layout": layout},
        _("attention in every layer and head") if title is None else title,
        height,
        coloraxis={
            "colorscale": WEIGHT_SCALE,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": {"thickness": 14, "title": {"text": _("weight")}},
        },
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
    )


def attention_row(
    weights: npt.ArrayLike,
    tokens: Sequence[str],
    query_token: str,
    title: str | None = None,
    query_index: int | None = None,
) -> Figure:
    """One query's attention over the keys [T] as bars, e.g. the new token's attention row
    or the masked position's attention. `query_index` marks the query's own position."""
    row = as_array(weights, 1, "weights")
    return apply_layout(
        {"data": [row_bar(row, tokens, query_token, query_index)]},
        title or _("attention of '{token}' over the keys", token=query_token),
        380,
        xaxis=token_axis(tokens, _("key")),
        yaxis={"title": {"text": _("weight")}, "range": [0, row_top(row)]},
        bargap=0.15,
    )


def row_bar(
    row: np.ndarray, tokens: Sequence[str], query_token: str, query_index: int | None
) -> dict:
    """The bar trace of one query's attention row [T] (`attention_row`'s): the query's own
    position in orange, the weights printed above the bars up to 24 keys."""
    check_length(tokens, row.shape[0], "tokens")
    query = hover_label(query_token) + ("" if query_index is None else f" ({query_index})")
    colours = [
        QUERY_COLOUR if query_index is not None and i == query_index else BAR_COLOUR
        for i in range(row.shape[0])
    ]
    bar = {
        "type": "bar",
        "x": list(range(row.shape[0])),
        "y": row,
        "marker": {"color": colours},
        "customdata": [[query, key] for key in hover_all(tokens)],
        "hovertemplate": "%{customdata[0]} → %{customdata[1]} (%{x}): %{y:.3f}<extra></extra>",
        "textposition": "outside",
        "cliponaxis": False,
    }
    if row.shape[0] <= 24:
        bar["text"] = [f"{w:.0%}" for w in row]
    return bar


def row_top(*rows: np.ndarray) -> float:
    """The top of a weight axis that holds every bar of `rows` and the labels above them."""
    top = max((float(np.nanmax(r)) for r in rows if r.size), default=1.0)
    return max(top, 1e-9) * 1.18


def causal_mask_figure(
    mask: npt.ArrayLike, tokens: Sequence[str], title: str | None = None
) -> Figure:
    """The T x T mask M added to a decoder's scores (0 allowed, -inf masked, as
    model.additive_mask gives it): query i may look at keys 0..i only. The title defaults
    to "causal mask: -∞ above the diagonal".

    Allowed cells are light and read "0"; masked cells (above the diagonal) are dark and
    read "-∞" (where that fits, see viz._common.cell_font). Hover gives the query, the key
    and the mask value.
    """
    mask = as_array(mask, 2, "mask")
    n = len(tokens)
    check_length(tokens, mask.shape[0], "tokens")
    masked = np.isneginf(mask)
    values_text = np.where(masked, MINUS_INF, "0").astype(object)
    font = cell_text_font(values_text.shape, values_text, None, plot_width(tokens, None))
    trace = {
        "type": "heatmap",
        "z": masked.astype(float),
        "x": list(range(n)),
        "y": list(range(n)),
        "zmin": 0.0,
        "zmax": 1.0,
        "colorscale": [[0.0, ALLOWED_COLOUR], [1.0, MASKED_COLOUR]],
        "showscale": False,
        "textfont": {"size": font or tick_font_size(n)},
        "customdata": cell_customdata(tokens, tokens, values_text),
        "hovertemplate": "%{customdata[0]} (%{y}) → %{customdata[1]} (%{x}): "
        "%{customdata[2]}<extra></extra>",
        "xgap": 1,
        "ygap": 1,
    }
    if font:
        trace.update(text=values_text, texttemplate="%{text}")
    return apply_layout(
        {"data": [trace]},
        _("causal mask: -∞ above the diagonal") if title is None else title,
        figure_height(n),
        xaxis=token_axis(tokens, _("key")),
        yaxis=token_axis(tokens, _("query"), vertical=True),
    )
