"""The lecture's step on gPT: causal mask and generation."""

from __future__ import annotations

import streamlit as st

import model
import viz
from i18n import N_, _
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, top_tokens, try_your_own
from ui.show import md_escape

SLUG = "gpt"  # its address (/lecture-gpt); it never changes
TITLE = N_("GPT: causal prediction")
IDEA = N_("A decoder looks only left and writes the next token, again and again.")
PROMPT = "i go to"


def draw() -> None:
    name, device = pick("causal")
    text = try_your_own("l11_text", _("A prompt"), PROMPT)
    t = cache.get_trace(text or PROMPT, name, device)
    probs = cache.next_distribution(tuple(int(i) for i in t.ids), name, device,
                                    model.Sampling.of(temperature=1.0))  # fmt: skip
    ranked = top_tokens(probs, cache.vocabulary(name, device), 10)
    choices = list(dict.fromkeys([ranked[0][0], "school", "the", "bed"]))[:4]
    if predict("l11", _("After “{prompt}”, which token does the decoder find most likely "
                        "next?", prompt=md_escape(text)), choices, ranked[0][0],
               _("{p:.0%}; it may only look left: the mask puts −∞ above the diagonal.",
                 p=ranked[0][1])):  # fmt: skip
        left, right = st.columns(2)
        with left:
            chart("l11_mask", (text, name), viz.causal_mask_figure,
                  model.additive_mask(model.causal_mask(len(t.tokens))), t.tokens,
                  filename="lecture_mask")  # fmt: skip
        with right:
            chart("l11_next", (text, name), viz.topk_bar, ranked,
                  title=_("the next token"), filename="lecture_next")  # fmt: skip
