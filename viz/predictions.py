"""Predictions: the top-k candidates of a masked or next-token prediction as bars."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import Figure, apply_layout, check_length, escape_all, figure_height, token_axis

BAR_COLOUR = "#2f6db5"


def topk_bar(candidates: Sequence[tuple[str, float]], title: str | None = None) -> Figure:
    """Horizontal bars of (token, probability) candidates, the most likely on top (the title
    defaults to "top predictions").

    Candidates are sorted by probability; each bar is labelled with its percentage. The
    token axis uses integer positions, so two candidates that look alike stay two bars.
    """
    ranked = sorted(candidates, key=lambda pair: float(pair[1]), reverse=True)
    tokens = [str(token) for token, _ in ranked]
    probs = [float(prob) for _, prob in ranked]
    top = max(probs, default=1.0)
    bar = {
        "type": "bar",
        "x": probs,
        "y": list(range(len(ranked))),
        "orientation": "h",
        "marker": {"color": BAR_COLOUR},
        "text": [f"{p:.1%}" for p in probs],
        "textposition": "outside",
        "cliponaxis": False,
        "customdata": [[rank + 1, token] for rank, token in enumerate(escape_all(tokens))],
        "hovertemplate": "#%{customdata[0]} %{customdata[1]}: %{x:.2%}<extra></extra>",
    }
    return apply_layout(
        {"data": [bar]},
        _("top predictions") if title is None else title,
        figure_height(len(ranked), row_px=34, extra=110),
        xaxis={
            "title": {"text": _("probability")},
            "tickformat": ".0%" if top >= 0.05 else ".1%",
            "range": [0, max(top, 1e-9) * 1.2],
        },
        yaxis=token_axis(tokens, vertical=True),
        bargap=0.25,
    )


def distribution_bar(
    probs: npt.ArrayLike,
    labels: Sequence[str],
    k: int = 10,
    title: str | None = None,
) -> Figure:
    """The k most likely entries of a full distribution [V] over `labels`, as topk_bar."""
    distribution = np.asarray(probs, dtype=float).reshape(-1)
    check_length(labels, distribution.shape[0], "labels")
    order = np.argsort(-distribution, kind="stable")[: max(k, 0)]
    return topk_bar([(labels[i], float(distribution[i])) for i in order], title)
