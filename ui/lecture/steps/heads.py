"""The lecture's step on multi-head attention."""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from analysis.heads import ROLES, head_roles
from analysis.interventions import effect_grid, head_name, ranked_heads, single_heads
from analysis.query import head_links
from model.examples import PROBES, RIVER_BANK
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own
from ui.parts.interventions.knockout import Question, drops, effects
from ui.show import when_open

SLUG = "multi-head-attention"  # its address (/lecture-multi-head-attention); it never changes
TITLE = "Multi-head attention"
IDEA = (
    "Heads in parallel, each with its own habit; a link between two words must stand out from"
    " the habit."
)
RESEARCHER = PROBES[2]


def draw() -> None:
    name, device = pick("causal")  # a decoder: its heads' habits are easy to tell apart
    t = cache.get_trace(RESEARCHER, name, device)
    roles = head_roles(t.attention_stack(), t.causal)
    labels = [f"L{n + 1}H{h + 1}" for n in range(t.n_layers) for h in range(t.n_heads)]
    table = np.stack([r.reshape(-1) for r in roles.values()], axis=1)
    chart("l7_roles", (RESEARCHER, name), viz.matrix_heatmap, table, labels, list(ROLES),
          title="what each head does (averaged over the queries)", signed=False,
          x_title="measure", y_title="layer, head", filename="lecture_heads")  # fmt: skip
    st.caption(" · ".join(f"**{k}**: {v}" for k, v in ROLES.items()))
    he = t.tokens.index("he")
    links = {w: head_links(t.attention_stack(), t.tokens, he, t.tokens.index(w), t.causal)[0]
             for w in ("researcher", "assistant")}  # fmt: skip
    linked = [w for w, h in links.items() if h.link]
    neither = "neither: no head singles one out"
    answer = max(linked, key=lambda w: links[w].lift) if linked else neither
    why = " ".join(
        f"'{w}': at most {h.weight:.2f} (layer {h.layer + 1}, head {h.head + 1}) while the "
        f"other words give it {h.others:.2f}{' (a link)' if h.link else ' (no link)'}."
        for w, h in links.items()
    )
    if predict("l7", f"In *{RESEARCHER}*, which word does a head link “he” to?",
               ["researcher", "assistant", neither], answer, why):
        best = links[answer] if answer in links else max(links.values(), key=lambda h: h.weight)
        chart("l7_he", (RESEARCHER, name, best.layer, best.head), viz.attention_row,
              t.layers[best.layer].attention[best.head][he], t.tokens, "he", query_index=he,
              title=f"“he” attends to… (layer {best.layer + 1}, head {best.head + 1})",
              filename="lecture_he")  # fmt: skip
        enc, edev = pick("masked")
        masked = RESEARCHER.replace(" he ", " [MASK] ")
        guesses = cache.fill_mask_ids(tuple(cache.get_trace(masked, enc, edev).ids), enc, edev, 3)
        st.caption("With “he” hidden, the encoder guesses "
                   + ", ".join(f"{w} {p:.0%}" for w, p in guesses[0]) + ".")  # fmt: skip
    when_open("Knock heads out: which one matters for “bank”?", "l7_knock",
              ":material/block:", bank_heads)  # computed only once opened
    with st.expander("Try your own sentence", expanded=False):
        text = try_your_own("l7_own", "A sentence", "The cat sat on the mat because it was warm.")
        if text:
            own = cache.get_trace(text, name, device)
            mine = head_roles(own.attention_stack(), own.causal)
            chart("l7_own_roles", (text, name), viz.matrix_heatmap,
                  np.stack([r.reshape(-1) for r in mine.values()], axis=1), labels, list(ROLES),
                  title="what each head does on your sentence", signed=False,
                  x_title="measure", y_title="layer, head", filename="lecture_own_heads")


def bank_heads() -> None:
    """Predict which head, knocked out alone, costs the encoder most on the river's
    "bank", then reveal the grid of every head's effect (one batched pass)."""
    name, device = pick("masked")
    masked = RIVER_BANK.replace("bank.", "[MASK].")
    t = cache.get_trace(masked, name, device)
    vocab = cache.vocabulary(name, device)
    if "bank" not in vocab or "[MASK]" not in t.tokens:
        st.info(f"{name} has no token “bank” to follow.")
        return
    ids, at, bank = tuple(int(i) for i in t.ids), t.tokens.index("[MASK]"), vocab.index("bank")
    stacks = cache.load_model(name, device).heads()
    heads = single_heads(stacks)
    moved, clean = effects(Question(ids, name, device, (at,), (bank,), "log p(bank)"), heads)
    best = ranked_heads(heads, moved, 1)[0][0]
    if predict("l7_bank", f"In *{masked}* the encoder puts “bank” first. Which head, knocked "
               "out alone (its z set to 0 before W_O), lowers that guess the most?",
               [head_name(h) for h in heads], head_name(best), drops(heads, moved, clean)):
        grid, rows = effect_grid(heads, moved, stacks)
        chart("l7_bank_grid", (masked, name), viz.matrix_heatmap, grid, rows,
              [f"head {h + 1}" for h in range(grid.shape[1])],
              title="change in log p(bank), each head knocked out alone", x_title="head",
              y_title="layer", filename="lecture_bank_heads")  # fmt: skip
