"""1. Tokens and embeddings: the sentence as tokens, each token as a vector."""

import streamlit as st

import analysis
import viz
from ui import cache, compare
from ui.figures import chart
from ui.frame import View, frame
from ui.show import download_csv, download_json, token_labels, window_picker

view = frame(
    "tokens",
    "The model never sees letters: the tokenizer cuts the sentence into **tokens** (a word "
    "or a piece of one, `##` marks a continuation), and each token id picks one row of the "
    "**embedding** table, a vector of numbers, learned in training. Words used in similar "
    "sentences drift to similar vectors (below: a token's nearest neighbours in the table); "
    "attention then mixes them, so a token's vector comes to depend on its context.",
    reset={"tok_token": None, "tok_window": None, "cmp_word": None},
)
other = compare.second_sentence(view)
if other is not None:  # compare mode: both sentences' tokens, and one word's two vectors
    compare.strips(view, other)
    compare.word_across(view, other)
    st.divider()
t, key = view.trace, view.key
labels = token_labels(t.tokens)
dims = [str(j) for j in range(t.embeddings.shape[1])]
cos = analysis.cosine_matrix(t.embeddings)

# The sentence as token chips
chart("tok_strip", key, viz.token_strip, t.tokens, t.ids, f"{len(t.ids)} tokens", filename="tokens")
st.caption("Hover a chip for its position and id. [BOS] and [EOS] mark the start and the end.")

# The embedding matrix and the similarity between tokens
window = window_picker(len(t.tokens), "tok_window")
left, right = st.columns([3, 2])
with left:
    chart(
        "tok_embeddings", key, viz.matrix_heatmap, t.embeddings, t.tokens,
        title="token embeddings (tokens × dimensions)", window=window, cols=False,
        filename="embeddings",
    )  # fmt: skip
with right:
    chart(
        "tok_cosine", key, viz.similarity_heatmap, cos, t.tokens,
        title="cosine similarity of the embeddings", window=window, filename="cosine",
    )  # fmt: skip
st.caption(
    "Left: one row per token, one column per dimension (red positive, blue negative). Right: "
    "cos(a, b) = a·b / (|a| |b|): 1 for the same direction, 0 for unrelated (orthogonal)."
)


def embedding_note(e: dict) -> str:
    """What the evaluation measured about this model's embedding table, in one sentence."""
    steel = ", ".join(e["neighbours"].get("steel", [])[:4])
    syn, rnd = e["synonyms"]["either"], e["random"]["either"]
    return (
        f"Measured (assets/models/evaluation.json): frequent words get meaningful neighbours "
        f"(steel: {steel}), rare ones mostly noise: {syn:.1%} of 300 WordNet synonym pairs "
        f"are among each other's 10 nearest, {rnd:.1%} of random pairs."
    )


# A token's neighbours and its path through the layers (the pickers rerun only this part)
@st.fragment
def token_views(view: View, labels: list[str], dims: list[str]) -> None:
    t, key = view.trace, view.key
    words = analysis.word_positions(t.tokens) or list(range(len(t.tokens)))
    c1, c2 = st.columns([3, 1])
    pos = c1.selectbox(
        "Token",
        words,
        index=words.index(analysis.default_token(t.tokens)),
        key="tok_token",
        format_func=labels.__getitem__,
        help="The token to follow below.",
    )
    k = c2.slider("Neighbours", 3, 20, 8, key="tok_k")
    near, near_vecs = cache.neighbours(view.model_name, view.device, int(t.ids[pos]), k)
    left, right = st.columns([3, 2])
    with left:
        points = analysis.neighbour_map(t, pos, near, near_vecs)
        chart("tok_map", (key, pos, k), viz.embedding_map, *points, filename="embedding_map")
    with right:
        st.markdown("**Nearest in the vocabulary** (cosine)")
        table = {"token": [w for w, _ in near], "cosine": [round(c, 3) for _, c in near]}
        st.dataframe(table, hide_index=True, height=min(36 * (len(near) + 1), 420))
    st.caption(
        "PCA squeezes the vectors onto the two directions along which they differ most; "
        "nearby points have similar embeddings."
    )
    measured = cache.evaluation_report().get("models", {}).get(view.model_name, {})
    if "embeddings" in measured:
        st.caption(embedding_note(measured["embeddings"]))

    st.subheader("Contextual embeddings: the token's vector layer by layer")
    vectors = t.residual_stream()[:, pos, :]
    title = f"'{t.tokens[pos]}' (position {pos}) through the layers"
    cosine = analysis.cosine_to_first(vectors)
    chart(
        "tok_trajectory", (key, pos), viz.layer_trajectory, vectors, t.tokens[pos], cosine,
        title=title, filename="contextual",
    )  # fmt: skip
    st.caption(
        "Each layer adds what attention gathered from the other tokens: the further the cosine "
        "falls from 1, the more the context has changed the vector. Compare 'bank' in the "
        "river sentence and in the cash sentence."
    )
    stages = analysis.stage_names(t.n_layers)
    name = f"token_{pos}_layers.csv"
    download_csv("Vectors per layer (CSV)", vectors, stages, dims, "tok_dl_traj", name)


token_views(view, labels, dims)

st.subheader("Numbers")
c1, c2, c3 = st.columns(3)
with c1:
    download_csv("Embeddings (CSV)", t.embeddings, labels, dims, "tok_dl_emb", "embeddings.csv")
with c2:
    download_csv("Cosine similarity (CSV)", cos, labels, labels, "tok_dl_cos", "cosine.csv")
with c3:
    record = {"sentence": view.sentence, "model": view.model_name, "tokens": t.tokens}
    record |= {"ids": t.ids, "offsets": t.offsets}
    download_json("Tokens and ids (JSON)", record, "tok_dl_json", "tokens.json")
