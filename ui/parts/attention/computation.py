"""The attention page's step-by-step computation of one head, drawn from AttentionSteps.

Each step is a formula, rows of at most two matrices (wide enough to read the numbers in the
cells of a short sentence) and a sentence saying what to notice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import viz
from analysis import AttentionSteps
from i18n import N_, _, particle
from ui.figures import chart

HEAD_STEPS = [  # shown with _(): the first says the same in both languages
    "1 · X → Q, K, V",
    N_("2 · scores QKᵀ / √d"),
    N_("3 · mask and softmax"),
    N_("4 · weights × V"),
    N_("5 · concatenate heads, project"),
]


@dataclass
class Panel:
    """One matrix of a step: rows are tokens unless `rows` says otherwise."""

    values: str  # the AttentionSteps field
    title: str
    by_key: bool = False  # columns are the keys (a T x T matrix), else dimensions
    signed: bool = True
    rows: str = "token"  # "token" or "dimension" (a weight matrix)
    x_title: str = N_("dimension")  # shown with _()
    wide: bool = False  # the whole width (X, the concatenated heads), else half of it


def _panels(step: int, h: int, d: int, n_heads: int, width: int) -> list[list[Panel]]:
    """The rows of panels of one step (titles in the session's language)."""
    by_key = {"by_key": True, "x_title": N_("key")}
    head_dim = N_("head dimension")
    if step == 0:
        return [
            [Panel("x", _("X: the layer's input (tokens × dimensions)"), wide=True)],
            [Panel("q", _("Q = X W_Q (tokens × {d})", d=d), x_title=head_dim),
             Panel("k", _("K = X W_K (tokens × {d})", d=d), x_title=head_dim)],
            [Panel("v", _("V = X W_V (tokens × {d})", d=d), x_title=head_dim)],
        ]  # fmt: skip
    if step == 1:
        return [[Panel("qk", _("Q Kᵀ: every query · every key"), **by_key),
                 Panel("scaled", f"÷ √{d}", **by_key)]]  # fmt: skip
    if step == 2:
        return [
            [Panel("mask", _("mask M: 0 or −∞"), **by_key),
             Panel("masked", _("scores + M"), **by_key)],
            [Panel("weights", _("softmax: each row sums to 1"), signed=False, **by_key)],
        ]  # fmt: skip
    if step == 3:
        return [
            [Panel("weights", _("A: the attention weights"), signed=False, **by_key),
             Panel("v", _("V: the values"), x_title=head_dim)],
            [Panel("z", _("Z = A V: head {h}'s output", h=h), x_title=head_dim)],
        ]  # fmt: skip
    return [
        [Panel("concat", _("Concat(Z¹…Z{n}): {n} heads × {d} = {width} dimensions", n=n_heads,
                           d=d, width=width), wide=True)],
        [Panel("w_o", "W_O", rows="dimension", x_title=N_("output dimension")),
         Panel("output", _("output = Concat · W_O + b_O"))],
    ]  # fmt: skip


AXES = {"query": N_("query"), "token": N_("token"), "dimension": N_("dimension")}
# a panel's row axis by its id

FORMULAS = [
    r"Q = X W_Q^{(h)} + b_Q,\quad K = X W_K^{(h)} + b_K,\quad V = X W_V^{(h)} + b_V",
    r"\text{scores} = \frac{Q K^\top}{\sqrt{d_k}}",
    r"A = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right),\quad "
    r"M_{ij} = \begin{cases} 0 & \text{allowed} \\ -\infty & \text{masked} \end{cases}",
    r"Z^{(h)} = A\,V",
    r"\operatorname{MultiHead}(X) = \operatorname{Concat}(Z^{(1)}, \dots, Z^{(H)})\, W_O + b_O",
]


def _notice(step: int, s: AttentionSteps, causal: bool) -> str:
    d = s.d_head
    if step == 0:
        return _("Each head has its own W_Q, W_K, W_V ({width} × {d}): they turn every token's "
                 "vector into a query, a key and a value of {d} numbers.", width=s.x.shape[1],
                 d=d)  # fmt: skip
    if step == 1:
        return _("Row i, column j: how well query i matches key j. Dividing by √{d} = {root} "
                 "keeps the scores from growing with the vectors' length, so the softmax does "
                 "not saturate.", d=d, root=(root := format(np.sqrt(d), ".2f")),
                 root_by=particle(root, "으로/로"))  # fmt: skip
    if step == 2 and causal:
        return _("A causal (GPT-style) model masks the future: −∞ above the diagonal becomes "
                 "weight 0.")  # fmt: skip
    if step == 2:
        return _("An encoder (BERT-style) masks nothing here: every token may look at every "
                 "token (only [PAD] keys of a batch would be masked).")  # fmt: skip
    if step == 3:
        return _("Each output row is a weighted blend of the value rows: a soft dictionary "
                 "lookup in which every key answers a little.")  # fmt: skip
    return _("The heads' outputs are laid side by side and mixed by W_O. Then add & norm: "
             "LayerNorm(X + output), an MLP, and add & norm again.")


def draw_step(
    step: int,
    s: AttentionSteps,
    tokens: list[str],
    head: int,
    n_heads: int,
    causal: bool,
    where: tuple,
    window: tuple[int, int] | None = None,
) -> None:
    """Draw step `step` (0-based, see HEAD_STEPS) with the real numbers of this head; `where`
    says what they depend on (sentence, model, device, layer, head), for the figure cache;
    `window` zooms the token rows and key columns of a long sentence."""
    st.latex(FORMULAS[step].replace("(h)", f"({head + 1})"))
    for row in _panels(step, head + 1, s.d_head, n_heads, s.concat.shape[1]):
        places = [st.container() for _panel in row] if row[0].wide or window else st.columns(2)
        for place, panel in zip(places, row, strict=False):
            values = getattr(s, panel.values)
            labels = tokens if panel.rows == "token" else [str(i) for i in range(len(values))]
            with place:
                chart(
                    f"att_step_{panel.values}_{step}", where, viz.matrix_heatmap, values, labels,
                    tokens if panel.by_key else None, title=panel.title, signed=panel.signed,
                    x_title=_(panel.x_title), y_title=_(AXES["query" if panel.by_key else
                                                            panel.rows]),
                    window=window, rows=panel.rows == "token", cols=panel.by_key,
                    filename=f"step{step + 1}_{panel.values}",
                )  # fmt: skip
    st.caption(_notice(step, s, causal))
    if step == 0 and st.toggle(_("Show the learned weights W_Q, W_K, W_V"), key="att_show_w"):
        rows = [str(i) for i in range(s.w_q.shape[0])]
        for column, name in zip(st.columns(3), ("w_q", "w_k", "w_v"), strict=True):
            with column:
                title = _("{matrix} of head {head}", matrix=f"W_{name[-1].upper()}",
                          head=head + 1)
                chart(
                    f"att_step_{name}", where, viz.matrix_heatmap, getattr(s, name), rows,
                    title=title, x_title=_("head dimension"), y_title=_("input dimension"),
                    filename=f"step1_{name}",
                )  # fmt: skip
    st.caption(_(
        "Recomputed here from X and the weights; it matches the model's own numbers to within "
        "{error}.", error=format(s.max_error, ".1e"),
    ))
