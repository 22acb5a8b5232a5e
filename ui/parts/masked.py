"""The Masked page's own part: how BERT learns, its 15% of the tokens drawn at random
(slide 44), on the sentence at hand."""

from __future__ import annotations

import streamlit as st

import analysis
import viz
from analysis.training import AS_MASK, AS_RANDOM, MASK_SHARE, draw_masking
from ui import cache
from ui.figures import chart
from ui.show import md_escape
from ui.view import View


def _draw_again() -> None:
    st.session_state["bert_seed"] = st.session_state.get("bert_seed", 0) + 1


@st.fragment
def bert_masking(view: View) -> None:
    """BERT's 15% drawn at random (80% [MASK], 10% random, 10% unchanged), redrawn on a click,
    with the model's guess at each chosen position."""
    t, name, device = view.trace, view.model_name, view.device
    st.subheader("How BERT learns: 15% of the tokens, drawn at random")
    words = analysis.word_positions(t.tokens)
    if not words:
        st.info("The sentence has no word to mask.")
        return
    specials = cache.special_ids(name, device)
    vocab = cache.vocabulary(name, device)
    seed = st.session_state.get("bert_seed", 0)
    draws = draw_masking(t.ids, words, specials["[MASK]"], len(vocab), specials.values(), seed)
    st.button("Draw again", key="bert_draw", on_click=_draw_again, icon=":material/casino:")
    ids = list(int(i) for i in t.ids)
    for d in draws:
        ids[d.position] = d.shown
    seen = cache.get_trace_ids(tuple(ids), name, device)
    chart("bert_strip", (view.key, tuple(ids)), viz.token_strip, seen.tokens, seen.ids,
          title=f"what the model reads (draw {seed + 1})",
          highlight=[d.position for d in draws], filename="bert_masking")  # fmt: skip
    probs = analysis.prediction_probs(seen.logits[[d.position for d in draws]], specials.values())
    rows = []
    for d, p in zip(draws, probs, strict=True):
        best = int(p.argmax())
        rows.append({"position": d.position, "token": t.tokens[d.position],
                     "the model reads": vocab[d.shown] + ("" if d.how == "[MASK]" else
                                                          f" ({d.how})"),
                     "its first guess": vocab[best],
                     "p(token)": round(float(p[d.original]), 3)})  # fmt: skip
    st.dataframe(rows, hide_index=True)
    right = sum(r["its first guess"] == r["token"] for r in rows)
    st.caption(
        f"{MASK_SHARE:.0%} of the {len(words)} words, at least one, are chosen "
        f"({len(draws)} here); each is hidden behind [MASK] with probability {AS_MASK:.0%}, "
        f"swapped for a random token with {AS_RANDOM:.0%}, and left as it is with "
        f"{1 - AS_MASK - AS_RANDOM:.0%}, so the model must check every token, not only the "
        f"masks. The loss counts only the chosen positions. Its first guess is right at "
        f"{right} of {len(rows)}: '{md_escape(rows[0]['token'])}' gets "
        f"{rows[0]['p(token)']:.0%}."
    )
