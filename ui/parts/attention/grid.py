"""The attention page's "every layer x head" part at any size: one number per head for
every layer (a summary that still fits 30 layers x 9 heads), then the grid of heatmaps one
page of layers (and heads) at a time, over at most GRID_TOKENS positions.

It sits in an expander that is drawn only while open: building and drawing 16 heatmaps was
more than half of what a new sentence cost the attention page (README, Benchmarks)."""

from __future__ import annotations

import streamlit as st

import viz
from analysis.heads import SUMMARIES, head_roles, head_summary, pages
from i18n import N_, _
from ui.figures import chart
from ui.show import when_open
from ui.view import View
from viz.layers import attention_grid_page

GRID_LAYERS = 6  # layers on one page of the grid
GRID_HEADS = 12  # heads on one page of the grid
GRID_TOKENS = 64  # positions a grid panel shows at most
SUMMARY_FROM = 4  # models with more layers than this get the per-head summary


def _pick(label: str, spans: list[tuple[int, int]], key: str, name: str) -> tuple[int, int]:
    """One page of a list (a segmented control when there are several), as [start, end);
    `name` is a message with {first} and {last} ("layers {first}–{last}")."""
    if len(spans) == 1:
        return spans[0]
    chosen = st.segmented_control(
        label, range(len(spans)), key=key, default=0,
        format_func=lambda i: _(name, first=spans[i][0] + 1, last=spans[i][1]),
    )  # fmt: skip
    return spans[chosen or 0]


@st.fragment
def layer_grid(view: View) -> None:
    """Every layer x head, in an expander drawn only while it is open."""
    when_open(_("Every layer × head at once"), "att_grid_open", ":material/grid_view:",
              lambda: _grid(view))  # fmt: skip


def _grid(view: View) -> None:
    """The per-head summary (big models) and the paginated grid of every layer x head."""
    t = view.trace
    stack = t.attention_stack()
    if t.n_layers > SUMMARY_FROM:
        what = st.selectbox(_("One number per head"), list(SUMMARIES), key="att_summary",
                            format_func=_)  # fmt: skip
        chart(
            "att_summary_map", (view.key, what), viz.matrix_heatmap,
            head_summary(stack, what), [_("layer {n}", n=i + 1) for i in range(t.n_layers)],
            [_("head {n}", n=h + 1) for h in range(t.n_heads)],
            title=_("{what}, every head", what=_(what)), signed=False, x_title=_("head"),
            y_title=_("layer"), filename="attention_summary",
        )  # fmt: skip
        st.caption(_("Each cell: {what}. Pick layers below to see their heads.",
                     what=_(SUMMARIES[what])))  # fmt: skip
    c1, c2, c3 = st.columns(3)
    with c1:
        lo, hi = _pick(_("Layers"), pages(t.n_layers, GRID_LAYERS), "att_grid_layers",
                       N_("layers {first}–{last}"))  # fmt: skip
    with c2:
        h0, h1 = _pick(_("Heads"), pages(t.n_heads, GRID_HEADS), "att_grid_heads",
                       N_("heads {first}–{last}"))  # fmt: skip
    n = len(t.tokens)
    p0 = 0
    if n > GRID_TOKENS:
        with c3:
            p0 = st.slider(
                _("First position"), 0, n - GRID_TOKENS, 0, key="att_grid_from",
                help=_("The grid shows {n} positions at a time.", n=GRID_TOKENS),
            )  # fmt: skip
    p1 = min(n, p0 + GRID_TOKENS)
    chart(
        "att_grid", (view.key, lo, hi, h0, h1, p0), attention_grid_page,
        stack[lo:hi, h0:h1, p0:p1, p0:p1], t.tokens[p0:p1], lo, h0,
        filename="attention_grid",
    )  # fmt: skip
    span = {"lo": lo + 1, "hi": hi, "layers": t.n_layers, "h0": h0 + 1, "h1": h1,
            "heads": t.n_heads}  # fmt: skip
    shown = (
        _("layers {lo}–{hi} of {layers}, heads {h0}–{h1} of {heads}, positions {p0}–{p1} of "
          "{n}", **span, p0=p0, p1=p1 - 1, n=n)
        if n > GRID_TOKENS
        else _("layers {lo}–{hi} of {layers}, heads {h0}–{h1} of {heads}", **span)
    )
    spread = head_roles(stack, t.causal)["spread"].mean(axis=1)  # per layer, 0..1
    st.caption(_(
        "Rows are layers, columns heads ({shown}). Measured on this sentence: a head's "
        "weights spread over {first} of the most they could in layer 1 and {last} in layer "
        "{n} (0%: every query looks at one token).", shown=shown,
        first=format(spread[0], ".0%"), last=format(spread[-1], ".0%"), n=t.n_layers,
    ))
