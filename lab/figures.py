"""The checker's pictures, drawn with the app's own figure builders (viz/): the
student's result beside the shipped model's, on one shared y axis. viz builds Plotly's
figure JSON as dicts; the notebook shows plotly figures, so each picture is handed over as
a go.Figure (validated, once: not the app's hot path)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

import viz
from i18n import _
from model.encoding import additive_mask
from viz import Figure
from viz._common import apply_layout, panel_axes, panel_row

GAP = 0.12  # between the two panels, a fraction of the width


def side_by_side(
    left: Figure, right: Figure, title: str, names: tuple[str, str] | None = None
) -> go.Figure:
    """Two one-panel figures (viz's dicts) of the same rows as one figure: `left` (the
    student's) and `right` (the model's), each named above it (default: "yours" and
    nothing); one colour bar, the right one's."""
    layout = panel_row([1, 1], GAP, (_("yours"), "") if names is None else names)
    traces = []
    for i, part in enumerate((left, right)):
        x, y = panel_axes(i)
        axes = part.get("layout") or {}
        layout[f"xaxis{x[1:]}"].update(axes.get("xaxis", {}))
        layout[f"yaxis{y[1:]}"].update(axes.get("yaxis", {}))
        for trace in part["data"]:
            trace = {**trace, "xaxis": x, "yaxis": y}
            if i == 0:
                trace["showscale"] = False
            traces.append(trace)
    layout["yaxis2"].update(showticklabels=False, title=None)
    height = max(left["layout"].get("height") or 0, right["layout"].get("height") or 0) + 30
    return go.Figure(apply_layout({"data": traces}, title, height, **layout))


def attention_pair(
    yours: np.ndarray, model: np.ndarray, tokens: Sequence[str], title: str
) -> go.Figure:
    """One head's attention [T, S]: the student's beside the model's, same sentence."""
    return side_by_side(
        viz.attention_heatmap(yours, tokens, text_auto=False),
        viz.attention_heatmap(model, tokens, text_auto=False),
        title,
        (_("yours"), _("the shipped model's")),
    )


def mask_pair(yours: np.ndarray, right: np.ndarray) -> go.Figure:
    """A causal mask [T, T] (bool) drawn as the additive mask: the student's beside the
    right one."""
    labels = [str(i) for i in range(right.shape[0])]
    return side_by_side(
        viz.causal_mask_figure(additive_mask(yours), labels),
        viz.causal_mask_figure(additive_mask(right), labels),
        _("causal mask: dark cells are masked (-∞)"),
        (_("yours"), _("the right one")),
    )


def encoding_pair(yours: np.ndarray, right: np.ndarray) -> go.Figure:
    """A positional encoding [T, D]: the student's beside the shipped models'."""
    return side_by_side(
        viz.sinusoidal_heatmap(yours),
        viz.sinusoidal_heatmap(right),
        _("sinusoidal encoding, {T} positions x {D} dimensions", T=right.shape[0],
          D=right.shape[1]),
        (_("yours"), _("the shipped models'")),
    )


def difference(yours: np.ndarray, model: np.ndarray, tokens: Sequence[str], what: str) -> go.Figure:
    """Where a [T, D] result differs from the model's: yours minus the model's, per token
    and dimension."""
    return go.Figure(viz.matrix_heatmap(
        yours - model, list(tokens), title=_("{what}: yours minus the shipped model's", what=what),
        text_auto=False,
    ))  # fmt: skip
