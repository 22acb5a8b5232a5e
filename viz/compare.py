"""Figures for comparing two sentences and for the models' training views: one word's
cosine across the two sentences layer by layer, one word's attention in each on one scale,
and a decoder's shifted targets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import (
    WEIGHT_SCALE,
    Figure,
    apply_layout,
    as_array,
    escape,
    escape_all,
    panel_axes,
    panel_row,
    token_axis,
)
from viz.attention import row_bar, row_top

LINE_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")


def cosine_by_layer(
    stages: Sequence[str], series: Mapping[str, Sequence[float]], title: str
) -> Figure:
    """One line per series: a cosine (of a word's vectors in two sentences) at each stage,
    input then after each layer. The y axis spans [min(0, lowest), 1]."""
    traces = []
    low = 0.0
    for n, (name, values) in enumerate(series.items()):
        y = [float(v) for v in values]
        low = min(low, *y)
        traces.append({
            "type": "scatter", "x": list(range(len(stages))), "y": y,
            "mode": "lines+markers+text", "name": escape(name),
            "text": [f"{v:.2f}" for v in y], "textposition": "top center",
            "line": {"width": 3, "color": LINE_COLOURS[n % len(LINE_COLOURS)]},
            "marker": {"size": 10}, "customdata": escape_all(stages),
            "hovertemplate": _("%{{customdata}}: cosine %{{y:.3f}}<extra>{name}</extra>",
                               name=escape(name)),
        })  # fmt: skip
    return apply_layout(
        {"data": traces}, title, 340,
        xaxis=token_axis(stages), yaxis={"title": {"text": _("cosine")}, "range": [low, 1.08]},
        legend={"orientation": "h", "y": -0.35}, showlegend=len(series) > 1,
    )  # fmt: skip


def attention_rows(
    rows: Sequence[npt.ArrayLike], tokens: Sequence[Sequence[str]], query_token: str,
    query_index: Sequence[int], titles: Sequence[str], title: str = "",
) -> Figure:  # fmt: skip
    """One word's attention row in each sentence [T_i], side by side on one weight axis
    (a bar is as tall in both panels for the same weight): each panel as `attention_row`
    draws it, its own keys across, the word's own position in orange, titled above."""
    bars = [as_array(r, 1, "weights") for r in rows]
    layout = panel_row([1.0] * len(bars), 0.08, titles)
    traces = []
    for i, (row, keys, q) in enumerate(zip(bars, tokens, query_index, strict=True)):
        x, y = panel_axes(i)
        traces.append(row_bar(row, keys, query_token, q) | {"xaxis": x, "yaxis": y})
        layout[f"xaxis{x[1:]}"] |= token_axis(keys)
    layout["yaxis"] |= {"title": {"text": _("weight")}, "range": [0, row_top(*bars)]}
    return apply_layout({"data": traces, "layout": layout}, title, 380, bargap=0.15,
                        showlegend=False)  # fmt: skip


def shifted_targets(
    inputs: Sequence[str], targets: Sequence[str], predicted: Sequence[str],
    p_target: Sequence[float], title: str,
) -> Figure:  # fmt: skip
    """A decoder's training view: a column per position with the input token, the target
    (the next token), the model's first guess, coloured by the probability it gives the
    target. Positions are columns, so a repeated token keeps its own column."""
    n = len(inputs)
    p = np.asarray(p_target, dtype=float)
    rows = [_("reads (input)"), _("must predict (target)"), _("its first guess")]
    words = [list(inputs), list(targets), list(predicted)]
    z = np.vstack([p, p, p])
    text = [escape_all(row) for row in words]
    custom = np.dstack([np.array(text, dtype=object), np.tile([f"{v:.1%}" for v in p], (3, 1))])
    trace = {
        "type": "heatmap", "z": z, "x": list(range(n)), "y": list(range(3)), "zmin": 0,
        "zmax": 1, "colorscale": WEIGHT_SCALE, "text": text, "texttemplate": "%{text}",
        "textfont": {"size": 13 if n <= 12 else 10}, "customdata": custom, "xgap": 2, "ygap": 2,
        "colorbar": {"title": {"text": _("p(target)")}, "thickness": 12},
        "hovertemplate": _("position %{x}: %{customdata[0]}<br>p(target) %{customdata[1]}"
                           "<extra></extra>"),
    }  # fmt: skip
    axis = token_axis([f"{i}" for i in range(n)], _("position"))
    axis["tickangle"] = 0
    return apply_layout(
        {"data": [trace]}, title, 260, xaxis=axis,
        yaxis={"tickmode": "array", "tickvals": [0, 1, 2], "ticktext": rows,
               "autorange": "reversed", "showgrid": False},
    )  # fmt: skip
