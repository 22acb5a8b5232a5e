"""Reading the model: every layer's guess at one position (the logit lens), and one
query's attention beside an attribution of the same prediction (gradient x input or
integrated gradients), with how far the two agree."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import viz
from analysis.interventions import agreement
from analysis.interventions import layer_guesses as guesses_of
from i18n import N_, _
from model import Trace
from ui import cache
from ui.figures import chart
from ui.show import layer_head, md_escape

METHODS = {"integrated_gradients": N_("integrated gradients"),
           "gradient_x_input": N_("gradient × input")}  # shown with _()


# -- every layer's guess ----------------------------------------------------------------------


def layer_guesses(ids: tuple[int, ...], name: str, device: str, position: int,
                  what: str) -> None:  # fmt: skip
    """The logit lens at one position: the top 3 after each layer, the final guess's rank."""
    st.subheader(_("Every layer's guess"))
    lens = cache.logit_lens(ids, name, device, (position,))[:, 0]  # [L + 1, V]
    vocab = cache.vocabulary(name, device)
    specials = [i for i in cache.special_ids(name, device).values() if i < len(vocab)]
    g = guesses_of(lens, specials)
    stages = analysis.stage_names(len(lens) - 1)
    final = vocab[g.final]
    guess = [_("guess {n}", n=n + 1) for n in range(max(map(len, g.top), default=0))]
    rank = _("rank of {token}", token=final)
    rows = [{_("readout"): s, **{guess[n]: f"{vocab[i]} {p:.0%}" for n, (i, p) in
             enumerate(top)}, rank: int(r)}
            for s, top, r in zip(stages, g.top, g.ranks, strict=True)]  # fmt: skip
    st.dataframe(rows, hide_index=True)
    chart("lens_rank", (ids, name, device, position), viz.rank_by_layer, stages, g.ranks,
          final, _("rank of '{token}' in each layer's readout", token=final),
          filename="logit_lens")  # fmt: skip
    said = {"what": md_escape(what), "final": md_escape(final)}
    if g.first_from == 0:
        st.caption(_("The residual stream {what}, read through the model's own output head "
                     "after each layer (the logit lens). The final guess is '{final}': it is "
                     "the first guess from the input on.", **said))  # fmt: skip
    else:
        st.caption(_("The residual stream {what}, read through the model's own output head "
                     "after each layer (the logit lens). The final guess is '{final}': it "
                     "climbs from rank {rank} at the input to first {stage}, and stays first.",
                     **said, rank=format(int(g.ranks[0]), ","),
                     stage=stages[g.first_from]))  # fmt: skip


# -- attention beside attribution ------------------------------------------------------------


def beside_attribution(t: Trace, ids: tuple[int, ...], name: str, device: str, position: int,
                       token: int, token_name: str) -> None:  # fmt: skip
    """One query's attention (a layer and head, or their mean) beside an attribution of the
    prediction at that query, and Spearman's correlation of the two over the words."""
    st.subheader(_("Attention beside attribution"))
    big = cache.is_big(name, device)  # one gradient first: integrated gradients take seconds
    order = sorted(METHODS, key=lambda m: m != "gradient_x_input") if big else list(METHODS)
    method = st.radio(_("Attribution"), order, format_func=lambda m: _(METHODS[m]),
                      horizontal=True, key="attr_method")  # fmt: skip
    layer, head, label = layer_head("attr", t.n_layers, t.n_heads, layer=t.n_layers - 1)
    got = cache.attribute(ids, name, device, position, token, method)
    attention = analysis.head_weights(t, layer, head)[position]
    chart("attr_bars", (ids, name, device, position, token, method, layer, head),
          viz.attention_beside_attribution, t.tokens, attention, got.scores,
          _("'{token}' at {position}: attention ({label}) and {method}", token=token_name,
            position=position, label=label, method=_(METHODS[method])),
          _(METHODS[method]), filename="attention_attribution")  # fmt: skip
    words = [i for i in analysis.word_positions(t.tokens) if i != position]
    rho = agreement(attention, got.scores, words)
    every = [agreement(layer_.attention[h, position], got.scores, words)
             for layer_ in t.layers for h in range(t.n_heads)]  # fmt: skip
    finite = [r for r in every if np.isfinite(r)]
    said = {"n": len(words), "rho": format(rho, ".2f"), "heads": len(every)}
    if finite:
        said |= {"low": format(min(finite), ".2f"), "high": format(max(finite), ".2f")}
        text = _("Spearman's correlation of this attention with the attribution's sizes over "
                 "the {n} other words: {rho}; over all {heads} heads it runs from {low} to "
                 "{high}.", **said)  # fmt: skip
    else:
        text = _("Spearman's correlation of this attention with the attribution's sizes over "
                 "the {n} other words: {rho}.", **said)  # fmt: skip
    if got.steps:
        text += " " + _("The scores sum to {total}; the log-probability moved {moved} from a "
                        "zero embedding (completeness, {steps} steps).",
                        total=format(got.scores.sum(), ".3f"),
                        moved=format(got.value - got.baseline, ".3f"), steps=got.steps)
    st.caption(text + " " + _("Where a head looks is not what the prediction depends on: "
                              "attention is not explanation."))  # fmt: skip
