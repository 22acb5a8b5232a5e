"""Positional encoding: the binary table, the sinusoidal encoding as a heatmap and as
waves, and the embedding + positional encoding = input picture."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import (
    SIGNED_SCALE,
    Figure,
    apply_layout,
    as_array,
    check_length,
    figure_height,
    heatmap_trace,
    number_axis,
    panel_axes,
    panel_row,
    signed_limit,
    token_axis,
)

BINARY_SCALE = [[0.0, "#f4f7fb"], [1.0, "#2f6db5"]]
BINARY_TEXT_MAX_ROWS = 64
WAVE_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]


def _position_labels(n: int, tokens: Sequence[str] | None) -> list[str]:
    """Row labels for positions: "3" or, with tokens, "3 bank"."""
    if tokens is None:
        return [str(i) for i in range(n)]
    check_length(tokens, n, "tokens")
    return [f"{i} {token}" for i, token in enumerate(tokens)]


def binary_table(
    bits: npt.ArrayLike,
    tokens: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """The binary position encoding as a table [T, B]: positions down, bits across (the
    title defaults to "binary position encoding").

    Each cell is 0 or 1, written in the cell (for up to 64 positions). Columns are
    labelled "bit 0", "bit 1", ... in the order given unless `col_labels` says otherwise.
    """
    table = as_array(bits, 2, "bits")
    positions, width = table.shape
    rows = _position_labels(positions, tokens)
    cols = list(col_labels) if col_labels is not None else [_("bit {j}", j=j) for j in range(width)]
    check_length(cols, width, "col_labels")
    trace = heatmap_trace(
        table,
        rows,
        cols,
        hovertemplate=_("position %{y}, %{customdata[1]}: %{customdata[2]}<extra></extra>"),
        signed=False,
        hover_fmt=".0f",
        text_fmt=".0f",
        text_auto=None if positions <= BINARY_TEXT_MAX_ROWS else False,
        zmin=0.0,
        zmax=1.0,
    )
    trace.update(colorscale=BINARY_SCALE, showscale=False, xgap=2, ygap=2)
    return apply_layout(
        {"data": [trace]},
        _("binary position encoding") if title is None else title,
        figure_height(positions),
        xaxis=token_axis(cols, _("bit")),
        yaxis=token_axis(rows, _("position"), vertical=True),
    )


def sinusoidal_heatmap(
    pe: npt.ArrayLike,
    tokens: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """The positional encoding [T, D] as a heatmap: positions down, dimensions across (the
    title defaults to "sinusoidal positional encoding")."""
    matrix = as_array(pe, 2, "pe")
    positions = matrix.shape[0]
    rows = _position_labels(positions, tokens)
    limit = max(1.0, signed_limit(matrix))
    trace = heatmap_trace(
        matrix,
        rows,
        [str(j) for j in range(matrix.shape[1])],
        hovertemplate=_("position %{y}, dimension %{x}: %{customdata[2]}<extra></extra>"),
        signed=True,
        text_auto=False,
        zmin=-limit,
        zmax=limit,
    )
    y_axis = (
        token_axis(rows, _("position"), vertical=True)
        if tokens is not None
        else number_axis(_("position"), vertical=True)
    )
    return apply_layout(
        {"data": [trace]},
        _("sinusoidal positional encoding") if title is None else title,
        figure_height(positions, row_px=8 if tokens is None else 22),
        xaxis=number_axis(_("dimension")),
        yaxis=y_axis,
    )


def positional_waves(
    pe: npt.ArrayLike,
    dims: Sequence[int],
    title: str | None = None,
    curve: npt.ArrayLike | None = None,
) -> Figure:
    """A wave per selected dimension of the positional encoding [T, D], over the positions
    (the title defaults to "positional encoding: one wave per dimension").

    The model only ever uses the integer positions: they are the dots. `curve` is the same
    encoding sampled k times per position ([(T - 1) * k + 1, D], as
    model.sinusoidal_encoding(T, D, per_position=k) gives it): drawn as the continuous line
    the dots lie on (without it, straight segments join the dots).
    Low dimensions oscillate fast, high ones slowly: together they tell positions apart.
    """
    matrix = as_array(pe, 2, "pe")
    positions, width = matrix.shape
    fine = None if curve is None else as_array(curve, 2, "curve")
    steps = 1
    if fine is not None:
        steps = (fine.shape[0] - 1) // max(positions - 1, 1)
        if fine.shape != ((positions - 1) * steps + 1, width):
            raise ValueError(f"curve {fine.shape} is not pe {matrix.shape} sampled in between")
    dots = positions <= 64 or fine is not None
    traces = []
    for index, dim in enumerate(dims):
        if not 0 <= dim < width:
            raise ValueError(f"dimension {dim} is outside 0..{width - 1}")
        colour = WAVE_COLOURS[index % len(WAVE_COLOURS)]
        name = _("dimension {dim}", dim=dim)
        if fine is not None:
            traces.append(
                {
                    "type": "scatter",
                    "x": np.arange(fine.shape[0]) / steps,
                    "y": fine[:, dim],
                    "mode": "lines",
                    "line": {"color": colour, "width": 2},
                    "name": name,
                    "legendgroup": name,
                    "hoverinfo": "skip",
                }
            )
        traces.append(
            {
                "type": "scatter",
                "x": list(range(positions)),
                "y": matrix[:, dim],
                "mode": "markers" if fine is not None else ("lines+markers" if dots else "lines"),
                "marker": {"color": colour, "size": 7 if positions <= 64 else 4},
                "line": {"color": colour},
                "name": name,
                "legendgroup": name,
                "showlegend": fine is None,
                "hovertemplate": _(
                    "dimension {dim}, position %{{x}}: %{{y:.3f}}<extra></extra>", dim=dim
                ),
            }
        )
    return apply_layout(
        {"data": traces},
        _("positional encoding: one wave per dimension") if title is None else title,
        420,
        xaxis={"title": {"text": _("position")}, "zeroline": False},
        yaxis={"title": {"text": _("value")}, "zeroline": True},
        legend={"orientation": "h", "y": -0.2},
    )


def embedding_plus_position(
    emb: npt.ArrayLike,
    pos: npt.ArrayLike,
    tokens: Sequence[str],
    title: str | None = None,
) -> Figure:
    """Three heatmaps side by side: token embedding + positional encoding = input (also
    the default title).

    All three [T, D] panels share one colour scale centred at 0, so a colour means the same
    number in each; "+" and "=" sit between the panels.
    """
    embedding = as_array(emb, 2, "emb")
    position = as_array(pos, 2, "pos")
    if embedding.shape != position.shape:
        raise ValueError(f"emb {embedding.shape} and pos {position.shape} differ in shape")
    check_length(tokens, embedding.shape[0], "tokens")
    total = embedding + position
    dims = [str(j) for j in range(embedding.shape[1])]
    names = (_("token embedding"), _("positional encoding"), _("input"))

    layout = panel_row([1, 1, 1], 0.06, names)
    traces, domains = [], []
    for col, (name, values) in enumerate(zip(names, (embedding, position, total), strict=True)):
        trace = heatmap_trace(
            values,
            tokens,
            dims,
            hovertemplate=_(
                "{name}<br>%{{customdata[0]}} (%{{y}}), dimension %{{x}}: "
                "%{{customdata[2]}}<extra></extra>",
                name=name,
            ),
            signed=True,
            text_auto=False,
            coloraxis="coloraxis",
        )
        x, y = panel_axes(col)
        trace.update(xaxis=x, yaxis=y)
        traces.append(trace)
        layout[f"xaxis{x[1:]}"].update(number_axis(_("dimension")))
        domains.append(layout[f"xaxis{x[1:]}"]["domain"])
    layout["yaxis"].update(token_axis(tokens, vertical=True))

    limit = signed_limit(embedding, position, total)
    annotations = layout.pop("annotations")
    for sign, left, right in (("+", domains[0], domains[1]), ("=", domains[1], domains[2])):
        annotations.append(
            {
                "text": sign,
                "x": (left[1] + right[0]) / 2,
                "y": 0.5,
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
                "font": {"size": 32},
            }
        )
    return apply_layout(
        {"data": traces},
        _("token embedding + positional encoding = input") if title is None else title,
        figure_height(embedding.shape[0]),
        coloraxis={
            "colorscale": SIGNED_SCALE,
            "cmid": 0.0,
            "cmin": -limit,
            "cmax": limit,
            "colorbar": {"thickness": 14},
        },
        annotations=annotations,
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        **layout,
    )
