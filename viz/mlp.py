"""Inside the MLP (issue 57): one token's hidden neurons after the nonlinearity (a layer's
mlp_post row), the ones that fire most coloured and named ("neuron 417")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import Figure, apply_layout, as_array, number_axis

QUIET_COLOUR = "#b8c4d6"
TOP_COLOUR = "#d62728"


def mlp_neurons(activations: npt.ArrayLike, top: Sequence[int], title: str) -> Figure:
    """Bars of every hidden neuron's activation [M] by its index; the neurons in `top` in
    another colour, each named above its bar."""
    acts = as_array(activations, 1, "activations")
    chosen = {int(n): rank for rank, n in enumerate(top)}
    colours = [TOP_COLOUR if n in chosen else QUIET_COLOUR for n in range(acts.shape[0])]
    text = [_("neuron {n}", n=n) if n in chosen else "" for n in range(acts.shape[0])]
    bar = {
        "type": "bar", "x": np.arange(acts.shape[0]), "y": acts,
        "marker": {"color": colours, "line": {"width": 0}}, "text": text,
        "textposition": "outside", "cliponaxis": False, "textfont": {"color": TOP_COLOUR},
        "hovertemplate": _("neuron {n}", n="%{x}") + ": %{y:.3f}<extra></extra>",
    }  # fmt: skip
    low, high = float(min(acts.min(initial=0.0), 0.0)), float(acts.max(initial=0.0))
    return apply_layout(
        {"data": [bar]}, title, 340, bargap=0.0,
        xaxis=number_axis(_("hidden neuron")),
        yaxis={"title": {"text": _("activation")}, "range": [low, high * 1.15 + 1e-9]},
    )  # fmt: skip
