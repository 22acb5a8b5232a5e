"""The lecture's step on positional encoding."""

from __future__ import annotations

import streamlit as st

import analysis
import model
import viz
from i18n import N_, _
from model.examples import PAIRS
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own

SLUG = "positional-encoding"  # its address (/lecture-positional-encoding); it never changes
TITLE = N_("Positional encoding")
IDEA = N_(
    "Attention sees a set: positions, binary then sinusoidal, are added so that word order "
    "counts."
)
DOG_MAN, MAN_DOG = PAIRS[1]
SAME, DIFFERENT = N_("the same vector"), N_("different vectors")
WITH, WITHOUT = N_("with positions"), N_("without positions")


def stages(n_layers: int) -> list[str]:
    """analysis.cosines_by_stage's stages, named in the session's language."""
    return [_("input (embedding + position)"),
            *(_("after layer {n}", n=n) for n in range(1, n_layers + 1))]  # fmt: skip


def draw() -> None:
    name, device = pick("masked")  # an encoder: without positions it sees a set
    on = [cache.get_trace(s, name, device) for s in (DOG_MAN, MAN_DOG)]
    off = [cache.get_trace(s, name, device, model.RunOptions(positions=False))
           for s in (DOG_MAN, MAN_DOG)]
    i, j = on[0].tokens.index("dog"), on[1].tokens.index("dog")
    same = float(analysis.cosines_by_stage(*off, i, j)[-1])
    answer = SAME if same > 0.999 else DIFFERENT
    chart("l5_binary", (DOG_MAN, name), viz.binary_table, model.binary_encoding(len(on[0].tokens)),
          on[0].tokens, filename="lecture_binary")  # fmt: skip
    if predict("l5", _("Without positional encoding, does the encoder give “dog” the same "
                       "vector in *{a}* and *{b}*?", a=DOG_MAN, b=MAN_DOG), [SAME, DIFFERENT],
               answer, _("Cosine after the last layer: {off:.3f} without positions, {on:.3f} "
                         "with them.", off=same, on=analysis.cosines_by_stage(*on, i, j)[-1]),
               label=_):  # fmt: skip
        series = {_(WITH): list(analysis.cosines_by_stage(*on, i, j)),
                  _(WITHOUT): list(analysis.cosines_by_stage(*off, i, j))}  # fmt: skip
        chart("l5_cos", (name, "dog"), viz.cosine_by_layer, stages(on[0].n_layers),
              series, _("“dog” in the two sentences: cosine per layer"),
              filename="lecture_order")  # fmt: skip
        chart("l5_sin", (DOG_MAN, name), viz.sinusoidal_heatmap, on[0].positional, on[0].tokens,
              filename="lecture_sinusoids")  # fmt: skip
    with st.expander(_("Try your own pair"), expanded=False):
        c1, c2 = st.columns(2)
        a = try_your_own("l5_a", _("Sentence A"), "the cat chased the mouse", c1)
        b = try_your_own("l5_b", _("Sentence B"), "the mouse chased the cat", c2)
        if not (a and b):
            return
        pair = [cache.get_trace(s, name, device, model.RunOptions(positions=p))
                for p in (True, False) for s in (a, b)]
        shared = analysis.shared_words(pair[0].tokens, pair[1].tokens)
        if not shared:
            st.info(_("Type two sentences that share a word."))
            return
        word, i, j = shared[0]
        series = {_(WITH): list(analysis.cosines_by_stage(pair[0], pair[1], i, j)),
                  _(WITHOUT): list(analysis.cosines_by_stage(pair[2], pair[3], i, j))}
        chart("l5_own", (a, b, name), viz.cosine_by_layer, stages(pair[0].n_layers),
              series, _("“{word}” in A and in B: cosine per layer", word=word),
              filename="lecture_own_order")  # fmt: skip
