"""The attention page's "every layer x head" part at any size: one number per head for
every layer (a summary that still fits 30 layers x 9 heads), then the grid of heatmaps one
page of layers (and heads) at a time, over at most GRID_TOKENS positions.

It sits in an expander that is drawn only while open: building and drawing 16 heatmaps was
more than half of what a new sentence cost the attention page (README, Benchmarks)."""

from __future__ import annotations

import streamlit as st

import viz
from analysis.heads import SUMMARIES, head_roles, head_summary, pages
from ui.figures import chart
from ui.show import when_open
from ui.view import View
from viz.layers import attention_grid_page

GRID_LAYERS = 6  # layers on one page of the grid
GRID_HEADS = 12  # heads on one page of the grid
GRID_TOKENS = 64  # positions a grid panel shows at most
SUMMARY_FROM = 4  # models with more layers than this get the per-head summary


def _pick(label: str, spans: list[tuple[int, int]], key: str, name: str) -> tuple[int, int]:
    """One page of a list (a segmented control when there are several), as [start, end)."""
    if len(spans) == 1:
        return spans[0]
    chosen = st.segmented_control(
        label, range(len(spans)), key=key, default=0,
        format_func=lambda i: f"{name} {spans[i][0] + 1}–{spans[i][1]}",
    )  # fmt: skip
    return spans[chosen or 0]


@st.fragment
def layer_grid(view: View) -> None:
    """Every layer x head, in an expander drawn only while it is open."""
    when_open("Every layer × head at once", "att_grid_open", ":material/grid_view:",
              lambda: _grid(view))  # fmt: skip


def _grid(view: View) -> None:
    """The per-head summary (big models) and the paginated grid of every layer x head."""
    t = view.trace
    stack = t.attention_stack()
    if t.n_layers > SUMMARY_FROM:
        what = st.selectbox("One number per head", list(SUMMARIES), key="att_summary")
        chart(
            "att_summary_map", (view.key, what), viz.matrix_heatmap,
            head_summary(stack, what), [f"layer {i + 1}" for i in range(t.n_layers)],
            [f"head {h + 1}" for h in range(t.n_heads)], title=f"{what}, every head",
            signed=False, x_title="head", y_title="layer", filename="attention_summary",
        )  # fmt: skip
        st.caption(f"Each cell: {SUMMARIES[what]}. Pick layers below to see their heads.")
    c1, c2, c3 = st.columns(3)
    with c1:
        lo, hi = _pick("Layers", pages(t.n_layers, GRID_LAYERS), "att_grid_layers", "layers")
    with c2:
        h0, h1 = _pick("Heads", pages(t.n_heads, GRID_HEADS), "att_grid_heads", "heads")
    n = len(t.tokens)
    p0 = 0
    if n > GRID_TOKENS:
        with c3:
            p0 = st.slider(
                "First position", 0, n - GRID_TOKENS, 0, key="att_grid_from",
                help=f"The grid shows {GRID_TOKENS} positions at a time.",
            )  # fmt: skip
    p1 = min(n, p0 + GRID_TOKENS)
    chart(
        "att_grid", (view.key, lo, hi, h0, h1, p0), attention_grid_page,
        stack[lo:hi, h0:h1, p0:p1, p0:p1], t.tokens[p0:p1], lo, h0,
        filename="attention_grid",
    )  # fmt: skip
    shown = f"layers {lo + 1}–{hi} of {t.n_layers}, heads {h0 + 1}–{h1} of {t.n_heads}"
    if n > GRID_TOKENS:
        shown += f", positions {p0}–{p1 - 1} of {n}"
    spread = head_roles(stack, t.causal)["spread"].mean(axis=1)  # per layer, 0..1
    st.caption(
        f"Rows are layers, columns heads ({shown}). Measured on this sentence: a head's "
        f"weights spread over {spread[0]:.0%} of the most they could in layer 1 and "
        f"{spread[-1]:.0%} in layer {t.n_layers} (0%: every query looks at one token)."
    )
