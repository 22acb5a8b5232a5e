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
    head_name,
    ranked_heads,
    score,
    single_heads,
)
from model import CLEAN, RunOptions, Trace
from ui import cache
from ui.figures import chart
from ui.show import md_escape

T = TypeVar("T")
AT_ONCE = {False: 2048, True: 64}  # passes a rerun makes unasked (a big model: True);
# past that, a grid is computed a layer at a time, on request
BUDGET_S = 2.0  # what one click may spend on more layers (the bounded-work rule: 2 s a rerun)


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
        if st.button("Compute more layers", key=f"{key[0]}_more", icon=":material/play_arrow:"):
            bar = st.progress(len(done) / n_layers, "A layer at a time…")
            start, first = time.perf_counter(), len(done)
            while len(done) < n_layers:  # at least one layer a click; no more than fit
                done.append(compute(len(done)))
                bar.progress(len(done) / n_layers, f"{len(done)} of {n_layers} layers")
                spent = time.perf_counter() - start
                if spent + spent / (len(done) - first) > BUDGET_S:
                    break
        note.caption(f"{passes:,} forward passes: computed a layer at a time, on request "
                     f"({len(done)} of {n_layers} layers so far).")  # fmt: skip
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
    cols = [f"head {h + 1}" for h in range(grid.shape[1])]
    chart("ko_grid", (where, q, done), viz.matrix_heatmap, grid, rows, cols,
          title=f"change in {q.label}, each head knocked out alone", x_title="head",
          y_title="layer", filename="knockout_grid")  # fmt: skip
    st.caption(f"Clean run: {md_escape(q.label)} = {clean:.3f}. Each cell is that head's z "
               f"set to 0 before W_O, everything after it recomputed. "
               f"{drops(heads, moved, clean)}")  # fmt: skip


def drops(heads: Sequence[Head], moved: np.ndarray, clean: float) -> str:
    """What the grid says: the three largest drops, with the probability before and after."""
    top = [(h, e) for h, e in ranked_heads(heads, moved) if e < 0]
    if not top:
        return "No head, knocked out alone, lowers it."
    said = "; ".join(f"{head_name(h)} {e:+.3f} (p {np.exp(clean):.2f} → {np.exp(clean + e):.2f})"
                     for h, e in top)  # fmt: skip
    return f"Largest drops (log-probability; −0.69 halves the probability): {said}."


def knockout(
    q: Question, stacks: dict[str, tuple[int, int]], where: tuple,
    show: Callable[[RunOptions], None], trace_of: Callable[[RunOptions], Trace],
    query: int = -1, cross: bool = False,
) -> None:  # fmt: skip
    """The grid, then heads knocked out together: `show(options)` draws the prediction, and
    the query's attention in every layer is drawn clean and recomputed."""
    st.subheader("Knock out heads")
    knockout_grid(q, stacks, where)
    every = single_heads(stacks)
    ss = st.session_state
    ss["ko_heads"] = [h for h in ss.get("ko_heads") or [] if h in every]  # another model's go
    left, right = st.columns([3, 1])
    picked = left.multiselect("Heads to knock out together", every, key="ko_heads",
                              format_func=head_name, placeholder="Pick heads…")  # fmt: skip
    keep = right.toggle("Keep only these heads", key="ko_keep",
                        help="Knock out every other head instead.")  # fmt: skip
    if not picked:
        st.caption("Pick heads above to knock them out together and see the prediction and "
                   "the later layers recomputed.")  # fmt: skip
        return
    options = ablating([h for h in every if h not in picked] if keep else picked)
    st.caption(f"Now: {md_escape(options.describe())}.")
    show(options)
    runs = {"clean": trace_of(CLEAN), "knocked out": trace_of(options)}
    for column, (label, t) in zip(st.columns(2), runs.items(), strict=True):
        layers = t.cross_layers if cross else t.layers
        keys = t.encoder.tokens if cross else t.tokens
        q_at = min(query, len(t.tokens) - 1) if query >= 0 else len(t.tokens) + query
        rows = np.stack([layer.attention[:, q_at].mean(axis=0) for layer in layers])
        with column:
            chart(f"ko_rows_{label[0]}", (where, options if label != "clean" else CLEAN, cross),
                  viz.matrix_heatmap, rows, [f"layer {n + 1}" for n in range(len(rows))], keys,
                  title=f"{label}: '{t.tokens[q_at]}' attends to… (mean of heads)",
                  signed=False, x_title="key", y_title="layer",
                  filename=f"knockout_attention_{label[0]}")  # fmt: skip
