"""Lab. Build it yourself: the notebook's exercises, and Spot the bug on the shared sentence."""

import streamlit as st

from i18n import N_, _
from ui.frame import frame
from ui.lecture import classroom
from ui.parts.lab import SPOT_MODEL, exercises, notebook_download, spot_shape, spot_the_bug
from ui.show import keep_state, layer_head, lazy_sections
from ui.view import View


def spot(view: View) -> None:
    """Each classic mistake run on the shipped clm with the sentence: which bug is which?"""
    st.markdown(_(
        "The same sentence, the same weights of the shipped **{model}**, and the lab's "
        "reference code with **one classic mistake** swapped in: the picture changes. Which "
        "bug made which picture? Guess with the class, then reveal.", model=SPOT_MODEL,
    ))  # fmt: skip
    layer, head, _average = layer_head("lab", *spot_shape(), average=False)
    classroom.enter("lab")  # in a class (?class=): each picture is a poll
    spot_the_bug(view.sentence, "lab_spot", layer, head)


def draw(view: View) -> None:
    """The page below its header (ui.frame.body): drawn again for each new sentence."""
    keep_state("lab_layer", "lab_head")  # their tab may be closed
    lazy_sections("build", {
        "spot": (_("Spot the bug"), lambda: spot(view)),
        "exercises": (_("The exercises"), lambda: (notebook_download("lab_notebook"), exercises())),
    })  # fmt: skip


frame(
    "build",
    draw,
    N_("The lecture ends with a lab: students write the Transformer themselves, in a notebook, "
       "one function per idea (attention, the causal mask, the positional encoding, multi-head "
       "attention, the layer, the encoder, generation). A checker, `python -m lab check`, "
       "compares each function with the shipped models on sentences drawn at random and names "
       "the classic mistakes. **Spot the bug** shows what those mistakes do to the attention "
       "of the real model on your sentence. The server only runs the lab's own code."),
)
