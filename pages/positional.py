"""2. Positional encoding: where each token is, added to what it is."""

import streamlit as st

import model
import viz
from i18n import _
from ui.figures import chart
from ui.frame import frame
from ui.parts import compare
from ui.parts.positional import ORDER_PAIR, downloads, kind_of, order_matters
from ui.show import keep_state, lazy_sections, numbers, token_labels, window_picker
from ui.view import View


def binary(view: View, window: tuple[int, int] | None) -> None:
    """The first idea: the position written in binary, one bit per column."""
    t = view.trace
    st.subheader(_("First idea: write the position in binary"))
    bits = model.binary_encoding(len(t.tokens))
    chart(
        "pos_binary", view.key, viz.binary_table, bits, t.tokens, window=window, cols=False,
        filename="binary_positions",
    )  # fmt: skip
    st.caption(_(
        "Bit 0 flips at every position, bit 1 every two, bit 2 every four… Every position "
        "gets a different pattern, but the jumps from 0 to 1 are abrupt."
    ))


def sinusoids(view: View, labels: list[str], window: tuple[int, int] | None, max_len: int) -> None:
    """The smooth version the model uses: the formula, the matrix, the dot products, waves."""
    t, d = view.trace, view.trace.embeddings.shape[1]
    st.subheader(_("Sinusoidal encoding"))
    st.latex(
        r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right) \qquad "
        r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)"
    )
    kind = kind_of(view.model.positional)
    st.caption(_("Here d = {d} and this model's positions are *{kind}*.", d=d, kind=kind))
    if st.toggle(_("Show the whole context ({n} positions)", n=max_len), key="pos_full"):
        pe, rows, where, shown = model.sinusoidal_encoding(max_len, d), None, max_len, None
        names = [str(i) for i in range(max_len)]
    else:
        pe, rows, where, shown, names = t.positional, t.tokens, view.key, window, labels
    left, right = st.columns([3, 2])
    with left:
        chart(
            "pos_heatmap", where, viz.sinusoidal_heatmap, pe, rows, _("positions × dimensions"),
            window=shown, cols=False, filename="sinusoidal",
        )  # fmt: skip
    with right:
        chart(
            "pos_dot", where, viz.similarity_heatmap, pe @ pe.T, names,
            _("dot product between positions"), metric=_("dot product"), window=shown,
            filename="position_dot",
        )  # fmt: skip
    st.caption(_(
        "Right: PE(a)·PE(b) is largest on the diagonal and falls off with the distance "
        "|a − b|: neighbouring positions look alike, distant ones nearly orthogonal."
    ))

    c1, c2 = st.columns([3, 1])
    dims = c1.multiselect(_("Dimensions to draw as waves"), list(range(d)), key="pos_dims")
    span = c2.slider(_("Positions"), 8, max_len, key="pos_span")
    if dims:
        waves, curve = (model.sinusoidal_encoding(span, d, k) for k in (1, 16))
        where = (d, span, tuple(sorted(dims)))
        chart(
            "pos_waves", where, viz.positional_waves, waves, sorted(dims), curve=curve,
            filename="waves",
        )  # fmt: skip
    else:
        st.info(_("Pick at least one dimension to draw."))


def embedding_plus_position(view: View, window: tuple[int, int] | None) -> None:
    """Embedding + position = the input to the first layer."""
    t = view.trace
    st.subheader(_("Token embedding + positional encoding = input"))
    chart(
        "pos_sum", view.key, viz.embedding_plus_position, t.embeddings, t.positional,
        t.tokens, window=window, cols=False, filename="input",
    )  # fmt: skip
    st.caption(_(
        "Element by element: input[pos, j] = embedding[token, j] + PE[pos, j]. The same "
        "word at two positions starts layer 1 with two different vectors."
    ))


# Four sections in tabs: only the open one is computed and drawn, and its widgets rerun
# only this part (a fragment). Why order matters is measured, not assumed (ui/parts/positional.py).
@st.fragment
def sections(view: View, labels: list[str], window: tuple[int, int] | None) -> None:
    t, max_len = view.trace, view.model.max_len
    d = t.embeddings.shape[1]
    span = min(max_len, max(64, len(t.tokens)))
    keep_state("pos_full", pos_dims=[j for j in (0, 1, 8, 32) if j < d], pos_span=span)
    keep_state(pos_a=ORDER_PAIR[0], pos_b=ORDER_PAIR[1])
    lazy_sections("positional", {
        "binary": (_("Binary"), lambda: binary(view, window)),
        "sinusoidal": (_("Sinusoidal"), lambda: sinusoids(view, labels, window, max_len)),
        "sum": (_("Embedding + position"), lambda: embedding_plus_position(view, window)),
        "order": (_("Word order"), lambda: order_matters(view)),
    })  # fmt: skip


def draw(view: View) -> None:
    """The page below its header (ui.frame.body): drawn again for each new sentence."""
    other = compare.second_sentence(view)
    if other is not None:  # compare mode: one word's two vectors, positions on and off
        compare.strips(view, other)
        compare.word_across(view, other, positions=True)
        st.divider()
    t = view.trace
    labels = token_labels(t.tokens)
    window = window_picker(len(t.tokens), "pos_window")

    sections(view, labels, window)

    numbers("positional", lambda: downloads(t, labels))


frame(
    "positional",
    draw,
    _("Attention compares every token with every other one and ignores their order: for it "
      "*the dog bit the man* and *the man bit the dog* are the same set of tokens. So each "
      "position gets a vector of its own, which is **added** to the token's embedding. "
      "Notice the stripes: low dimensions change fast from one position to the next, high "
      "ones slowly, like the bits of a binary counter."),
    reset={"pos_window": None, "cmp_word": None},
    controls=compare.controls,
)
