"""The lecture's step on encoder-decoder and cross-attention."""

from __future__ import annotations

import streamlit as st

import analysis
import viz
from i18n import N_, _
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own, words
from ui.show import md_escape

SLUG = "cross-attention"  # its address (/lecture-cross-attention); it never changes
TITLE = N_("Encoder-decoder and cross-attention")
IDEA = N_("The decoder's queries look at the encoder's keys and values: translation, word by "
          "word.")  # fmt: skip


def draw() -> None:
    name, device = pick("cross_attention")
    text = try_your_own("l9_text", _("English (the toy grammar's words)"),
                        "i go to school").lower()  # fmt: skip
    text = text or "i go to school"
    out = cache.translate(text, name, device)
    if out.unknown:
        st.warning(_("Not in the toy grammar's vocabulary: {words}. Try the lecture's sentence, "
                     "i go to school.", words=", ".join(md_escape(w) for w in out.unknown)))
        return
    t = cache.get_trace(text, name, device)
    st.markdown(f"**{md_escape(text)}** → **{md_escape(out.text)}**")
    src = t.encoder
    cross = t.cross_layers[-1].attention.mean(axis=0)  # [T_target, T_source]
    target = next((i for i, tok in enumerate(t.tokens) if "학교" in tok), len(t.tokens) - 1)
    row = max(target - 1, 0)  # the decoder position that writes it
    english = list(words(src))
    keys = [i for i in analysis.word_positions(src.tokens) if src.tokens[i] in english]
    look = max(keys, key=lambda i: cross[row, i]) if keys else 0
    if predict("l9", _("When the decoder writes “{token}”, which English word does it look at "
                       "most (last layer, heads averaged)?", token=t.tokens[target]),
               english, src.tokens[look],
               _("Weight {weight:.2f}: queries come from the decoder, keys and values from the "
                 "encoder.", weight=cross[row, look])):  # fmt: skip
        chart("l9_cross", (text, name), viz.attention_heatmap, cross, t.tokens,
              title=_("cross-attention, last layer, heads averaged"), key_tokens=src.tokens,
              filename="lecture_cross")  # fmt: skip
