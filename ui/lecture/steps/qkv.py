"""The lecture's step on query, key, value: a soft dictionary."""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from analysis.lecture import soft_lookup
from i18n import N_, _
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own, word_vector
from ui.show import md_escape

SLUG = "query-key-value"  # its address (/lecture-query-key-value); it never changes
TITLE = N_("Query, key, value")
IDEA = N_(
    "A dict finds one exact key; attention scores every key against the query and blends all "
    "the values."
)
LANGUAGES = ["c++", "java", "python", "haskell"]


def draw() -> None:
    name, device = pick("tokens")
    table = {"c++": "fast, compiled", "java": "typed, everywhere", "python": "easy, dynamic",
             "haskell": "pure, strongly typed"}  # code: its values stay English  # fmt: skip
    query = try_your_own("l3_query", _("The query"), "fast and strongly typed language")
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(_("**A Python dict: a hard lookup**"))
        st.code(f"languages = {table}\nlanguages[{query!r}]", language="python", wrap_lines=True)
        if query in table:
            st.success(_("→ {value}: the exact key, one value.", value=md_escape(table[query])))
        else:
            st.error(_("KeyError: {query}: no key is exactly the query.",
                       query=md_escape(repr(query))))  # fmt: skip
    keys = np.stack([word_vector(w, name, device) for w in LANGUAGES])
    found = soft_lookup(word_vector(query or "language", name, device), keys, keys)
    answer = LANGUAGES[int(found.weights.argmax())]
    with c2:
        st.markdown(_("**Attention: a soft lookup**"))
        st.caption(_("Every key is scored against the query (q·k/√d), the scores go through a "
                     "softmax, and the answer is the weighted blend of all the values. Here q, "
                     "k and v are {model}'s trained embeddings of the words (no learned "
                     "projections yet: each layer adds W_Q, W_K and W_V).", model=name))
    if predict("l3", _("Which key does the query “{query}” weigh most?", query=md_escape(query)),
               LANGUAGES, answer, _("Every key gets some weight; none is an exact match.")):
        chart("l3_weights", (query, name), viz.topk_bar,
              list(zip(LANGUAGES, found.weights.tolist(), strict=True)),
              title=_("softmax(q·k/√d): the weight of each key"),
              filename="lecture_soft_lookup")  # fmt: skip
        blend = " + ".join(f"{w:.2f}·v({k})" for k, w in zip(LANGUAGES, found.weights,
                                                                  strict=True))  # fmt: skip
        st.caption(f"output = {blend}")
