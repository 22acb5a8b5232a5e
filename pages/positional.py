"""2. Positional encoding: where each token is, added to what it is."""

import streamlit as st

import model
import viz
from ui import cache, numbers
from ui.figures import figure
from ui.frame import frame
from ui.show import chart, download_csv, token_labels, window_picker

view = frame(
    "positional",
    "Attention compares every token with every other one and ignores their order: for it "
    "*the dog bit the man* and *the man bit the dog* are the same set of tokens. So each "
    "position gets a vector of its own, which is **added** to the token's embedding. "
    "Notice the stripes: low dimensions change fast from one position to the next, high "
    "ones slowly, like the bits of a binary counter.",
    reset=("pos_window",),
)
t, cfg = view.trace, view.bundle.cfg
n, d = len(t.tokens), cfg.d_model
labels = token_labels(t.tokens)
window = window_picker(n, "pos_window")

# Binary positions: the idea, with whole numbers
st.subheader("First idea: write the position in binary")
bits = model.binary_encoding(n)
fig = figure("pos_binary", view.key, viz.binary_table, bits, t.tokens, window=window, cols=False)
chart(fig, "pos_binary", "binary_positions")
st.caption(
    "Bit 0 flips at every position, bit 1 every two, bit 2 every four… Every position "
    "gets a different pattern, but the jumps from 0 to 1 are abrupt."
)

# Sinusoids: the smooth version the model uses
st.subheader("Sinusoidal encoding")
st.latex(
    r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right) \qquad "
    r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)"
)
st.caption(f"Here d = {d} and this model's positions are *{cfg.positional}*.")


@st.fragment
def sinusoids(t, key: tuple, d: int, max_len: int) -> None:
    full = st.toggle(f"Show the whole context ({max_len} positions)", key="pos_full")
    if full:
        pe, rows, where, shown = model.sinusoidal_encoding(max_len, d), None, max_len, None
    else:
        pe, rows, where, shown = t.positional, t.tokens, key, window
    names = [str(i) for i in range(len(pe))] if rows is None else labels
    left, right = st.columns([3, 2])
    with left:
        fig = figure(
            "pos_pe",
            where,
            viz.sinusoidal_heatmap,
            pe,
            rows,
            "positions × dimensions",
            window=shown,
            cols=False,
        )
        chart(fig, "pos_heatmap", "sinusoidal")
    with right:
        title = "dot product between positions"
        fig = figure(
            "pos_dot",
            where,
            viz.similarity_heatmap,
            pe @ pe.T,
            names,
            title,
            metric="dot product",
            window=shown,
        )
        chart(fig, "pos_dot", "position_dot")
    st.caption(
        "Right: PE(a)·PE(b) is largest on the diagonal and falls off with the distance "
        "|a − b|: neighbouring positions look alike, distant ones nearly orthogonal."
    )

    c1, c2 = st.columns([3, 1])
    dims = c1.multiselect(
        "Dimensions to draw as waves", list(range(d)), default=[0, 1, 8, 32], key="pos_dims"
    )
    span = c2.slider("Positions", 8, max_len, min(max_len, max(64, len(t.tokens))), key="pos_span")
    if dims:
        waves = model.sinusoidal_encoding(span, d)
        fig = figure(
            "pos_waves", (d, span, tuple(sorted(dims))), viz.positional_waves, waves, sorted(dims)
        )
        chart(fig, "pos_waves", "waves")
    else:
        st.info("Pick at least one dimension to draw.")


sinusoids(t, view.key, d, cfg.max_len)

# Embedding + position = the input to the first layer
st.subheader("Token embedding + positional encoding = input")
fig = figure(
    "pos_sum",
    view.key,
    viz.embedding_plus_position,
    t.embeddings,
    t.positional,
    t.tokens,
    window=window,
    cols=False,
)
chart(fig, "pos_sum", "input")
st.caption(
    "Element by element: input[pos, j] = embedding[token, j] + PE[pos, j]. The same "
    "word at two positions starts layer 1 with two different vectors."
)


# Why it matters: without positions, attention sees a set (its inputs rerun only this part)
@st.fragment
def order_matters(name: str, device: str) -> None:
    st.subheader("Without positions, word order is invisible")
    c1, c2 = st.columns(2)
    first = c1.text_input("Sentence A", "the dog bit the man", key="pos_a")
    second = c2.text_input("Sentence B", "the man bit the dog", key="pos_b")
    if not (first.strip() and second.strip()):
        st.info("Type two sentences with the same words in a different order.")
        return
    on, off = (
        [cache.get_trace(text, name, device, positions) for text in (first, second)]
        for positions in (True, False)
    )
    st.dataframe(numbers.order_table(on, off), hide_index=True)
    st.caption(
        "Each row compares a word's vector after the last layer in sentence A and in "
        "sentence B. Without positions an encoder gives the same word the same vector "
        "(cosine 1) whatever the order; with positions the order changes it. "
        "(A causal model already sees order through its mask.)"
    )


order_matters(view.model, view.device)

st.subheader("Numbers")
c1, c2 = st.columns(2)
with c1:
    name = "positional_encoding.csv"
    download_csv("Positional encoding (CSV)", t.positional, labels, None, "pos_dl_pe", name)
with c2:
    inputs = t.embeddings + t.positional
    name = "input.csv"
    download_csv("Input = embedding + position (CSV)", inputs, labels, None, "pos_dl_input", name)
