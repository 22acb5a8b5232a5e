"""The lecture's step on the layer: residual stream, add & norm, MLP."""

from __future__ import annotations

import streamlit as st

import viz
from analysis.lecture import sublayer_change
from i18n import N_, _
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own

SLUG = "transformer-layer"  # its address (/lecture-transformer-layer); it never changes
TITLE = N_("The Transformer layer")
IDEA = N_("Attention and an MLP, each added to the residual stream, then normalised.")
ATTENTION, MLP = N_("attention"), N_("the MLP")


def sublayer_names(n_layers: int) -> list[str]:
    """sublayer_change's columns in the session's language: "L1 attention", "L1 MLP", ..."""
    return [name for n in range(1, n_layers + 1)
            for name in (_("L{n} attention", n=n), f"L{n} MLP")]  # fmt: skip


def draw() -> None:
    name, device = pick("tokens")
    text = try_your_own("l8_text", _("Sentence"), "The cat sat on the mat.")
    t = cache.get_trace(text or "The cat sat", name, device)
    sizes, _cols = sublayer_change(t)
    attn, mlp = sizes[:, 0::2].mean(), sizes[:, 1::2].mean()
    answer = ATTENTION if attn > mlp else MLP
    st.latex(r"x \leftarrow \mathrm{Norm}(x + \mathrm{Attention}(x)) \qquad "
             r"x \leftarrow \mathrm{Norm}(x + \mathrm{MLP}(x))")  # fmt: skip
    if predict("l8", _("Each sublayer adds its output to the token's vector (the residual "
                       "stream). Which adds more, relative to the vector it is added to?"),
               [ATTENTION, MLP], answer,
               _("On average over tokens and layers: attention {attn:.2f}, MLP {mlp:.2f} "
                 "(|added| / |vector|).", attn=attn, mlp=mlp), label=_):  # fmt: skip
        chart("l8_sizes", (text, name), viz.matrix_heatmap, sizes, t.tokens,
              sublayer_names(t.n_layers),
              title=_("|what each sublayer adds| / |the vector it is added to|"), signed=False,
              x_title=_("sublayer"), filename="lecture_layer")  # fmt: skip
