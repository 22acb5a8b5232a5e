"""Figures of the experiments: one query's attention beside an attribution of the same
prediction, and the final guess's rank in every layer's readout (the logit lens). The
grids (heads knocked out, patches) are `viz.matrix_heatmap`s."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import (
    Figure,
    apply_layout,
    as_array,
    check_length,
    escape,
    hover_all,
    token_axis,
)

ATTENTION_COLOUR = "#2f6db5"
ATTRIBUTION_COLOUR = "#d62728"


def attention_beside_attribution(
    tokens: Sequence[str], attention: npt.ArrayLike, scores: npt.ArrayLike, title: str,
    method: str = "attribution",
) -> Figure:  # fmt: skip
    """Two bars per token: the query's attention weight and the token's share of the
    attribution (score / sum of |scores|, signed), on one axis."""
    weights = as_array(attention, 1, "attention")
    raw = as_array(scores, 1, "scores")
    check_length(tokens, weights.shape[0], "tokens")
    check_length(tokens, raw.shape[0], "scores")
    share = raw / max(float(np.abs(raw).sum()), 1e-12)
    x = list(range(len(tokens)))
    traces = [
        {"type": "bar", "x": x, "y": values, "name": escape(name), "marker": {"color": colour},
         "customdata": hover_all(tokens),
         "hovertemplate": "%{customdata} (%{x}): %{y:.3f}<extra>" + escape(name) + "</extra>"}
        for name, values, colour in ((_("attention"), weights, ATTENTION_COLOUR),
                                     (method, share, ATTRIBUTION_COLOUR))
    ]  # fmt: skip
    return apply_layout(
        {"data": traces}, title, 380, barmode="group", bargap=0.2,
        xaxis=token_axis(tokens, _("token")), yaxis={"title": {"text": _("share")}},
        legend={"orientation": "h", "y": 1.12, "x": 0},
    )  # fmt: skip


def rank_by_layer(stages: Sequence[str], ranks: Sequence[int], token: str, title: str) -> Figure:
    """The final guess's rank in each readout (1 = first), on a log axis: where it climbs."""
    y = [int(r) for r in ranks]
    line = {
        "type": "scatter", "x": list(range(len(stages))), "y": y, "mode": "lines+markers+text",
        "text": [str(r) for r in y], "textposition": "top center",
        "line": {"width": 3, "color": ATTRIBUTION_COLOUR}, "marker": {"size": 10},
        "customdata": hover_all(stages),
        "hovertemplate": _("%{{customdata}}: rank %{{y}}<extra>{token}</extra>",
                           token=escape(token)),
    }  # fmt: skip
    return apply_layout(
        {"data": [line]}, title, 340, xaxis=token_axis(stages),
        yaxis={"title": {"text": _("rank of {token}", token=escape(token))}, "type": "log",
               "autorange": "reversed"},
    )  # fmt: skip
