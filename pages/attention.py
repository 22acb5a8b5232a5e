"""3. Attention: every layer's and head's weights, and one head computed step by step."""

import streamlit as st

import analysis
import viz
from i18n import _
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts import compare
from ui.parts.attention.computation import HEAD_STEPS, draw_step
from ui.parts.attention.grid import layer_grid
from ui.parts.attention.query import follow_query_box
from ui.show import (
    download_csv,
    download_json,
    layer_head,
    numbers,
    raw_column,
    token_labels,
    window_picker,
)
from ui.view import View


# One head, its layer's average (or the same head on sentence B), one query followed, and
# the computation step by step (the pickers rerun only this part)
@st.fragment
def head_view(view: View, other) -> None:
    t = view.trace
    layer, head, _label = layer_head("att", t.n_layers, t.n_heads, average=False)
    window = window_picker(len(t.tokens), "att_window")
    if other is not None:
        compare.attention_side_by_side(view, other, layer, head, window)
        follow_query_box(view, layer, head, _("Follow one query in sentence A"))
        return
    weights = t.layers[layer].attention
    shown = [
        ("att_head_map", _("layer {layer}, head {head}", layer=layer + 1, head=head + 1), head,
         weights[head]),
        ("att_mean_map", _("layer {layer}, average of the {n} heads", layer=layer + 1,
                           n=t.n_heads), "mean", weights.mean(0)),
    ]  # fmt: skip
    # Side by side for a short sentence; one above the other, full width, when zoomed.
    places = st.columns(2) if window is None else [st.container(), st.container()]
    for column, (widget, title, which, matrix) in zip(places, shown, strict=True):
        name = f"L{layer + 1}_{'mean' if which == 'mean' else f'H{head + 1}'}"
        with column:
            chart(
                widget, (view.key, layer, which), viz.attention_heatmap, matrix, t.tokens,
                title=title, window=window, filename=f"attention_{name}",
            )  # fmt: skip
    st.caption(_(
        "Rows are queries, columns keys; every row sums to 1. Hover a cell for "
        "“query → key: weight”. Each head learns its own pattern."
    ))
    labels = token_labels(t.tokens)
    download_csv(
        _("Layer {layer}, head {head} weights (CSV)", layer=layer + 1, head=head + 1),
        weights[head], labels, labels,
        "att_dl_head", f"attention_L{layer + 1}_H{head + 1}.csv", raw_column(t),
    )  # fmt: skip

    follow_query_box(view, layer, head, _("Follow one query: which head links it to a word?"))

    st.subheader(_("Step by step: layer {layer}, head {head}", layer=layer + 1, head=head + 1))
    step = st.radio(
        _("Step"), range(len(HEAD_STEPS)), index=None, key="att_step", horizontal=True,
        format_func=lambda i: _(HEAD_STEPS[i]),
        help=_("Walk through the computation of the head above."),
    )  # fmt: skip
    if step is None:
        st.caption(_("Pick a step to see this head's real numbers, from X to the output."))
        return
    w = cache.attention_weights(view.model_name, view.device, layer)
    steps = analysis.attention_steps(t, w, layer, head)
    draw_step(step, steps, t.tokens, head, t.n_heads, t.causal, (view.key, layer, head), window)


def draw(view: View) -> None:
    """The page below its header (ui.frame.body): drawn again for each new sentence."""
    other = compare.second_sentence(view)

    head_view(view, other)

    # Every layer and head at once (a summary per head and a page of layers for big models)
    layer_grid(view)

    numbers("attention", lambda: downloads(view))


def downloads(view: View) -> None:
    """Every layer's and head's attention weights, to download."""
    t = view.trace
    record = {"sentence": view.sentence, "model": view.model_name, "tokens": t.tokens}
    record["raw_tokens"] = t.raw_tokens
    record["attention[layer][head][query][key]"] = t.attention_stack()
    download_json(_("All attention weights (JSON)"), record, "att_dl_all", "attention.json")


frame(
    "attention",
    draw,
    _("Each token asks a **query**, every token offers a **key** and a **value**: the query "
      "is compared with every key, the scores go through a softmax, and the token's new "
      "vector is the weighted blend of the values, a *soft* dictionary lookup. Read a row: "
      "how much that token (the query) takes from each token across (the keys). Compare "
      "*bank* in the river sentence and in the cash sentence.")
    + "\n\n"
    r"$$\operatorname{Attention}(Q, K, V) = "
    r"\operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V$$",
    reset={"att_window": None, "att_query": None, "att_key": None, "cmp_att_word": None},
    controls=compare.controls,
)
