"""Knock out heads: a layer x head grid of each single head's effect on the shown
prediction (one batched pass, ui.cache.log_probs; a big model's a layer at a time, on
request), then heads knocked out together, or kept alone, with the prediction and the later
layers' attention recomputed."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import streamlit as st

import viz
from analysis.interventions import (
    Head,
    effect_grid,
    ranked_heads,
    score,
    single_heads,
)
from i18n import N_, _
from model import CLEAN, RunOptions, Trace
from ui import cache
from ui.figures import chart
from ui.show import md_escape

T = TypeVar("T")
AT_ONCE = {False: 2048, True: 64}  # passes a rerun makes unasked (a big model: True);
# past that, a grid is computed a layer at a time, on request
BUDGET_S = 2.0  # what one click may spend on more layers (the bounded-work rule: 2 s a rerun)
STACKS = {"encoder": N_("encoder"), "decoder": N_("decoder"), "cross": N_("cross")}
ABLATIONS = {"zero": N_("zero"), "mean": N_("mean")}
RUNS = {"clean": N_("clean"), "knocked out": N_("knocked out")}  # the two runs drawn, by id


def shown_head(head: Head) -> str:
    """analysis.interventions.head_name in the session's language: "L2H3", "cross L1H4"."""
    stack, layer, h = head
    return f"{_(STACKS.get(stack, stack)) + ' ' if stack else ''}L{layer + 1}H{h + 1}"


def grid_rows(stacks: dict[str, tuple[int, int]]) -> list[str]:
    """The knockout grid's row labels ("layer 2", "cross layer 1"), as effect_grid orders
    its rows, in the session's language."""
    return [
        _("{stack} layer {n}", stack=_(STACKS.get(stack, stack)), n=layer + 1) if stack
        else _("layer {n}", n=layer + 1)
        for stack, (n_layers, _h) in stacks.items() for layer in range(n_layers)
    ]  # fmt: skip


def described(options: RunOptions) -> str:
    """`options.describe()` in the session's language: "clean", "L2H3 knocked out (zero)"."""
    said = []
    if not options.positions:
        said.append(_("no positions"))
    if options.ablate:
        heads = ", ".join(shown_head(h) for h in options.ablate)
        how = _(ABLATIONS.get(options.ablation, options.ablation))
        said.append(_("{heads} knocked out ({how})", heads=heads, how=how))
    if options.ablate_mlp:
        said.append(", ".join(_("layer {n}'s MLP knocked out", n=layer + 1)
                              for _s, layer in options.ablate_mlp))  # fmt: skip
    if options.ablate_neurons:
        said.append(", ".join(_("layer {n}'s neuron {neuron} knocked out", n=layer + 1,
                                neuron=neuron)
                              for layer, neuron in options.ablate_neurons))  # fmt: skip
    if options.patch is not None:
        said.append(_("{n} {site} patched in", n=len(options.patch.at), site=options.patch.site))
    return "; ".join(said) or _("clean")


def layers_on_request(key: Hashable, n_layers: int, passes: int, big: bool,
                      compute: Callable[[int], T]) -> list[T] | None:  # fmt: skip
    """None when a grid's `passes` fit in one rerun (the caller computes it at once); else
    the layers this session has computed (`compute(layer)`'s small results, kept in the
    session so a rerun redraws them without a pass), and a button that computes more, one
    batched pass a layer, as many as fit in BUDGET_S (at least one), with a progress bar."""
    if passes <= AT_ONCE[big]:
        return None
    done: list[T] = st.session_state.setdefault("layers_done", {}).setdefault(key, [])
    if len(done) < n_layers:
        note = st.empty()  # written once this run's clicks are computed
        if st.button(_("Compute more layers"), key=f"{key[0]}_more",
                     icon=":material/play_arrow:"):  # fmt: skip
            bar = st.progress(len(done) / n_layers, _("A layer at a time…"))
            start, first = time.perf_counter(), len(done)
            while len(done) < n_layers:  # at least one layer a click; no more than fit
                done.append(compute(len(done)))
                bar.progress(len(done) / n_layers, _("{done} of {n} layers", done=len(done),
                                                     n=n_layers))  # fmt: skip
                spent = time.perf_counter() - start
                if spent + spent / (len(done) - first) > BUDGET_S:
                    break
        note.caption(_("{passes} forward passes: computed a layer at a time, on request "
                       "({done} of {n} layers so far).", passes=format(passes, ","),
                       done=len(done), n=n_layers))  # fmt: skip
    return done


@dataclass(frozen=True)
class Question:
    """What the knockout grid asks: how the log-probability of `tokens` at `at` (summed)
    moves when a head is knocked out."""

    inputs: str | tuple | bytes  # ui.cache.log_probs's input: ids, (source, target) ids, image
    name: str
    device: str
    at: tuple[int, ...]  # where the prediction is read
    tokens: tuple[int, ...]  # the token read at each of those positions
    label: str  # "log p(bank) at the [MASK]"


