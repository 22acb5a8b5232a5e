"""The Masked page's own parts: the guesses at each [MASK], where the [MASK] looked, and
how BERT learns, its 15% of the tokens drawn at random (slide 44), on the sentence at hand.
Its experiments (knock out heads, every layer's guess, attention beside attribution) are in
ui/parts/interventions/, patching A into B with compare mode (ui/parts/compare.py)."""

from __future__ import annotations

import streamlit as st

import analysis
import viz
from analysis.training import AS_MASK, AS_RANDOM, MASK_SHARE, draw_masking
from i18n import N_, _, particle
from model import Trace
from ui import cache
from ui.figures import chart
from ui.show import layer_head, md_escape, window_picker
from ui.view import View

MAX_DRAWN = 6  # masks drawn as charts; the others are listed (a visitor may type 300)
HOW = {"random token": N_("random token"), "unchanged": N_("unchanged")}  # a draw's `how`
COLUMNS = {"position": N_("position"), "token": N_("token"),
           "the model reads": N_("the model reads"), "its first guess": N_("its first guess"),
           "p(token)": "p(token)"}  # fmt: skip


def guesses(view: View, mt: Trace, masked: list[int], typed: list[int], ranked: list,
            where: tuple, k: int) -> None:  # fmt: skip
    """For each hidden position: the ranked guesses, and the rank of the hidden token."""
    st.subheader(_("The model's guesses"))
    t, drawn = view.trace, masked[:MAX_DRAWN]
    specials = cache.special_ids(view.model_name, view.device)
    probs = analysis.prediction_probs(mt.logits[drawn], specials.values())
    columns = st.columns(min(len(drawn), 3))
    for n, (pos, candidates) in enumerate(zip(drawn, ranked, strict=False)):
        with columns[n % len(columns)]:
            title = (_("[MASK] at position {pos}", pos=pos) if pos in typed else
                     _("[MASK] at position {pos} (was “{token}”)", pos=pos, token=t.tokens[pos]))
            chart(f"mask_topk_{n}", (where, pos, k), viz.topk_bar, candidates,
                  title=title, filename=f"mask_{pos}")  # fmt: skip
            if pos not in typed:
                p = probs[n][t.ids[pos]]
                rank = int((probs[n] > p).sum()) + 1
                st.caption(_(
                    "The hidden token, {token}, is guess number {rank} with probability {p}.",
                    token=md_escape(t.tokens[pos]), rank=format(rank, ","), p=format(p, ".1%"),
                    token_topic=particle(md_escape(t.tokens[pos]), "은/는"),
                ))
    if len(masked) > MAX_DRAWN:
        later = zip(masked[MAX_DRAWN:], ranked[MAX_DRAWN:], strict=True)
        rest = ", ".join(f"{p}: {c[0][0]}" for p, c in later)
        st.caption(_("{n} more masks, first guesses (position: token): {rest}. All of them "
                     "are in the JSON below.", n=len(masked) - MAX_DRAWN,
                     rest=md_escape(rest[:2000])))  # fmt: skip


# Where each [MASK] looked (pickers rerun only this part)
@st.fragment
def mask_attention(mt: Trace, masked: list[int], where: tuple) -> None:
    st.subheader(_("Where the [MASK] looked"))
    layer, head, label = layer_head("mask", mt.n_layers, mt.n_heads, layer=mt.n_layers - 1)
    window = window_picker(len(mt.tokens), "mask_window", _("Zoom to key positions"))
    weights = analysis.head_weights(mt, layer, head)
    for n, pos in enumerate(masked):
        chart(
            f"mask_row_{n}", (where, layer, head, pos), viz.attention_row, weights[pos],
            mt.tokens, "[MASK]", query_index=pos, window=window, rows=False,
            title=_("attention of the [MASK] at position {pos}, {label}", pos=pos, label=label),
            filename=f"mask_attention_{pos}",
        )  # fmt: skip
    words = [i for i in analysis.word_positions(mt.tokens) if mt.tokens[i] != "[MASK]"]
    top = max(words, key=lambda i: weights[masked[0], i]) if words and masked else None
    said = _("The bars say how much of each token's value flows into the [MASK]'s vector.")
    if top is not None:
        said += " " + _(
            "Here the first [MASK] looks most at '{token}' ({weight}) in {label}; other heads and "
            "layers look elsewhere.", token=md_escape(mt.tokens[top]),
            weight=format(weights[masked[0], top], ".2f"), label=label,
        )
    st.caption(said)


def _draw_again() -> None:
    st.session_state["bert_seed"] = st.session_state.get("bert_seed", 0) + 1


@st.fragment
def bert_masking(view: View) -> None:
    """BERT's 15% drawn at random (80% [MASK], 10% random, 10% unchanged), redrawn on a click,
    with the model's guess at each chosen position."""
    t, name, device = view.trace, view.model_name, view.device
    st.subheader(_("How BERT learns: 15% of the tokens, drawn at random"))
    words = analysis.word_positions(t.tokens)
    if not words:
        st.info(_("The sentence has no word to mask."))
        return
    specials = cache.special_ids(name, device)
    vocab = cache.vocabulary(name, device)
    seed = st.session_state.get("bert_seed", 0)
    draws = draw_masking(t.ids, words, specials["[MASK]"], len(vocab), specials.values(), seed)
    st.button(_("Draw again"), key="bert_draw", on_click=_draw_again, icon=":material/casino:")
    ids = list(int(i) for i in t.ids)
    for d in draws:
        ids[d.position] = d.shown
    seen = cache.get_trace_ids(tuple(ids), name, device)
    chart("bert_strip", (view.key, tuple(ids)), viz.token_strip, seen.tokens, seen.ids,
          title=_("what the model reads (draw {n})", n=seed + 1),
          highlight=[d.position for d in draws], filename="bert_masking")  # fmt: skip
    probs = analysis.prediction_probs(seen.logits[[d.position for d in draws]], specials.values())
    rows = []
    for d, p in zip(draws, probs, strict=True):
        best = int(p.argmax())
        rows.append({"position": d.position, "token": t.tokens[d.position],
                     "the model reads": vocab[d.shown] + ("" if d.how == "[MASK]" else
                                                          f" ({_(HOW.get(d.how, d.how))})"),
                     "its first guess": vocab[best],
                     "p(token)": round(float(p[d.original]), 3)})  # fmt: skip
    st.dataframe([{_(COLUMNS[k]): v for k, v in row.items()} for row in rows], hide_index=True)
    right = sum(r["its first guess"] == r["token"] for r in rows)
    st.caption(_(
        "{share} of the {n} words, at least one, are chosen ({drawn} here); each is hidden "
        "behind [MASK] with probability {as_mask}, swapped for a random token with "
        "{as_random}, and left as it is with {kept}, so the model must check every token, not "
        "only the masks. The loss counts only the chosen positions. Its first guess is right "
        "at {right} of {rows}: '{token}' gets {p}.",
        share=format(MASK_SHARE, ".0%"), n=len(words), drawn=len(draws),
        as_mask=format(AS_MASK, ".0%"), as_random=format(AS_RANDOM, ".0%"),
        kept=format(1 - AS_MASK - AS_RANDOM, ".0%"), right=right, rows=len(rows),
        token=md_escape(rows[0]["token"]), p=format(rows[0]["p(token)"], ".0%"),
    ))
