"""The lecture's step on tokens and embeddings."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import viz
from ui import cache
from ui.figures import chart
from ui.lecture.kit import predict, trace_of, try_your_own, word_vector

SLUG = "tokens-and-embeddings"  # its address (/lecture-tokens-and-embeddings); it never changes
TITLE = "Tokens and embeddings"
IDEA = "Text becomes tokens, each token a learned vector; similar words lie close together."



def draw() -> None:
    t, name, device = trace_of("power of industrial AI", "tokens")
    chart("l4_tokens", (t.ids, name), viz.token_strip, t.tokens, t.ids,
          title="“power of industrial AI” as tokens", filename="lecture_tokens")  # fmt: skip
    choices = ["aluminum", "rubber", "bread", "river"]
    steel = word_vector("steel", name, device)
    cos = {w: float(analysis.cosine_matrix(np.stack([steel, word_vector(w, name, device)]))[0, 1])
           for w in choices}  # fmt: skip
    answer = max(cos, key=cos.get)
    if predict("l4", "In the model's embedding table, which word lies nearest to “steel”?",
               choices, answer, "Cosines: " + ", ".join(f"{w} {c:.2f}" for w, c in cos.items())
               + ". Words used in similar sentences drift to similar vectors."):  # fmt: skip
        sid = cache.get_trace("steel", name, device)
        first = analysis.word_positions(sid.tokens)[0]
        near, _ = cache.neighbours(name, device, int(sid.ids[first]), 8)  # fmt: skip
        chart("l4_near", ("steel", name), viz.topk_bar, near,
              title="the 8 nearest tokens to “steel” (cosine)", filename="lecture_steel")
    with st.expander("Try your own word", expanded=False):
        word = try_your_own("l4_own", "A word", "cat")
        if word:
            wt = cache.get_trace(word, name, device)
            first = analysis.word_positions(wt.tokens)
            if first:
                near, _ = cache.neighbours(name, device, int(wt.ids[first[0]]), 8)
                chart("l4_own_near", (word, name), viz.topk_bar, near,
                      title=f"nearest to “{wt.tokens[first[0]]}”", filename="lecture_own_near")
