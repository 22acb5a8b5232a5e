"""The lecture's step on similarity and softmax."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import N_, _
from model.examples import PAIRS
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own, word_vector

SLUG = "similarity-and-softmax"  # its address (/lecture-similarity-and-softmax); it never changes
TITLE = N_("Similarity and softmax")
IDEA = N_(
    "Dot product and cosine, scaled by √d, turned into weights by a softmax: "
    "softmax(QKᵀ/√d)V."
)
RIVER, CASH = PAIRS[0]
SHARPER, FLATTER = N_("sharper"), N_("flatter")


# The two words and their similarity rerun alone (a fragment): a new word does not draw
# the temperature's question and charts again, which do not depend on it.
@st.fragment
def similarity(name: str, device: str) -> None:
    row = st.container(horizontal=True, gap="large")
    a = try_your_own("l6_a", _("Word a"), "cat", row, max_chars=40)
    b = try_your_own("l6_b", _("Word b"), "kitten", row, max_chars=40)
    if a and b:
        va, vb = word_vector(a, name, device), word_vector(b, name, device)
        d = va.shape[0]
        cos = float(analysis.cosine_matrix(np.stack([va, vb]))[0, 1])
        st.markdown(f"a·b = {va @ vb:.2f} · a·b/√d = {va @ vb / np.sqrt(d):.2f} (d = {d}) · "
                    f"cosine = {cos:.2f}")  # fmt: skip


def draw() -> None:
    name, device = pick("attention")
    similarity(name, device)
    temp = st.slider(_("Softmax temperature T"), 0.1, 5.0, 1.0, 0.1, key="l6_t")
    t = cache.get_trace(RIVER, name, device)
    q = t.tokens.index("bank")
    steps = analysis.attention_steps(t, cache.attention_weights(name, device, 0), 0, 0)
    scores = steps.masked[q]
    sharp = analysis.softmax_rows(scores[None] / temp)[0]
    flat = analysis.softmax_rows(scores[None] / (temp * 2))[0]
    answer = FLATTER if sharp.max() > flat.max() else SHARPER
    if predict("l6", _("Dividing the scores by a larger temperature (T = {t:.1f} → {t2:.1f}): "
                       "does “bank”'s attention get sharper or flatter?", t=temp, t2=temp * 2),
               [SHARPER, FLATTER], answer,
               _("Its largest weight goes from {before:.2f} to {after:.2f}.",
                 before=sharp.max(), after=flat.max()), label=_):  # fmt: skip
        pairs = list(zip(t.tokens, sharp.tolist(), strict=True))
        chart("l6_row", (name, temp), viz.topk_bar, pairs,
              title=_("softmax(q·k/√d / {t:.1f}) for “bank”, layer 1 head 1", t=temp),
              filename="lecture_softmax")  # fmt: skip
        chart("l6_all", (name,), viz.attention_heatmap, t.layers[0].attention[0], t.tokens,
              title=_("softmax(QKᵀ/√d) for every query: layer 1, head 1"),
              filename="lecture_qk")  # fmt: skip