def ablating(heads: Sequence[Head]) -> RunOptions:
    """These heads knocked out: (layer, head) pairs for one stack, else (stack, layer, head)."""
    return RunOptions(ablate=[h[1:] if not h[0] else h for h in heads])


def effects(q: Question, heads: Sequence[Head]) -> tuple[np.ndarray, float]:
    """Each head's single knockout minus the clean run, and the clean score: one batched
    pass (cached on the whole question)."""
    runs = (CLEAN, *(ablating([h]) for h in heads))
    scores = score(cache.log_probs(q.inputs, q.name, q.device, runs, q.at), q.tokens)
    return scores[1:] - scores[0], float(scores[0])


def knockout_grid(q: Question, stacks: dict[str, tuple[int, int]], where: tuple) -> None:
    """The layer x head grid of single-head effects, and what it says."""
    n_layers = max(n for n, _h in stacks.values())
    n_heads = len(single_heads(stacks))
    parts = layers_on_request(("ko", q), n_layers, n_heads, cache.is_big(q.name, q.device),
                              lambda layer: effects(q, single_heads(stacks, [layer])))
    if parts is None:  # one batched pass for them all
        heads, done = single_heads(stacks), n_layers
        moved, clean = effects(q, heads)
    elif not parts:
        return
    else:  # the layers computed so far
        heads, done = single_heads(stacks, range(len(parts))), len(parts)
        moved, clean = np.concatenate([m for m, _c in parts]), parts[0][1]
    grid, rows = effect_grid(heads, moved, stacks)
    cols = [_("head {n}", n=h + 1) for h in range(grid.shape[1])]
    rows = grid_rows(stacks)  # effect_grid's row labels, in the session's language
    chart("ko_grid", (where, q, done), viz.matrix_heatmap, grid, rows, cols,
          title=_("change in {what}, each head knocked out alone", what=q.label),
          x_title=_("head"), y_title=_("layer"), filename="knockout_grid")  # fmt: skip
    st.caption(_("Clean run: {what} = {clean}. Each cell is that head's z set to 0 before W_O, "
                 "everything after it recomputed.", what=md_escape(q.label),
                 clean=format(clean, ".3f")) + " " + drops(heads, moved, clean))  # fmt: skip


def drops(heads: Sequence[Head], moved: np.ndarray, clean: float) -> str:
    """What the grid says: the three largest drops, with the probability before and after."""
    top = [(h, e) for h, e in ranked_heads(heads, moved) if e < 0]
    if not top:
        return _("No head, knocked out alone, lowers it.")
    said = "; ".join(f"{shown_head(h)} {e:+.3f} (p {np.exp(clean):.2f} → {np.exp(clean + e):.2f})"
                     for h, e in top)  # fmt: skip
    return _("Largest drops (log-probability; −0.69 halves the probability): {drops}.",
             drops=said)


def knockout(
    q: Question, stacks: dict[str, tuple[int, int]], where: tuple,
    show: Callable[[RunOptions], None], trace_of: Callable[[RunOptions], Trace],
    query: int = -1, cross: bool = False,
) -> None:  # fmt: skip
    """The grid, then heads knocked out together: `show(options)` draws the prediction, and
    the query's attention in every layer is drawn clean and recomputed."""
    st.subheader(_("Knock out heads"))
    knockout_grid(q, stacks, where)
    every = single_heads(stacks)
    ss = st.session_state
    ss["ko_heads"] = [h for h in ss.get("ko_heads") or [] if h in every]  # another model's go
    left, right = st.columns([3, 1])
    picked = left.multiselect(_("Heads to knock out together"), every, key="ko_heads",
                              format_func=shown_head, placeholder=_("Pick heads…"))  # fmt: skip
    keep = right.toggle(_("Keep only these heads"), key="ko_keep",
                        help=_("Knock out every other head instead."))  # fmt: skip
    if not picked:
        st.caption(_("Pick heads above to knock them out together and see the prediction and "
                     "the later layers recomputed."))  # fmt: skip
        return
    options = ablating([h for h in every if h not in picked] if keep else picked)
    st.caption(_("Now: {options}.", options=md_escape(described(options))))
    show(options)
    runs = {"clean": trace_of(CLEAN), "knocked out": trace_of(options)}
    for column, (label, t) in zip(st.columns(2), runs.items(), strict=True):
        layers = t.cross_layers if cross else t.layers
        keys = t.encoder.tokens if cross else t.tokens
        q_at = min(query, len(t.tokens) - 1) if query >= 0 else len(t.tokens) + query
        rows = np.stack([layer.attention[:, q_at].mean(axis=0) for layer in layers])
        with column:
            chart(f"ko_rows_{label[0]}", (where, options if label != "clean" else CLEAN, cross),
                  viz.matrix_heatmap, rows, [_("layer {n}", n=n + 1) for n in range(len(rows))],
                  keys, title=_("{run}: '{token}' attends to… (mean of heads)",
                                run=_(RUNS[label]), token=t.tokens[q_at]),
                  signed=False, x_title=_("key"), y_title=_("layer"),
                  filename=f"knockout_attention_{label[0]}")  # fmt: skip
