"""The lecture's training views on the sentence at hand: how a decoder learns from every
position at once (slide 45) and how BERT's masking is drawn (slide 44)."""

from __future__ import annotations

import math

import streamlit as st

import analysis
import viz
from analysis.training import AS_MASK, AS_RANDOM, MASK_SHARE, draw_masking, shifted_targets
from ui import cache
from ui.figures import chart
from ui.frame import View
from ui.show import md_escape

MAX_COLUMNS = 40  # positions drawn in the shifted-targets figure (the rest are summed up)


def gpt_targets(view: View) -> None:
    """Inputs and targets shifted by one, the model's first guess and p(target) at each."""
    t, name, device = view.trace, view.model_name, view.device
    st.subheader("How a decoder learns from this sentence")
    if len(t.tokens) < 2:
        st.info("The sentence needs at least two tokens to have a next one.")
        return
    s = shifted_targets(t.tokens, t.logits, cache.vocabulary(name, device),
                        cache.special_ids(name, device).values())  # fmt: skip
    n = min(len(s.inputs), MAX_COLUMNS)
    chart("causal_targets", view.key, viz.shifted_targets, s.inputs[:n], s.targets[:n],
          s.predicted[:n], s.p_target[:n], title="targets = inputs shifted by one",
          filename="shifted_targets")  # fmt: skip
    more = f" (the first {n} are drawn)" if n < len(s.inputs) else ""
    st.caption(
        f"One sentence, {len(s.inputs)} lessons at once{more}: at every position the model "
        "reads the tokens up to there (the causal mask hides the rest) and is scored on the "
        f"next one. Here its first guess is right at {s.hits} of {len(s.inputs)} positions; "
        f"the training loss, the mean of −log p(target), is {s.loss:.2f} "
        f"(perplexity {math.exp(min(s.loss, 50)):,.1f}). Training lowers it "
        "for every position in one backward pass."
    )


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
