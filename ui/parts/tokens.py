"""The tokens page's "Nearest neighbours" section: a token's nearest neighbours in the
embedding table, on a PCA map and in a table, with what the evaluation measured about them."""

from __future__ import annotations

import streamlit as st

import analysis
import viz
from i18n import _
from ui import cache
from ui.figures import chart
from ui.view import View


def embedding_note(e: dict) -> str:
    """What the evaluation measured about this model's embedding table, in one sentence."""
    steel = ", ".join(e["neighbours"].get("steel", [])[:4])
    syn, rnd = e["synonyms"]["either"], e["random"]["either"]
    return _(
        "Measured (assets/models/evaluation.json): frequent words get meaningful neighbours "
        "(steel: {steel}), rare ones mostly noise: {synonyms} of {pairs} WordNet synonym "
        "pairs are among each other's {k} nearest, {random} of random pairs.",
        steel=steel, synonyms=format(syn, ".1%"), random=format(rnd, ".1%"),
        pairs=e["synonyms"]["pairs"], k=e["k"],
    )


def neighbours(view: View, pos: int) -> None:
    """The token's nearest neighbours in the embedding table: a PCA map and a table."""
    t, key = view.trace, view.key
    k = st.slider(_("Neighbours"), 3, 20, key="tok_k")
    near, near_vecs = cache.neighbours(view.model_name, view.device, int(t.ids[pos]), k)
    left, right = st.columns([3, 2])
    with left:
        points = analysis.neighbour_map(t, pos, near, near_vecs)
        chart("tok_map", (key, pos, k), viz.embedding_map, *points, filename="embedding_map")
    with right:
        st.markdown(_("**Nearest in the vocabulary** (cosine)"))
        table = {_("token"): [w for w, _c in near], _("cosine"): [round(c, 3) for _w, c in near]}
        st.dataframe(table, hide_index=True, height=min(36 * (len(near) + 1), 420))
    st.caption(_(
        "PCA squeezes the vectors onto the two directions along which they differ most; "
        "nearby points have similar embeddings."
    ))
    measured = cache.evaluation_report().get("models", {}).get(view.model_name, {})
    if "embeddings" in measured:
        st.caption(embedding_note(measured["embeddings"]))
