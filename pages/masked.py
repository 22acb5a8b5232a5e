"""4. Masked prediction (BERT-style): hide tokens, let the encoder guess them from both sides."""

import streamlit as st

import analysis
import viz
from model import Trace
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts import compare
from ui.parts.masked import bert_masking
from ui.show import (
    download_json,
    keep_state,
    layer_head,
    lazy_sections,
    md_escape,
    token_labels,
    window_picker,
)
from ui.view import View

MAX_DRAWN = 6  # masks drawn as charts; the others are listed (a visitor may type 300)


def typed_masks(t: Trace) -> list[int]:
    """Positions of the [MASK] tokens typed in the sentence itself."""
    return [i for i, tok in enumerate(t.tokens) if tok == "[MASK]"]


def default_masks(t: Trace) -> list[int]:
    """What to hide at first: nothing more when the sentence has a [MASK], else one word."""
    return [] if typed_masks(t) else [analysis.default_token(t.tokens)]


# Where each [MASK] looked (pickers rerun only this part)
@st.fragment
def mask_attention(mt: Trace, masked: list[int], where: tuple) -> None:
    st.subheader("Where the [MASK] looked")
    layer, head, label = layer_head("mask", mt.n_layers, mt.n_heads, layer=mt.n_layers - 1)
    window = window_picker(len(mt.tokens), "mask_window", "Zoom to key positions")
    weights = analysis.head_weights(mt, layer, head)
    for n, pos in enumerate(masked):
        chart(
            f"mask_row_{n}", (where, layer, head, pos), viz.attention_row, weights[pos],
            mt.tokens, "[MASK]", query_index=pos, window=window, rows=False,
            title=f"attention of the [MASK] at position {pos}, {label}",
            filename=f"mask_attention_{pos}",
        )  # fmt: skip
    words = [i for i in analysis.word_positions(mt.tokens) if mt.tokens[i] != "[MASK]"]
    top = max(words, key=lambda i: weights[masked[0], i]) if words and masked else None
    said = (
        ""
        if top is None
        else (
            f" Here the first [MASK] looks most at '{md_escape(mt.tokens[top])}' "
            f"({weights[masked[0], top]:.2f}) in {label}; other heads and layers look elsewhere."
        )
    )
    st.caption("The bars say how much of each token's value flows into the [MASK]'s vector."
               + said)  # fmt: skip


def draw(view: View) -> None:
    """The page below its header (ui.frame.body): drawn again for each new sentence."""
    t, name, device = view.trace, view.model_name, view.device
    labels = token_labels(t.tokens)
    specials = cache.special_ids(name, device)
    typed = typed_masks(t)

    # Which tokens to hide: chosen here, plus any [MASK] typed in the sentence
    c1, c2 = st.columns([4, 1])
    chosen = c1.multiselect(
        "Tokens to mask",
        analysis.word_positions(t.tokens),
        key="mask_tokens",
        format_func=labels.__getitem__,
        help="Each chosen token becomes [MASK] before the model reads it; so does a typed [MASK].",
    )
    k = c2.slider("Guesses to show", 1, 20, 5, key="mask_k")
    other = compare.second_sentence(view)
    if other is not None:  # compare mode: one shared word hidden in both sentences
        compare.guesses_side_by_side(view, other, k)
        st.divider()
    masked = sorted(set(chosen) | set(typed))
    if not masked:
        st.info("Choose a token to mask above, or type [MASK] in the sentence.", icon="🎭")
        return

    ids = tuple(specials["[MASK]"] if i in masked else int(x) for i, x in enumerate(t.ids))
    mt = cache.get_trace_ids(ids, name, device)
    where = (view.key, ids)
    chart("mask_strip", where, viz.token_strip, mt.tokens, mt.ids, title="what the model reads",
          highlight=masked, filename="masked_tokens")  # fmt: skip

    ranked = cache.fill_mask_ids(ids, name, device, k)  # every mask is predicted (one pass)
    drawn = masked[:MAX_DRAWN]  # a few are drawn

    def guesses() -> None:
        """For each hidden position: the ranked guesses, and the rank of the hidden token."""
        st.subheader("The model's guesses")
        probs = analysis.prediction_probs(mt.logits[drawn], specials.values())
        columns = st.columns(min(len(drawn), 3))
        for n, (pos, candidates) in enumerate(zip(drawn, ranked, strict=False)):
            with columns[n % len(columns)]:
                was = "" if pos in typed else f" (was “{t.tokens[pos]}”)"
                chart(f"mask_topk_{n}", (where, pos, k), viz.topk_bar, candidates,
                      title=f"[MASK] at position {pos}{was}", filename=f"mask_{pos}")  # fmt: skip
                if pos not in typed:
                    p = probs[n][t.ids[pos]]
                    rank = int((probs[n] > p).sum()) + 1
                    st.caption(
                        f"The hidden token, {md_escape(t.tokens[pos])}, is guess number "
                        f"{rank:,} with probability {p:.1%}."
                    )
        if len(masked) > MAX_DRAWN:
            later = zip(masked[MAX_DRAWN:], ranked[MAX_DRAWN:], strict=True)
            rest = ", ".join(f"{p}: {c[0][0]}" for p, c in later)
            st.caption(f"{len(masked) - MAX_DRAWN} more masks, first guesses (position: token): "
                       f"{md_escape(rest[:2000])}. All of them are in the JSON below.")  # fmt: skip

    # Three sections in tabs: only the open one is computed and drawn.
    keep_state("mask_layer", "mask_head", "mask_window")
    lazy_sections("masked", {
        "The guesses": guesses,
        "Where the [MASK] looked": lambda: mask_attention(mt, drawn, where),
        "How BERT learns": lambda: bert_masking(view),
    })  # fmt: skip

    st.subheader("Numbers")
    predictions = [
        {"position": p, "original": t.tokens[p],
         "candidates": [{"token": w, "probability": q} for w, q in c]}
        for p, c in zip(masked, ranked, strict=True)
    ]  # fmt: skip
    record = {"sentence": view.sentence, "model": name, "tokens": mt.tokens, "masked": masked}
    record |= {"raw_tokens": mt.raw_tokens, "predictions": predictions}
    download_json("Masked predictions (JSON)", record, "mask_dl_json", "masked_predictions.json")


frame(
    "masked",
    draw,
    "An encoder such as BERT is trained by hiding about 15% of the tokens behind **[MASK]** "
    "and guessing them from the words on *both* sides. Mask a token (or type [MASK] in the "
    "sentence) and read the model's ranked guesses. Try *I swam across the river to get to "
    "the other bank.* with *bank* masked, then the sentence with the cash.",
    reset={"mask_window": None, "mask_tokens": default_masks, "cmp_mask_word": None},
)
