"""The lecture's step on tokens and embeddings."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import N_, _
from ui import cache
from ui.figures import chart
from ui.lecture.kit import predict, trace_of, try_your_own, word_vector

SLUG = "tokens-and-embeddings"  # its address (/lecture-tokens-and-embeddings); it never changes
TITLE = N_("Tokens and embeddings")
IDEA = N_("Text becomes tokens, each token a learned vector; similar words lie close together.")



def draw() -> None:
    t, name, device = trace_of("power of industrial AI", "tokens")
    chart("l4_tokens", (tuple(t.ids), name), viz.token_strip, t.tokens, t.ids,
          title=_("“power of industrial AI” as tokens"), filename="lecture_tokens")
    choices = ["aluminum", "rubber", "bread", "river"]
    steel = word_vector("steel", name, device)
    cos = {w: float(analysis.cosine_matrix(np.stack([steel, word_vector(w, name, device)]))[0, 1])
           for w in choices}  # fmt: skip
    answer = max(cos, key=cos.get)
    cosines = ", ".join(f"{w} {c:.2f}" for w, c in cos.items())
    if predict("l4", _("In the model's embedding table, which word lies nearest to “steel”?"),
               choices, answer, _("Cosines: {cosines}. Words used in similar sentences drift "
                                  "to similar vectors.", cosines=cosines)):  # fmt: skip
        sid = cache.get_trace("steel", name, device)
        first = analysis.word_positions(sid.tokens)[0]
        near = cache.neighbours(name, device, int(sid.ids[first]), 8)[0]
        chart("l4_near", ("steel", name), viz.topk_bar, near,
              title=_("the {n} nearest tokens to “steel” (cosine)", n=8),
              filename="lecture_steel")  # fmt: skip
    with st.expander(_("Try your own word"), expanded=False):
        word = try_your_own("l4_own", _("A word"), "cat")
        if word:
            wt = cache.get_trace(word, name, device)
            first = analysis.word_positions(wt.tokens)
            if first:
                near = cache.neighbours(name, device, int(wt.ids[first[0]]), 8)[0]
                chart("l4_own_near", (word, name), viz.topk_bar, near,
                      title=_("nearest to “{token}”", token=wt.tokens[first[0]]),
                      filename="lecture_own_near")  # fmt: skip
