"""1. Tokens and embeddings: the sentence as tokens, each token as a vector."""

import streamlit as st

import analysis
import viz
from i18n import _
from model import Encoded, Trace
from ui.figures import chart
from ui.frame import frame
from ui.parts import compare
from ui.parts.interventions.mlp import KEPT as MLP_KEPT
from ui.parts.interventions.mlp import token_mlp
from ui.parts.tokens import neighbours
from ui.show import (
    download_csv,
    download_json,
    keep_state,
    lazy_sections,
    numbers,
    raw_column,
    token_labels,
    tokens_caption,
    window_picker,
)
from ui.view import View


def matrices(view: View, cos) -> None:
    """The embedding matrix and the cosine similarity between the sentence's tokens."""
    t, key = view.trace, view.key
    window = window_picker(len(t.tokens), "tok_window")
    left, right = st.columns([3, 2])
    with left:
        chart(
            "tok_embeddings", key, viz.matrix_heatmap, t.embeddings, t.tokens,
            title=_("token embeddings (tokens × dimensions)"), window=window, cols=False,
            filename="embeddings",
        )  # fmt: skip
    with right:
        chart(
            "tok_cosine", key, viz.similarity_heatmap, cos, t.tokens,
            title=_("cosine similarity of the embeddings"), window=window, filename="cosine",
        )  # fmt: skip
    st.caption(_("Left: one row per token, one column per dimension (red positive, blue "
                 "negative). Right: cos(a, b) = a·b / (|a| |b|): 1 for the same direction, 0 "
                 "for unrelated (orthogonal)."))  # fmt: skip


def pick_token(view: View, labels: list[str]) -> int:
    """The token the last two sections follow (one picker, kept across them)."""
    t = view.trace
    words = analysis.word_positions(t.tokens) or list(range(len(t.tokens)))
    if st.session_state.get("tok_token") not in words:
        st.session_state["tok_token"] = analysis.default_token(t.tokens)
    return st.selectbox(
        _("Token"), words, key="tok_token", format_func=labels.__getitem__,
        help=_("The token to follow: its neighbours in the vocabulary, its path through "
               "the layers."),
    )  # fmt: skip


def contextual(view: View, pos: int, dims: list[str]) -> None:
    """The token's vector after each layer: how far the context moves it."""
    t, key = view.trace, view.key
    vectors = t.residual_stream()[:, pos, :]
    title = _("'{token}' (position {pos}) through the layers", token=t.tokens[pos], pos=pos)
    cosine = analysis.cosine_to_first(vectors)
    chart(
        "tok_trajectory", (key, pos), viz.layer_trajectory, vectors, t.tokens[pos], cosine,
        title=title, filename="contextual",
    )  # fmt: skip
    st.caption(_(
        "Each layer adds what attention gathered from the other tokens: the further the cosine "
        "falls from 1, the more the context has changed the vector. Compare 'bank' in the "
        "river sentence and in the cash sentence."
    ))
    stages = analysis.stage_names(t.n_layers)
    name = f"token_{pos}_layers.csv"
    download_csv(_("Vectors per layer (CSV)"), vectors, stages, dims, "tok_dl_traj", name)


# The sections in tabs: only the open one is computed and drawn, in a fragment.
@st.fragment
def sections(view: View, labels: list[str], dims: list[str], cos) -> None:
    keep_state("tok_window", "tok_token", *MLP_KEPT, tok_k=8)
    lazy_sections("tokens", {
        "matrix": (_("Embedding matrix"), lambda: matrices(view, cos)),
        "neighbours": (_("Nearest neighbours"), lambda: neighbours(view, pick_token(view, labels))),
        "layers": (_("Through the layers"),
                   lambda: contextual(view, pick_token(view, labels), dims)),
        "mlp": (_("Inside the MLP"), lambda: token_mlp(view, pick_token(view, labels))),
    })  # fmt: skip


def chips(t: Trace | Encoded, key: tuple[str, str]) -> None:
    """The sentence as token chips: the page's top, drawn before the model is loaded and
    the sentence traced (ui.frame's `first`: from the tokenizer alone)."""
    chart("tok_strip", key, viz.token_strip, t.tokens, t.ids, _("{n} tokens", n=len(t.ids)),
          filename="tokens")  # fmt: skip
    st.caption(tokens_caption(t))


def draw(view: View) -> None:
    """The page below its chips (ui.frame.body): drawn again for each new sentence."""
    other = compare.second_sentence(view)
    if other is not None:  # compare mode: both sentences' tokens, and one word's two vectors
        compare.strips(view, other)
        compare.word_across(view, other)
        st.divider()
    t = view.trace
    labels = token_labels(t.tokens)
    dims = [str(j) for j in range(t.embeddings.shape[1])]
    cos = analysis.cosine_matrix(t.embeddings)
    sections(view, labels, dims, cos)

    numbers("tokens", lambda: downloads(view, labels, dims, cos))


def downloads(view: View, labels: list[str], dims: list[str], cos) -> None:
    """The embeddings, their cosine similarity and the tokens, to download."""
    t = view.trace
    c1, c2, c3 = st.columns(3)
    raw = raw_column(t)
    with c1:
        download_csv(_("Embeddings (CSV)"), t.embeddings, labels, dims, "tok_dl_emb",
                     "embeddings.csv", raw)  # fmt: skip
    with c2:
        download_csv(_("Cosine similarity (CSV)"), cos, labels, labels, "tok_dl_cos", "cosine.csv",
                     raw)  # fmt: skip
    with c3:
        record = {"sentence": view.sentence, "model": view.model_name, "tokens": t.tokens}
        record |= {"raw_tokens": t.raw_tokens, "fragment_of": t.fragment_of}
        record |= {"ids": t.ids, "offsets": t.offsets}
        download_json(_("Tokens and ids (JSON)"), record, "tok_dl_json", "tokens.json")


frame(
    "tokens",
    draw,
    _("The model never sees letters: the tokenizer cuts the sentence into **tokens** (a word "
      "or a piece of one, shown as the text it stands for), and each token id picks one row of "
      "the **embedding** table, a vector of numbers, learned in training. Words used in "
      "similar sentences drift to similar vectors (tab *Nearest neighbours*: a token's nearest "
      "neighbours in the table); attention then mixes them, so a token's vector comes to "
      "depend on its context (tab *Through the layers*)."),
    reset={"tok_token": None, "tok_window": None, "cmp_word": None},
    first=chips,
    controls=compare.controls,
)
