"""The lecture's step on bERT: masked prediction."""

from __future__ import annotations

import streamlit as st

import viz
from i18n import N_, _
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own

SLUG = "bert"  # its address (/lecture-bert); it never changes
TITLE = N_("BERT: masked prediction")
IDEA = N_("An encoder guesses hidden words from both sides.")
RIVER_MASKED = "I swam across the river to get to the other [MASK]."


def draw() -> None:
    name, device = pick("masked")
    text = try_your_own("l10_text", _("A sentence with [MASK]"), RIVER_MASKED)
    t = cache.get_trace(text or RIVER_MASKED, name, device)
    if "[MASK]" not in t.tokens:
        st.info(_("Put [MASK] in the sentence for the model to guess."))
        return
    guesses = cache.fill_mask_ids(tuple(t.ids), name, device, 5)[0]
    choices = list(dict.fromkeys([guesses[0][0], "bank", "shore", "river", "side"]))[:4]
    if predict("l10", _("BERT reads the words on both sides of [MASK]. What is its first "
                        "guess?"), choices, guesses[0][0],
               _("{p:.0%} for “{token}”.", p=guesses[0][1], token=guesses[0][0])):  # fmt: skip
        chart("l10_guesses", (text, name), viz.topk_bar, guesses,
              title=_("the encoder's guesses for [MASK]"), filename="lecture_bert")  # fmt: skip
        chart("l10_tokens", (text, name), viz.token_strip, t.tokens, t.ids,
              title=_("what it reads"), highlight=[t.tokens.index("[MASK]")],
              filename="lecture_bert_tokens")  # fmt: skip
