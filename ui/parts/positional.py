"""The Positional page's word-order demo: two sentences with the same words in another order,
each word's last-layer vector compared across them, with and without positions.

The demo's point (without positions, attention sees a set) holds for an encoder only: a
causal model's mask lets each word see only the words before it, so its vectors change with
the order even without positions (the shipped decoder: cosines 0.47-0.64 on the lecture's
pair, measured). So a decoder's page runs the demo on an encoder, and says so; every claim
in the caption is computed from the table.
"""

from __future__ import annotations

import streamlit as st

import analysis
from i18n import N_, _, particle
from model import RunOptions, Trace
from ui import cache
from ui.show import download_csv, md_escape, raw_column
from ui.view import View

EXACT = 0.9999  # a cosine this close to 1 is "the same vector" (float32 sums)


def demo_model(name: str) -> str:
    """The model for the demo: `name` when it is an encoder, else the first encoder of the
    catalogue that can show a forward pass (else `name` itself)."""
    infos = cache.catalogue()
    if name in infos and infos[name].kind == "encoder":
        return name
    encoders = [n for n, i in infos.items() if i.kind == "encoder" and "trace" in i.capabilities]
    return encoders[0] if encoders else name


def caption(rows: list[dict], name: str, switched: bool) -> str:
    """What the table shows, in words true of these numbers."""
    if not rows:
        return _("The two sentences share no word: type the same words in another order.")
    off = [row["cosine without positions"] for row in rows]
    on = [row["cosine with positions"] for row in rows]
    who = md_escape(name)
    topic = particle(who, "은/는")  # Korean: the model's name with its particle
    ran = (
        _("Run on **{model}**, an encoder: the page's model is causal, and a causal model's "
          "mask lets each word see only the words before it, so its vectors change with the "
          "order even without positions.", model=who) + " "
        if switched
        else ""
    )
    if min(off) >= EXACT:
        without = _(
            "Without positions {model} gives each word the same vector in both orders "
            "(every cosine {cosine}): without them it reads a bag of words.",
            model=who, model_topic=topic, cosine=format(min(off), ".4f"),
        )
    elif switched:
        without = _("Without positions {model} still tells the orders apart (cosines down "
                    "to {cosine}).", model=who, model_topic=topic,
                    cosine=format(min(off), ".2f"))  # fmt: skip
    else:
        without = _("Without positions {model} still tells the orders apart (cosines down "
                    "to {cosine}): its mask lets each word see only the words before it.",
                    model=who, model_topic=topic, cosine=format(min(off), ".2f"))  # fmt: skip
    return ran + _(
        "Each row pairs a word of sentence A with the same occurrence in sentence B and "
        "compares its vectors after the last layer. {without} With positions the cosines "
        "drop to as low as {cosine}: the order changes what each word becomes.",
        without=without, cosine=format(min(on), ".2f"),
    )


ORDER_PAIR = ("the dog bit the man", "the man bit the dog")  # the two boxes' first text
COLUMNS = {"word": N_("word"), "position in A": N_("position in A"),
           "position in B": N_("position in B"),
           "cosine with positions": N_("cosine with positions"),
           "cosine without positions": N_("cosine without positions")}  # fmt: skip


POSITIONS = {"sinusoidal": N_("sinusoidal"), "learned": N_("learned"), "rotary": N_("rotary"),
             "none": N_("none")}  # a model's `positional`, as the page names it


def kind_of(positional: str) -> str:
    """A model's `positional` ("sinusoidal", "learned", ...) in the session's language."""
    return _(POSITIONS.get(positional, positional))


def shown(rows: list[dict]) -> list[dict]:
    """The table's rows with their column names in the session's language."""
    return [{_(COLUMNS.get(k, k)): v for k, v in row.items()} for row in rows]


def order_matters(view: View) -> None:
    """The demo: two sentences with the same words, with and without positions. Drawn in
    the positional page's fragment, so its two text boxes rerun only that part; their text
    lives in the session state (`pos_a`, `pos_b`, from ORDER_PAIR), kept by the page."""
    st.subheader(_("Without positions, word order is invisible"))
    c1, c2 = st.columns(2)
    first = c1.text_input(_("Sentence A"), key="pos_a")
    second = c2.text_input(_("Sentence B"), key="pos_b")
    if not (first.strip() and second.strip()):
        st.info(_("Type two sentences with the same words in a different order."))
        return
    name = demo_model(view.model_name)
    on, off = (
        [cache.get_trace(text, name, view.device, RunOptions(positions=positions))
         for text in (first, second)]
        for positions in (True, False)
    )
    rows = analysis.order_table(on, off)
    st.dataframe(shown(rows), hide_index=True)
    st.caption(caption(rows, name, switched=name != view.model_name))


def downloads(t: Trace, labels: list[str]) -> None:
    """The positional encoding and the input (embedding + position), to download."""
    c1, c2 = st.columns(2)
    with c1:
        download_csv(_("Positional encoding (CSV)"), t.positional, labels, None, "pos_dl_pe",
                     "positional_encoding.csv", raw_column(t))  # fmt: skip
    with c2:
        download_csv(_("Input = embedding + position (CSV)"), t.embeddings + t.positional,
                     labels, None, "pos_dl_input", "input.csv", raw_column(t))  # fmt: skip
