"""The lecture's step on the layer: residual stream, add & norm, MLP."""

from __future__ import annotations

import streamlit as st

import viz
from analysis.lecture import sublayer_change
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own

SLUG = "transformer-layer"  # its address (/lecture-transformer-layer); it never changes
TITLE = "The Transformer layer"
IDEA = "Attention and an MLP, each added to the residual stream, then normalised."



def draw() -> None:
    name, device = pick("tokens")
    text = try_your_own("l8_text", "Sentence", "The cat sat on the mat.")
    t = cache.get_trace(text or "The cat sat", name, device)
    sizes, cols = sublayer_change(t)
    attn, mlp = sizes[:, 0::2].mean(), sizes[:, 1::2].mean()
    answer = "attention" if attn > mlp else "the MLP"
    st.latex(r"x \leftarrow \mathrm{Norm}(x + \mathrm{Attention}(x)) \qquad "
             r"x \leftarrow \mathrm{Norm}(x + \mathrm{MLP}(x))")  # fmt: skip
    if predict("l8", "Each sublayer adds its output to the token's vector (the residual "
               "stream). Which adds more, relative to the vector it is added to?",
               ["attention", "the MLP"], answer,
               f"On average over tokens and layers: attention {attn:.2f}, MLP {mlp:.2f} "
               "(|added| / |vector|)."):  # fmt: skip
        chart("l8_sizes", (text, name), viz.matrix_heatmap, sizes, t.tokens, cols,
              title="|what each sublayer adds| / |the vector it is added to|", signed=False,
              x_title="sublayer", filename="lecture_layer")  # fmt: skip
