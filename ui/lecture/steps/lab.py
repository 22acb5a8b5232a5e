"""The lecture's last step, the lab (slide 48): build the Transformer yourself, in the
notebook, checked against the shipped models; and spot the bug on the real model."""

from __future__ import annotations

import streamlit as st

from i18n import N_, _
from ui.lecture.kit import try_your_own
from ui.parts.lab import exercises, notebook_download, spot_the_bug

SLUG = "build-it-yourself"  # its address (/lecture-build-it-yourself); it never changes
TITLE = N_("Build it yourself")
IDEA = N_(
    "The lab: write attention, the mask, the positions, the heads, the layer, the encoder "
    "and generation yourself, and let the checker compare them with the real model."
)
EXAMPLE = "The cat sat on the mat because it was warm."


def intro() -> None:
    st.markdown(_(
        "Each exercise of the notebook is one idea of the lecture: a function to write, with "
        "its formula and its shapes. `python -m lab check` runs it against the shipped "
        "models on sentences drawn at random and names the classic mistakes."
    ))
    left, right = st.columns([1, 2])
    with left:
        notebook_download("l13_notebook")
    with right:
        exercises()
    st.subheader(_("Spot the bug"))
    st.markdown(_(
        "Four classic mistakes, each run on the shipped decoder with the same sentence: no "
        "1/√d, the mask after the softmax, the softmax over the wrong axis, no positions. "
        "Which bug made which picture?"
    ))


def draw() -> None:
    text = try_your_own("l13_text", _("A sentence"), EXAMPLE) or EXAMPLE
    spot_the_bug(text, "l13")
