"""The lecture's step on the layer: residual stream, add & norm, MLP; which layer's MLP,
knocked out, costs the encoder's guess for the river's [MASK] most (issue 57)."""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from analysis.lecture import sublayer_change
from analysis.mlp import mlp_effects, most_harmful
from i18n import N_, _
from model import CLEAN, RunOptions
from model.examples import MORE
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own
from ui.show import md_escape, when_open

SLUG = "transformer-layer"  # its address (/lecture-transformer-layer); it never changes
TITLE = N_("The Transformer layer")
IDEA = N_("Attention and an MLP, each added to the residual stream, then normalised.")
ATTENTION, MLP = N_("attention"), N_("the MLP")


def sublayer_names(n_layers: int) -> list[str]:
    """sublayer_change's columns in the session's language: "L1 attention", "L1 MLP", ..."""
    return [name for n in range(1, n_layers + 1)
            for name in (_("L{n} attention", n=n), f"L{n} MLP")]  # fmt: skip


def draw() -> None:
    name, device = pick("tokens")
    text = try_your_own("l8_text", _("Sentence"), "The cat sat on the mat.")
    t = cache.get_trace(text or "The cat sat", name, device)
    sizes, _cols = sublayer_change(t)
    attn, mlp = sizes[:, 0::2].mean(), sizes[:, 1::2].mean()
    answer = ATTENTION if attn > mlp else MLP
    st.latex(r"x \leftarrow \mathrm{Norm}(x + \mathrm{Attention}(x)) \qquad "
             r"x \leftarrow \mathrm{Norm}(x + \mathrm{MLP}(x))")  # fmt: skip
    if predict("l8", _("Each sublayer adds its output to the token's vector (the residual "
                       "stream). Which adds more, relative to the vector it is added to?"),
               [ATTENTION, MLP], answer,
               _("On average over tokens and layers: attention {attn:.2f}, MLP {mlp:.2f} "
                 "(|added| / |vector|).", attn=attn, mlp=mlp), label=_):  # fmt: skip
        chart("l8_sizes", (text, name), viz.matrix_heatmap, sizes, t.tokens,
              sublayer_names(t.n_layers),
              title=_("|what each sublayer adds| / |the vector it is added to|"), signed=False,
              x_title=_("sublayer"), filename="lecture_layer")  # fmt: skip
    when_open(_("Knock out an MLP: which one matters for “bank”?"), "l8_knock",
              ":material/block:", bank_mlps)  # computed only once opened


RIVER_MASKED = MORE[0]  # "I swam across the river to get to the other [MASK]."


def mlp_layer(choice: str) -> str:
    """A choice id ("L2") as the session's language shows it ("layer 2")."""
    return _("layer {n}", n=int(choice[1:]))


def bank_question(name: str, device: str) -> tuple[tuple[int, ...], int, int] | None:
    """The river sentence's ids, its [MASK]'s position and the id of "bank" (None if the
    model has no such token)."""
    t = cache.get_trace(RIVER_MASKED, name, device)
    vocab = cache.vocabulary(name, device)
    if "bank" not in vocab or "[MASK]" not in t.tokens:
        return None
    return tuple(int(i) for i in t.ids), t.tokens.index("[MASK]"), vocab.index("bank")


def bank_mlps() -> None:
    """Predict which layer's MLP, knocked out alone, costs the encoder most on the river's
    "bank", then reveal each layer's effect (one batched pass)."""
    name, device = pick("masked")
    found = bank_question(name, device)
    n_layers = cache.load_model(name, device).mlps().get("")
    if found is None or not n_layers:
        st.info(_("{model} has no token “bank” to follow.", model=name))
        return
    ids, at, bank = found
    runs = (CLEAN, *(RunOptions(ablate_mlp=[n]) for n in range(n_layers)))
    moved, clean = mlp_effects(cache.log_probs(ids, name, device, runs, (at,)), (bank,))
    worst = most_harmful(moved)
    choices = [f"L{n + 1}" for n in range(n_layers)]
    each = "; ".join(f"{mlp_layer(c)} {e:+.2f}" for c, e in zip(choices, moved, strict=True))
    why = _("Each layer's MLP knocked out alone (its output set to 0), the change in log "
            "p(bank): {each}. Without layer {n}'s MLP, p(bank) falls from {before} to {after}.",
            each=each, n=worst + 1, before=format(np.exp(clean), ".2f"),
            after=format(np.exp(clean + moved[worst]), ".2f"))  # fmt: skip
    if predict("l8_mlp", _("In *{sentence}* the encoder guesses “bank”. Which layer's MLP, "
                           "knocked out alone, hurts that guess the most?",
                           sentence=md_escape(RIVER_MASKED)),
               choices, choices[worst], why, label=mlp_layer):  # fmt: skip
        chart("l8_mlp_grid", (name, device), viz.matrix_heatmap, moved[None, :],
              [_("change in log p(bank)")], [mlp_layer(c) for c in choices],
              title=_("“{sentence}”: each layer's MLP knocked out alone",
                      sentence=RIVER_MASKED),
              x_title=_("layer"), filename="lecture_bank_mlps")  # fmt: skip
