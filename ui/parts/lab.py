"""The Lab page's and the lab step's own parts (slide 48): the exercises of the notebook, the
notebook to download, and "Spot the bug", each classic mistake run on the shipped model with
the visitor's sentence (lab.spot_the_bug: the server runs the lab's own reference with one
mistake swapped in, never code a visitor sends)."""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

import viz
from i18n import DEFAULT, _, language
from ui.cache import model_work
from ui.figures import chart
from ui.lecture.kit import predict
from ui.show import md_escape

if TYPE_CHECKING:
    from lab.spot import Spot

SPOT_MODEL = "clm"  # a decoder: the mask's mistakes show only where there is a mask
MAX_SPOT_CHARS = 300  # the bugs' pictures are drawn for the first tokens of a long text
LETTERS = "ABCD"


@st.cache_resource(max_entries=64, show_spinner=False)
@model_work
def spots(text: str, layer: int) -> list:
    """lab.spot_the_bug for one sentence and layer, kept for every session (read only)."""
    import lab

    return lab.spot_the_bug(text[:MAX_SPOT_CHARS], model=SPOT_MODEL, layer=layer)


@st.cache_resource(show_spinner=False)
def spot_shape() -> tuple[int, int]:
    """(layers, heads) of the model the bugs run on."""
    from lab.weights import shipped

    cfg = shipped(SPOT_MODEL).cfg
    return cfg.n_layers, cfg.n_heads


def notebook_download(key: str) -> None:
    """The student's notebook, as shipped (every exercise still to write), in the session's
    language: the Korean one has its explanations in Korean and its checks speak Korean."""
    from lab.notebook import NOTEBOOKS

    path = NOTEBOOKS.get(language(), NOTEBOOKS[DEFAULT])
    st.download_button(_("Download the notebook ({file})", file=path.name), path.read_bytes(),
                       file_name=path.name, mime="application/x-ipynb+json",
                       key=key, icon=":material/download:")  # fmt: skip
    st.caption(_("Open it in Jupyter or VS Code; `python -m lab check {file}` then checks "
                 "every exercise against the shipped models (lab/README.md).",
                 file=path.name))  # fmt: skip


def exercises() -> None:
    """Each exercise of the notebook: its name and the explanation the notebook gives (in
    the current language; the notebook itself is in English)."""
    from lab.notebook import EXERCISES

    for name, idea, _stub in EXERCISES:  # (name, its explanation, its stub)
        text = _(idea)
        title = text.strip().splitlines()[0].lstrip("# ").strip()
        with st.expander(title or name):
            st.markdown(text)


def order(text: str, n: int) -> list[int]:
    """The pictures' order for a sentence: shuffled, the same for everyone who types it."""
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    picks = list(range(n))
    random.Random(seed).shuffle(picks)
    return picks


def spot_the_bug(text: str, key: str, layer: int = 0, head: int = 0) -> None:
    """The mistakes' pictures in one figure, two by two, each under a letter, in an order of
    the sentence's own; below them one question a picture: the class says which bug made
    each, and its reveal gives the bug's one-line diff and what it does to the numbers. Once
    one is revealed, the model's own attention (the same for every picture) is drawn below
    the left column's questions, to compare with."""
    found = spots(text, layer)
    where = (text[:MAX_SPOT_CHARS], layer, head)
    titles = [s.mistake.title for s in found]  # ids (English), shown through _()
    label = _("{model}, layer {layer}, head {head}", model=SPOT_MODEL, layer=layer + 1,
              head=head + 1)  # fmt: skip
    picks = list(zip(LETTERS, order(text, len(found)), strict=False))
    pictures = np.stack([np.nan_to_num(found[n].weights[head], nan=0.0) for _l, n in picks])
    cols = 2 if len(picks) % 2 == 0 else 1
    chart(f"{key}_bugs", where, viz.attention_grid,  # the order: of the text
          pictures.reshape(-1, cols, *pictures.shape[1:]), found[0].tokens,
          title=_("With one bug each: {label}", label=label),
          panel_titles=[_("picture {letter}", letter=letter) for letter, _n in picks],
          filename="lab_bugs")  # fmt: skip
    columns, revealed = st.columns(cols), False
    for i, (letter, n) in enumerate(picks):  # A and C on the left, as in the figure
        with columns[i % cols]:
            revealed |= _ask(found[n], letter, key, titles)
    if revealed:  # under the left column's questions: no row of its own to send
        with columns[0]:
            chart(f"{key}_model", where, viz.attention_heatmap, found[0].reference[head],
                  found[0].tokens, title=_("the model's own: {label}", label=label),
                  filename="lab_model_attention")  # fmt: skip


def _ask(s: Spot, letter: str, key: str, titles: list[str]) -> bool:
    """One picture's question; whether it is revealed (then its answer ends with the bug's
    hint and its one-line diff)."""
    effects = md_escape("; ".join(s.effects())) + "."
    more = md_escape(_(s.mistake.hint)) + f"\n\n```diff\n{s.mistake.diff}\n```"
    return predict(f"{key}_{letter}", _("Which bug made picture {letter}?", letter=letter),
                   titles, s.mistake.title, effects, label=_, more=more)  # fmt: skip
