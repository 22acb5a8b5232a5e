"""5. Causal prediction (GPT-style): look only left, predict the next token, repeat."""

import streamlit as st

import model
import viz
from i18n import _
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts.causal import generation, gpt_targets, sampling_controls
from ui.parts.interventions.pages import KEPT, RESET, causal_sections
from ui.show import (
    download_csv,
    keep_state,
    lazy_sections,
    raw_column,
    token_labels,
    window_picker,
)
from ui.view import View


def causal_mask(view: View) -> None:
    """The causal mask, and what it does to the attention."""
    t, key = view.trace, view.key
    st.subheader(_("The causal mask"))
    window = window_picker(len(t.tokens), "causal_window")
    n = len(t.tokens)
    left, right = st.columns(2)
    with left:
        mask = model.additive_mask(model.causal_mask(n))
        chart("causal_mask", key, viz.causal_mask_figure, mask, t.tokens, window=window,
              filename="causal_mask")  # fmt: skip
    weights = t.layers[0].attention.mean(axis=0)
    with right:
        chart(
            "causal_attention", key, viz.attention_heatmap, weights, t.tokens,
            title=_("attention, layer 1, average of the heads"), window=window,
            filename="causal_attention",
        )  # fmt: skip
    st.caption(_(
        "Left: the mask added to the scores. Right: layer 1's attention, averaged over the "
        "heads. Query i (row) may look at keys 0..i only: softmax(scores + mask) gives "
        "exactly 0 weight to every later token, so the right matrix is 0 above the diagonal."
    ))
    labels = token_labels(t.tokens)
    download_csv(_("Layer 1 attention, average of the heads (CSV)"), weights, labels, labels,
                 "causal_dl_attention", "causal_attention_L1.csv", raw_column(t))  # fmt: skip


# The next token
def next_token(view: View) -> None:
    t, name, device = view.trace, view.model_name, view.device
    st.subheader(_("The next token"))
    st.latex(r"p_i = \frac{\exp(z_i / T)}{\sum_j \exp(z_j / T)}")
    sampling, bars = sampling_controls()
    probs = cache.next_distribution(tuple(int(i) for i in t.ids), name, device, sampling)
    vocab = cache.vocabulary(name, device)
    chart(
        "causal_next", (view.key, sampling, bars), viz.distribution_bar, probs, vocab, bars,
        title=_("after “{token}”, the next token", token=t.tokens[-1]), filename="next_token",
    )  # fmt: skip
    left = format(int((probs > 0).sum()), ",")
    st.caption(_("{n} of {total} tokens can still be picked.", n=left,
                 total=format(len(vocab), ",")))  # fmt: skip
    top = probs.argsort()[::-1][:50]
    download_csv(
        _("Top 50 next tokens (CSV)"), probs[top][:, None], [vocab[i] for i in top],
        [_("probability")], "causal_dl_next", "next_token.csv",
    )  # fmt: skip


def writing(view: View) -> None:
    """The next token's distribution, and the text written with the same settings."""
    next_token(view)
    generation(view)


# The sections in tabs: only the open one is computed and drawn, and its buttons and
# pickers rerun only this part (a fragment). The experiments read the next token's guess.
@st.fragment
def sections(view: View) -> None:
    keep_state("causal_window", "causal_temp", "causal_topk", "causal_topp", "causal_bars")
    keep_state("gen_seed", "gen_layer", "gen_head", *KEPT)
    lazy_sections("causal", {
        "mask": (_("The causal mask"), lambda: causal_mask(view)),
        "writing": (_("The next token, then generation"), lambda: writing(view)),
        "learns": (_("How it learns"), lambda: gpt_targets(view)),
        **causal_sections(view),
    })  # fmt: skip


def draw(view: View) -> None:
    """The page below its header (ui.frame.body): drawn again for each new sentence."""
    sections(view)


frame(
    "causal",
    draw,
    _("A decoder such as GPT may only look **left**: a mask puts −∞ above the diagonal of the "
      "scores, so after the softmax no token sees the future. Trained to predict each next "
      "token, it writes text one token at a time: predict a distribution, pick a token, "
      "append it, repeat. Temperature, top-k and top-p change how adventurous the pick is."),
    reset={"causal_window": None, "gen": None, **RESET},
)
