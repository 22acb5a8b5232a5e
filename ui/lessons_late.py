"""Lecture steps 7 to 12: multi-head attention, the layer, encoder-decoder and
cross-attention, BERT, GPT and the Vision Transformer, each on the shipped models."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import model
import viz
from analysis.heads import ROLES, head_roles
from analysis.lecture import sublayer_change
from analysis.query import head_links
from model.examples import PAIRS, PROBES
from ui import cache
from ui.figures import chart
from ui.lecture import pick, predict, try_your_own
from ui.lessons_early import words
from ui.show import md_escape

RESEARCHER = PROBES[2]
RIVER_MASKED = "I swam across the river to get to the other [MASK]."
PROMPT = "i go to"


def _ranked(probs: np.ndarray, vocab: list[str], k: int) -> list[tuple[str, float]]:
    top = np.argsort(-probs)[:k]
    return [(vocab[i], float(probs[i])) for i in top]


# --- 7. Multi-head attention -----------------------------------------------------------------


def heads() -> None:
    name, device = pick("causal")  # a decoder: its heads' habits are easy to tell apart
    t = cache.get_trace(RESEARCHER, name, device)
    roles = head_roles(t.attention_stack(), t.causal)
    labels = [f"L{n + 1}H{h + 1}" for n in range(t.n_layers) for h in range(t.n_heads)]
    table = np.stack([r.reshape(-1) for r in roles.values()], axis=1)
    chart("l7_roles", (RESEARCHER, name), viz.matrix_heatmap, table, labels, list(ROLES),
          title="what each head does (averaged over the queries)", signed=False,
          x_title="measure", y_title="layer, head", filename="lecture_heads")  # fmt: skip
    st.caption(" · ".join(f"**{k}**: {v}" for k, v in ROLES.items()))
    he = t.tokens.index("he")
    links = {w: head_links(t.attention_stack(), t.tokens, he, t.tokens.index(w), t.causal)[0]
             for w in ("researcher", "assistant")}  # fmt: skip
    linked = [w for w, h in links.items() if h.link]
    neither = "neither: no head singles one out"
    answer = max(linked, key=lambda w: links[w].lift) if linked else neither
    why = " ".join(
        f"'{w}': at most {h.weight:.2f} (layer {h.layer + 1}, head {h.head + 1}) while the "
        f"other words give it {h.others:.2f}{' (a link)' if h.link else ' (no link)'}."
        for w, h in links.items()
    )
    if predict("l7", f"In *{RESEARCHER}*, which word does a head link “he” to?",
               ["researcher", "assistant", neither], answer, why):
        best = links[answer] if answer in links else max(links.values(), key=lambda h: h.weight)
        chart("l7_he", (RESEARCHER, name, best.layer, best.head), viz.attention_row,
              t.layers[best.layer].attention[best.head][he], t.tokens, "he", query_index=he,
              title=f"“he” attends to… (layer {best.layer + 1}, head {best.head + 1})",
              filename="lecture_he")  # fmt: skip
        enc, edev = pick("masked")
        masked = RESEARCHER.replace(" he ", " [MASK] ")
        guesses = cache.fill_mask_ids(tuple(cache.get_trace(masked, enc, edev).ids), enc, edev, 3)
        st.caption("With “he” hidden, the encoder guesses "
                   + ", ".join(f"{w} {p:.0%}" for w, p in guesses[0]) + ".")  # fmt: skip
    with st.expander("Try your own sentence", expanded=False):
        text = try_your_own("l7_own", "A sentence", "The cat sat on the mat because it was warm.")
        if text:
            own = cache.get_trace(text, name, device)
            mine = head_roles(own.attention_stack(), own.causal)
            chart("l7_own_roles", (text, name), viz.matrix_heatmap,
                  np.stack([r.reshape(-1) for r in mine.values()], axis=1), labels, list(ROLES),
                  title="what each head does on your sentence", signed=False,
                  x_title="measure", y_title="layer, head", filename="lecture_own_heads")


# --- 8. The layer: residual stream, add & norm, MLP ------------------------------------------


def layer() -> None:
    name, device = pick("tokens")
    text = try_your_own("l8_text", "Sentence", "The cat sat on the mat.")
    t = cache.get_trace(text or "The cat sat", name, device)
    sizes, cols = sublayer_change(t)
    attn, mlp = sizes[:, 0::2].mean(), sizes[:, 1::2].mean()
    answer = "attention" if attn > mlp else "the MLP"
    st.latex(r"x \leftarrow \mathrm{Norm}(x + \mathrm{Attention}(x)) \qquad "
             r"x \leftarrow \mathrm{Norm}(x + \mathrm{MLP}(x))")  # fmt: skip
    if predict("l8", "Each sublayer adds its output to the token's vector (the residual "
               "stream). Which adds more, relative to the vector it is added to?",
               ["attention", "the MLP"], answer,
               f"On average over tokens and layers: attention {attn:.2f}, MLP {mlp:.2f} "
               "(|added| / |vector|)."):  # fmt: skip
        chart("l8_sizes", (text, name), viz.matrix_heatmap, sizes, t.tokens, cols,
              title="|what each sublayer adds| / |the vector it is added to|", signed=False,
              x_title="sublayer", filename="lecture_layer")  # fmt: skip


# --- 9. Encoder-decoder and cross-attention ----------------------------------------------------


def cross() -> None:
    name, device = pick("cross_attention")
    text = try_your_own("l9_text", "English (the toy grammar's words)", "i go to school").lower()
    text = text or "i go to school"
    out = cache.translate(text, name, device)
    if out.unknown:
        st.warning("Not in the toy grammar's vocabulary: " + ", ".join(md_escape(w) for w in
                   out.unknown) + ". Try the lecture's sentence, i go to school.")  # fmt: skip
        return
    t = cache.get_trace(text, name, device)
    st.markdown(f"**{md_escape(text)}** → **{md_escape(out.text)}**")
    src = t.encoder
    cross = t.cross_layers[-1].attention.mean(axis=0)  # [T_target, T_source]
    target = next((i for i, tok in enumerate(t.tokens) if "학교" in tok), len(t.tokens) - 1)
    row = max(target - 1, 0)  # the decoder position that writes it
    english = [w for w in words(src)]
    keys = [i for i in analysis.word_positions(src.tokens) if src.tokens[i] in english]
    look = max(keys, key=lambda i: cross[row, i]) if keys else 0
    if predict("l9", f"When the decoder writes “{t.tokens[target]}”, which English word does it "
               "look at most (last layer, heads averaged)?", english, src.tokens[look],
               f"Weight {cross[row, look]:.2f}: queries come from the decoder, keys and values "
               "from the encoder."):  # fmt: skip
        chart("l9_cross", (text, name), viz.attention_heatmap, cross, t.tokens,
              title="cross-attention, last layer, heads averaged", key_tokens=src.tokens,
              filename="lecture_cross")  # fmt: skip


# --- 10. BERT: masked prediction ----------------------------------------------------------------


def bert() -> None:
    name, device = pick("masked")
    text = try_your_own("l10_text", "A sentence with [MASK]", RIVER_MASKED)
    t = cache.get_trace(text or RIVER_MASKED, name, device)
    if "[MASK]" not in t.tokens:
        st.info("Put [MASK] in the sentence for the model to guess.")
        return
    guesses = cache.fill_mask_ids(tuple(t.ids), name, device, 5)[0]
    choices = list(dict.fromkeys([guesses[0][0], "bank", "shore", "river", "side"]))[:4]
    if predict("l10", "BERT reads the words on both sides of [MASK]. What is its first guess?",
               choices, guesses[0][0], f"{guesses[0][1]:.0%} for “{guesses[0][0]}”."):  # fmt: skip
        chart("l10_guesses", (text, name), viz.topk_bar, guesses,
              title="the encoder's guesses for [MASK]", filename="lecture_bert")  # fmt: skip
        chart("l10_tokens", (text, name), viz.token_strip, t.tokens, t.ids,
              title="what it reads", highlight=[t.tokens.index("[MASK]")],
              filename="lecture_bert_tokens")  # fmt: skip


# --- 11. GPT: causal mask and generation -----------------------------------------------------


def gpt() -> None:
    name, device = pick("causal")
    text = try_your_own("l11_text", "A prompt", PROMPT)
    t = cache.get_trace(text or PROMPT, name, device)
    probs = cache.next_distribution(tuple(int(i) for i in t.ids), name, device,
                                    model.Sampling.of(temperature=1.0))  # fmt: skip
    ranked = _ranked(probs, cache.vocabulary(name, device), 10)
    choices = list(dict.fromkeys([ranked[0][0], "school", "the", "bed"]))[:4]
    if predict("l11", f"After “{md_escape(text)}”, which token does the decoder find most "
               "likely next?", choices, ranked[0][0], f"{ranked[0][1]:.0%}; it may only look "
               "left: the mask puts −∞ above the diagonal."):  # fmt: skip
        left, right = st.columns(2)
        with left:
            chart("l11_mask", (text, name), viz.causal_mask_figure,
                  model.additive_mask(model.causal_mask(len(t.tokens))), t.tokens,
                  filename="lecture_mask")  # fmt: skip
        with right:
            chart("l11_next", (text, name), viz.topk_bar, ranked,
                  title="the next token", filename="lecture_next")  # fmt: skip


# --- 12. The Vision Transformer --------------------------------------------------------------


def vision() -> None:
    name, device = pick("vision")
    test_x, test_y = cache.digits_test_set()
    i = st.slider("Test image", 0, len(test_x) - 1, 3, key="l12_image")
    image = test_x[i]
    t = cache.trace_image(np.asarray(image, dtype=np.float32).tobytes(), name, device)
    grid = int(round((len(t.tokens) - 1) ** 0.5))
    chart("l12_patches", (i, name), viz.image_with_patches, t.image, t.image.shape[0] // grid,
          filename="lecture_patches")  # fmt: skip
    probs = analysis.softmax_rows(t.logits[:1])[0]
    ranked = sorted(((str(d), float(p)) for d, p in enumerate(probs)), key=lambda c: -c[1])
    if predict("l12", f"{len(t.tokens) - 1} patches and a [CLS] token: which digit will the "
               "model read?", [str(d) for d in range(10)], ranked[0][0],
               f"{ranked[0][1]:.0%} (the test label is {int(test_y[i])})."):  # fmt: skip
        rollout = analysis.attention_rollout(t.attention_stack())[0, 1:]
        left, right = st.columns(2)
        with left:
            chart("l12_probs", (i, name), viz.topk_bar, ranked[:5], title="the digits",
                  filename="lecture_digits")  # fmt: skip
        with right:
            chart("l12_rollout", (i, name), viz.attention_over_image, t.image,
                  analysis.as_grid(rollout / rollout.sum(), grid),
                  title="where [CLS] looked (rollout)", filename="lecture_rollout")  # fmt: skip


__all__ = ["PAIRS", "bert", "cross", "gpt", "heads", "layer", "vision"]
