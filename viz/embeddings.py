"""Embeddings: similarity between token vectors, a 2-D map of embeddings, and how one
token's vector changes layer by layer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import N_, _
from viz._common import (
    FONT_SIZE,
    Figure,
    apply_layout,
    as_array,
    check_length,
    escape,
    escape_all,
    figure_height,
    heatmap_trace,
    number_axis,
    panel_axes,
    panel_row,
    token_axis,
)

GROUP_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]
METRICS = {"cosine": N_("cosine"), "dot product": N_("dot product")}  # a metric's shown name


def similarity_heatmap(
    sim: npt.ArrayLike, tokens: Sequence[str], title: str = "", metric: str = "cosine"
) -> Figure:
    """Heatmap of the pairwise similarity [T, T] between the tokens' vectors.

    `metric` names the measure ("cosine" is drawn on a fixed -1..1 scale, anything else,
    e.g. "dot product", on a scale symmetric around 0).
    """
    matrix = as_array(sim, 2, "sim")
    check_length(tokens, matrix.shape[0], "tokens (rows)")
    check_length(tokens, matrix.shape[1], "tokens (columns)")
    limits = {"zmin": -1.0, "zmax": 1.0} if metric == "cosine" else {}
    shown = _(METRICS[metric]) if metric in METRICS else metric
    trace = heatmap_trace(
        matrix,
        tokens,
        tokens,
        hovertemplate=(
            "%{customdata[0]} (%{y}) · %{customdata[1]} (%{x}): "
            + escape(shown)
            + " %{customdata[2]}<extra></extra>"
        ),
        signed=True,
        colorbar_title=shown,
        **limits,
    )
    return apply_layout(
        {"data": [trace]},
        title or _("{metric} similarity between tokens", metric=shown),
        figure_height(matrix.shape[0]),
        xaxis=token_axis(tokens),
        yaxis=token_axis(tokens, vertical=True),
    )


def embedding_map(
    points: npt.ArrayLike,
    labels: Sequence[str],
    groups: Sequence[str],
    title: str | None = None,
) -> Figure:
    """Scatter of 2-D points [N, 2] with a text label each, one colour per group (the title
    defaults to "embeddings in 2-D (PCA)").

    Groups are e.g. "sentence" or "neighbour of 'bank'"; they keep the order in which they
    first appear. Both axes share one scale so distances read truthfully.
    """
    xy = as_array(points, 2, "points")
    if xy.shape[1] != 2:
        raise ValueError(f"points must be [N, 2], got shape {xy.shape}")
    check_length(labels, xy.shape[0], "labels")
    check_length(groups, xy.shape[0], "groups")
    group_order = list(dict.fromkeys(groups))
    safe_labels = escape_all(labels)

    traces = []
    for index, group in enumerate(group_order):
        members = [i for i, g in enumerate(groups) if g == group]
        traces.append(
            {
                "type": "scatter",
                "x": xy[members, 0],
                "y": xy[members, 1],
                "mode": "markers+text",
                "text": [safe_labels[i] for i in members],
                "textposition": "top center",
                "textfont": {"size": FONT_SIZE},
                "marker": {"size": 10, "color": GROUP_COLOURS[index % len(GROUP_COLOURS)]},
                "name": escape(group),
                "customdata": [[safe_labels[i], escape(group), i] for i in members],
                "hovertemplate": (
                    "%{customdata[0]} (%{customdata[2]}), %{customdata[1]}"
                    "<br>(%{x:.2f}, %{y:.2f})<extra></extra>"
                ),
            }
        )
    return apply_layout(
        {"data": traces},
        _("embeddings in 2-D (PCA)") if title is None else title,
        500,
        xaxis={"title": {"text": _("principal component 1")}, "zeroline": False},
        yaxis={
            "title": {"text": _("principal component 2")},
            "zeroline": False,
            "scaleanchor": "x",
            "scaleratio": 1,
        },
        legend={"orientation": "h", "y": -0.15},
    )


def layer_trajectory(
    vectors: npt.ArrayLike,
    token: str,
    cos_to_input: npt.ArrayLike,
    title: str | None = None,
) -> Figure:
    """How one token's vector changes through the layers.

    Left: a heatmap of the vectors [L+1, D], one row per stage ("input", "layer 1", ...).
    Right, on the same rows: the cosine similarity of each stage to the input vector.
    """
    matrix = as_array(vectors, 2, "vectors")
    cosine = as_array(cos_to_input, 1, "cos_to_input")
    stages = matrix.shape[0]
    check_length(list(cosine), stages, "cos_to_input")
    names = [_("input")] + [_("layer {i}", i=i) for i in range(1, stages)]

    # The colour bar stands in the gap between the heatmap and the cosine panel, beside
    # the numbers it keys (in the plot area: no margin to make room for, no second draw).
    layout = panel_row([0.66, 0.2], 0.14, (_("vector per layer"), _("cosine to input")))
    heatmap = heatmap_trace(
        matrix,
        names,
        [str(j) for j in range(matrix.shape[1])],
        hovertemplate=_("%{customdata[0]}, dimension %{x}: %{customdata[2]}<extra></extra>"),
        signed=True,
        text_auto=False,
    )
    heatmap["colorbar"] = {
        "x": layout["xaxis"]["domain"][1] + 0.01,
        "xanchor": "left",
        "y": 0.5,
        "len": 1.0,
        "thickness": 12,
    }
    cosine_x, cosine_y = panel_axes(1)  # the second panel: layout keys xaxis2, yaxis2
    cosine_line = {
        "type": "scatter",
        "x": cosine,
        "y": list(range(stages)),
        "xaxis": cosine_x,
        "yaxis": cosine_y,
        "mode": "lines+markers",
        "marker": {"size": 9, "color": "#d62728"},
        "line": {"width": 2, "color": "#d62728"},
        "customdata": names,
        "hovertemplate": _("%{customdata}: cosine to input %{x:.3f}<extra></extra>"),
        "showlegend": False,
    }
    low = min(0.0, float(np.nanmin(cosine))) if cosine.size else 0.0
    layout["xaxis"].update(number_axis(_("dimension")))
    layout["xaxis2"].update(range=[low - 0.05, 1.05], title={"text": _("cosine")})
    layout["yaxis"].update(token_axis(names, vertical=True))
    return apply_layout(
        {"data": [heatmap, cosine_line]},
        title or _("'{token}' through the layers", token=token),
        figure_height(stages, row_px=40, extra=150),
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        **layout,
    )
