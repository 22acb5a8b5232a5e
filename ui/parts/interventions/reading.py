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
from model import Trace
from ui import cache
from ui.figures import chart
from ui.show import layer_head, md_escape

METHODS = {"integrated_gradients": "integrated gradients", "gradient_x_input": "gradient × input"}


# -- every layer's guess ----------------------------------------------------------------------


def layer_guesses(ids: tuple[int, ...], name: str, device: str, position: int,
                  what: str) -> None:  # fmt: skip
    """The logit lens at one position: the top 3 after each layer, the final guess's rank."""
    st.subheader("Every layer's guess")
    lens = cache.logit_lens(ids, name, device, (position,))[:, 0]  # [L + 1, V]
    vocab = cache.vocabulary(name, device)
    specials = [i for i in cache.special_ids(name, device).values() if i < len(vocab)]
    g = guesses_of(lens, specials)
    stages = analysis.stage_names(len(lens) - 1)
    final = vocab[g.final]
    rows = [{"readout": s, **{f"guess {n + 1}": f"{vocab[i]} {p:.0%}" for n, (i, p) in
             enumerate(top)}, f"rank of {final}": int(r)}
            for s, top, r in zip(stages, g.top, g.ranks, strict=True)]  # fmt: skip
    st.dataframe(rows, hide_index=True)
    chart("lens_rank", (ids, name, device, position), viz.rank_by_layer, stages, g.ranks,
          final, f"rank of '{final}' in each layer's readout", filename="logit_lens")
    climb = ("it is the first guess from the input on" if g.first_from == 0 else
             f"it climbs from rank {int(g.ranks[0]):,} at the input to first "
             f"{stages[g.first_from]}, and stays first")  # fmt: skip
    st.caption(f"The residual stream {md_escape(what)}, read through the model's own output "
               f"head after each layer (the logit lens). The final guess is "
               f"'{md_escape(final)}': {climb}.")  # fmt: skip


# -- attention beside attribution ------------------------------------------------------------


def beside_attribution(t: Trace, ids: tuple[int, ...], name: str, device: str, position: int,
                       token: int, token_name: str) -> None:  # fmt: skip
    """One query's attention (a layer and head, or their mean) beside an attribution of the
    prediction at that query, and Spearman's correlation of the two over the words."""
    st.subheader("Attention beside attribution")
    big = cache.is_big(name, device)  # one gradient first: integrated gradients take seconds
    order = sorted(METHODS, key=lambda m: m != "gradient_x_input") if big else list(METHODS)
    method = st.radio("Attribution", order, format_func=METHODS.__getitem__,
                      horizontal=True, key="attr_method")  # fmt: skip
    layer, head, label = layer_head("attr", t.n_layers, t.n_heads, layer=t.n_layers - 1)
    got = cache.attribute(ids, name, device, position, token, method)
    attention = analysis.head_weights(t, layer, head)[position]
    chart("attr_bars", (ids, name, device, position, token, method, layer, head),
          viz.attention_beside_attribution, t.tokens, attention, got.scores,
          f"'{token_name}' at {position}: attention ({label}) and {METHODS[method]}",
          METHODS[method], filename="attention_attribution")  # fmt: skip
    words = [i for i in analysis.word_positions(t.tokens) if i != position]
    rho = agreement(attention, got.scores, words)
    every = [agreement(layer_.attention[h, position], got.scores, words)
             for layer_ in t.layers for h in range(t.n_heads)]  # fmt: skip
    finite = [r for r in every if np.isfinite(r)]
    said = (f"Spearman's correlation of this attention with the attribution's sizes over the "
            f"{len(words)} other words: {rho:.2f}")  # fmt: skip
    if finite:
        said += f"; over all {len(every)} heads it runs from {min(finite):.2f} to {max(finite):.2f}"
    if got.steps:
        said += (f". The scores sum to {got.scores.sum():.3f}; the log-probability moved "
                 f"{got.value - got.baseline:.3f} from a zero embedding (completeness, "
                 f"{got.steps} steps)")  # fmt: skip
    st.caption(said + ". Where a head looks is not what the prediction depends on: attention "
               "is not explanation.")  # fmt: skip
