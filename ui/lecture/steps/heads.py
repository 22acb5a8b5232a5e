"""The lecture's step on multi-head attention."""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from analysis.heads import ROLES, head_roles
from analysis.interventions import effect_grid, head_name, ranked_heads, single_heads
from analysis.query import head_links
from i18n import N_, _
from model.examples import PROBES, RIVER_BANK
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own
from ui.parts.interventions.knockout import Question, drops, effects
from ui.show import when_open

SLUG = "multi-head-attention"  # its address (/lecture-multi-head-attention); it never changes
TITLE = N_("Multi-head attention")
IDEA = N_(
    "Heads in parallel, each with its own habit; a link between two words must stand out from"
    " the habit."
)
RESEARCHER = PROBES[2]
NEITHER = N_("neither: no head singles one out")
# What analysis.heads.ROLES measures, as the step shows it: its name, what it measures.
ROLE_TEXT = {
    "previous token": (N_("previous token"), N_("the weight on the token just before")),
    "itself": (N_("itself"), N_("the weight on the query's own token")),
    "first token": (N_("first token"),
                    N_("the weight on the first token ([BOS]), a common resting place")),
    "spread": (N_("spread"),
               N_("how spread the weights are: entropy over the most it could be (0 to 1)")),
}  # fmt: skip


def role_names() -> list[str]:
    """The measures of ROLES, in its order, in the session's language."""
    return [_(ROLE_TEXT[role][0]) for role in ROLES]


def roles_chart(key: str, where: tuple, roles: dict[str, np.ndarray], labels: list[str],
                title: str, filename: str) -> None:  # fmt: skip
    """Each head (a row, "L1H1") against each measure of ROLES (a column)."""
    table = np.stack([r.reshape(-1) for r in roles.values()], axis=1)
    chart(key, where, viz.matrix_heatmap, table, labels, role_names(), title=title,
          signed=False, x_title=_("measure"), y_title=_("layer, head"),
          filename=filename)  # fmt: skip


def link_said(word: str, h) -> str:
    """What the strongest head from "he" to `word` gives it, against the other words."""
    values = {"word": word, "weight": h.weight, "layer": h.layer + 1, "head": h.head + 1,
              "others": h.others}  # fmt: skip
    if h.link:
        return _("'{word}': at most {weight:.2f} (layer {layer}, head {head}) while the other "
                 "words give it {others:.2f} (a link).", **values)  # fmt: skip
    return _("'{word}': at most {weight:.2f} (layer {layer}, head {head}) while the other "
             "words give it {others:.2f} (no link).", **values)  # fmt: skip


def draw() -> None:
    name, device = pick("causal")  # a decoder: its heads' habits are easy to tell apart
    t = cache.get_trace(RESEARCHER, name, device)
    roles = head_roles(t.attention_stack(), t.causal)
    labels = [f"L{n + 1}H{h + 1}" for n in range(t.n_layers) for h in range(t.n_heads)]
    roles_chart("l7_roles", (RESEARCHER, name), roles, labels,
                _("what each head does (averaged over the queries)"), "lecture_heads")
    st.caption(" · ".join(f"**{_(n)}**: {_(m)}" for n, m in (ROLE_TEXT[r] for r in ROLES)))
    he = t.tokens.index("he")
    links = {w: head_links(t.attention_stack(), t.tokens, he, t.tokens.index(w), t.causal)[0]
             for w in ("researcher", "assistant")}  # fmt: skip
    linked = [w for w, h in links.items() if h.link]
    answer = max(linked, key=lambda w: links[w].lift) if linked else NEITHER
    why = " ".join(link_said(w, h) for w, h in links.items())
    if predict("l7", _("In *{sentence}*, which word does a head link “he” to?",
                       sentence=RESEARCHER), ["researcher", "assistant", NEITHER], answer, why,
               label=lambda c: _(c) if c == NEITHER else c):  # fmt: skip
        best = links[answer] if answer in links else max(links.values(), key=lambda h: h.weight)
        chart("l7_he", (RESEARCHER, name, best.layer, best.head), viz.attention_row,
              t.layers[best.layer].attention[best.head][he], t.tokens, "he", query_index=he,
              title=_("“he” attends to… (layer {layer}, head {head})", layer=best.layer + 1,
                      head=best.head + 1), filename="lecture_he")  # fmt: skip
        enc, edev = pick("masked")
        masked = RESEARCHER.replace(" he ", " [MASK] ")
        guesses = cache.fill_mask_ids(tuple(cache.get_trace(masked, enc, edev).ids), enc, edev, 3)
        st.caption(_("With “he” hidden, the encoder guesses {guesses}.",
                     guesses=", ".join(f"{w} {p:.0%}" for w, p in guesses[0])))  # fmt: skip
    when_open(_("Knock heads out: which one matters for “bank”?"), "l7_knock",
              ":material/block:", bank_heads)  # computed only once opened
    with st.expander(_("Try your own sentence"), expanded=False):
        text = try_your_own("l7_own", _("A sentence"),
                            "The cat sat on the mat because it was warm.")  # fmt: skip
        if text:
            own = cache.get_trace(text, name, device)
            roles_chart("l7_own_roles", (text, name), head_roles(own.attention_stack(),
                        own.causal), labels, _("what each head does on your sentence"),
                        "lecture_own_heads")  # fmt: skip


def bank_heads() -> None:
    """Predict which head, knocked out alone, costs the encoder most on the river's
    "bank", then reveal the grid of every head's effect (one batched pass)."""
    name, device = pick("masked")
    masked = RIVER_BANK.replace("bank.", "[MASK].")
    t = cache.get_trace(masked, name, device)
    vocab = cache.vocabulary(name, device)
    if "bank" not in vocab or "[MASK]" not in t.tokens:
        st.info(_("{model} has no token “bank” to follow.", model=name))
        return
    ids, at, bank = tuple(int(i) for i in t.ids), t.tokens.index("[MASK]"), vocab.index("bank")
    stacks = cache.load_model(name, device).heads()
    heads = single_heads(stacks)
    moved, clean = effects(Question(ids, name, device, (at,), (bank,), "log p(bank)"), heads)
    best = ranked_heads(heads, moved, 1)[0][0]
    if predict("l7_bank", _("In *{sentence}* the encoder puts “bank” first. Which head, "
                            "knocked out alone (its z set to 0 before W_O), lowers that guess "
                            "the most?", sentence=masked),
               [head_name(h) for h in heads], head_name(best), drops(heads, moved, clean)):
        grid, rows = effect_grid(heads, moved, stacks)
        if len(stacks) == 1:  # an encoder's one stack: its rows are its layers
            rows = [_("layer {n}", n=n) for n in range(1, len(rows) + 1)]
        chart("l7_bank_grid", (masked, name), viz.matrix_heatmap, grid, rows,
              [_("head {n}", n=h + 1) for h in range(grid.shape[1])],
              title=_("change in log p(bank), each head knocked out alone"), x_title=_("head"),
              y_title=_("layer"), filename="lecture_bank_heads")  # fmt: skip
