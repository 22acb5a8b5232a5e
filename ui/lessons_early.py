"""Lecture steps 1 to 6: the RNN's bottleneck, attention, query/key/value, tokens and
embeddings, positions, similarity and softmax. Each draws on the shipped models, asks the
class first (ui.lecture.predict), then shows the model's answer and its figure."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import model
import viz
from analysis.lecture import soft_lookup
from analysis.query import head_links
from model.examples import PAIRS, TRANSLATION_EXAMPLES
from model.trace import Trace
from ui import cache
from ui.figures import chart
from ui.lecture import pick, predict, try_your_own
from ui.registry import BY_KEY
from ui.show import md_escape

RIVER, CASH = PAIRS[0]
DOG_MAN, MAN_DOG = PAIRS[1]
LANGUAGES = ["c++", "java", "python", "haskell"]


def words(t: Trace) -> list[str]:
    """The sentence's distinct words (no special tokens, no punctuation), in order."""
    return list(dict.fromkeys(t.tokens[i] for i in analysis.word_positions(t.tokens)
                              if any(ch.isalpha() for ch in t.tokens[i])))  # fmt: skip


def trace_of(text: str, page: str) -> tuple[Trace, str, str]:
    """`text` traced by the first model that serves explorer page `page`."""
    name, device = pick(page)
    return cache.get_trace(text, name, device), name, device


def word_vector(text: str, name: str, device: str) -> np.ndarray:
    """A word's (or phrase's) input vector: the mean of its tokens' embeddings."""
    t = cache.get_trace(text, name, device)
    rows = analysis.word_positions(t.tokens) or list(range(len(t.tokens)))
    return t.embeddings[rows].mean(axis=0)


# --- 1. RNNs and their bottleneck ------------------------------------------------------------


def rnn() -> None:
    report = cache.translation_report().get("models", {})
    name, device = pick("rnn")
    eight = list(TRANSLATION_EXAMPLES)[-1]
    st.markdown(f"The LSTM translates *i go to school*: "
                f"**{cache.translate('i go to school', name, device).text}**.")  # fmt: skip
    rate = report.get(name, {}).get("by_clauses", {}).get("8", {}).get("exact_match")
    if rate is None:
        st.info("No translation evaluation report is shipped: run training.translation evaluate.")
        return
    buckets = ["more than 80%", "between 20% and 80%", "less than 20%"]
    answer = buckets[0] if rate > 0.8 else buckets[1] if rate >= 0.2 else buckets[2]
    if predict("l1", "A sentence of eight clauses must fit in the same one context vector. How "
               "often does the LSTM translate such a sentence exactly right?", buckets, answer,
               f"Measured on held-out sentences: {rate:.1%} at eight clauses."):  # fmt: skip
        lengths = list(range(1, 9))
        series = {m: [r["by_clauses"].get(str(n), {}).get("exact_match") for n in lengths]
                  for m, r in report.items()}  # fmt: skip
        chart("l1_length", "report", viz.accuracy_by_length, lengths, series,
              filename="lecture_bottleneck")  # fmt: skip
        out = cache.translate(eight, name, device).text
        st.caption(f"Eight clauses, the LSTM writes: {out}")
    with st.expander("Try your own sentence", expanded=False):
        text = try_your_own("l1_own", "English (the toy grammar's words)", "i go to school")
        out = cache.translate(text.lower(), name, device) if text else None
        if out and out.unknown:
            st.warning("Not in the toy grammar's vocabulary: "
                       + ", ".join(md_escape(w) for w in out.unknown))  # fmt: skip
        elif out:
            st.code(out.text or "(nothing)", language=None)


# --- 2. Attention: "bank" in two sentences --------------------------------------------------


def both_links(name: str, device: str) -> tuple[float, int, int]:
    """(lift, layer, head): the head of model `name` where "bank" singles out "river" in the
    river sentence and "cash" in the cash sentence best (the smaller of the two lifts over
    the other words' weight on the same key, analysis.query.head_links)."""
    lifts = []
    for text, key in ((RIVER, "river"), (CASH, "cash")):
        t = cache.get_trace(text, name, device)
        if "bank" not in t.tokens or key not in t.tokens:
            return (-1.0, 0, 0)
        links = head_links(t.attention_stack(), t.tokens, t.tokens.index("bank"),
                           t.tokens.index(key), t.causal)
        lifts.append({(h.layer, h.head): h.lift for h in links})
    best = max(lifts[0], key=lambda lh: min(lifts[0][lh], lifts[1][lh]))
    return (min(lifts[0][best], lifts[1][best]), *best)


def attention() -> None:
    device = model.pick_device(st.session_state.get("device", "auto"))
    offered = cache.models_for(BY_KEY["attention"])
    shipped = [n for n in offered if n in model.shipped()] or offered[:1]
    found = {name: both_links(name, device) for name in shipped}
    name = max(found, key=lambda n: found[n][0])
    _, layer, head = found[name]
    t = cache.get_trace(RIVER, name, device)
    if "bank" not in t.tokens:
        st.info("No model here splits the river sentence into a token “bank”.")
        return
    row = t.layers[layer].attention[head][t.tokens.index("bank")]
    keys = [i for i in analysis.word_positions(t.tokens) if t.tokens[i] not in ("bank", ".")]
    key = max(keys, key=lambda i: row[i])
    q = t.tokens.index("bank")
    where = f"layer {layer + 1}, head {head + 1} of {name}"
    if predict("l2", f"In *{RIVER}*, which word does “bank” attend to most? (We look at the "
               "head that best singles out “river” here and “cash” in the cash sentence.)",
               [w for w in words(t) if w != "bank"],
               t.tokens[key], f"In {where}, with weight "
               f"{t.layers[layer].attention[head][q, key]:.2f}."):  # fmt: skip
        for n, text in enumerate((RIVER, CASH)):
            tt = cache.get_trace(text, name, device)
            i = tt.tokens.index("bank")
            chart(f"l2_row_{n}", (text, name, layer, head), viz.attention_row,
                  tt.layers[layer].attention[head][i], tt.tokens, "bank", query_index=i,
                  title=f"“bank” attends to… ({where})", filename="lecture_bank")  # fmt: skip
        st.caption("The same word, two sentences, two different rows: the weights depend on "
                   "the input itself. The Attention page follows any query.")  # fmt: skip
    with st.expander("Try your own sentence", expanded=False):
        text = try_your_own("l2_own", "A sentence", "I sat on the bank of the river.")
        if text:
            tt = cache.get_trace(text, name, device)
            i = analysis.default_token(tt.tokens)
            chart("l2_own_row", (text, name, layer, head), viz.attention_row,
                  tt.layers[layer].attention[head][i], tt.tokens, tt.tokens[i], query_index=i,
                  title=f"“{tt.tokens[i]}” attends to… ({where})", filename="lecture_own")


# --- 3. Query, key, value: a soft dictionary -----------------------------------------------


def qkv() -> None:
    name, device = pick("tokens")
    table = {"c++": "fast, compiled", "java": "typed, everywhere", "python": "easy, dynamic",
             "haskell": "pure, strongly typed"}  # fmt: skip
    query = try_your_own("l3_query", "The query", "fast and strongly typed language")
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**A Python dict: a hard lookup**")
        st.code(f"languages = {table}\nlanguages[{query!r}]", language="python", wrap_lines=True)
        if query in table:
            st.success(f"→ {md_escape(table[query])}: the exact key, one value.")
        else:
            st.error(f"KeyError: {md_escape(repr(query))}: no key is exactly the query.")
    keys = np.stack([word_vector(w, name, device) for w in LANGUAGES])
    found = soft_lookup(word_vector(query or "language", name, device), keys, keys)
    answer = LANGUAGES[int(found.weights.argmax())]
    with c2:
        st.markdown("**Attention: a soft lookup**")
        st.caption("Every key is scored against the query (q·k/√d), the scores go through a "
                   "softmax, and the answer is the weighted blend of all the values. Here q, k "
                   f"and v are {name}'s trained embeddings of the words (no learned "
                   "projections yet: each layer adds W_Q, W_K and W_V).")  # fmt: skip
    if predict("l3", f"Which key does the query “{md_escape(query)}” weigh most?", LANGUAGES,
               answer, "Every key gets some weight; none is an exact match."):  # fmt: skip
        chart("l3_weights", (query, name), viz.topk_bar,
              list(zip(LANGUAGES, found.weights.tolist(), strict=True)),
              title="softmax(q·k/√d): the weight of each key", filename="lecture_soft_lookup")
        blend = " + ".join(f"{w:.2f}·v({k})" for k, w in zip(LANGUAGES, found.weights,
                                                                  strict=True))  # fmt: skip
        st.caption(f"output = {blend}")


# --- 4. Tokens and embeddings --------------------------------------------------------------


def embeddings() -> None:
    t, name, device = trace_of("power of industrial AI", "tokens")
    chart("l4_tokens", (t.ids, name), viz.token_strip, t.tokens, t.ids,
          title="“power of industrial AI” as tokens", filename="lecture_tokens")  # fmt: skip
    choices = ["aluminum", "rubber", "bread", "river"]
    steel = word_vector("steel", name, device)
    cos = {w: float(analysis.cosine_matrix(np.stack([steel, word_vector(w, name, device)]))[0, 1])
           for w in choices}  # fmt: skip
    answer = max(cos, key=cos.get)
    if predict("l4", "In the model's embedding table, which word lies nearest to “steel”?",
               choices, answer, "Cosines: " + ", ".join(f"{w} {c:.2f}" for w, c in cos.items())
               + ". Words used in similar sentences drift to similar vectors."):  # fmt: skip
        sid = cache.get_trace("steel", name, device)
        first = analysis.word_positions(sid.tokens)[0]
        near, _ = cache.neighbours(name, device, int(sid.ids[first]), 8)  # fmt: skip
        chart("l4_near", ("steel", name), viz.topk_bar, near,
              title="the 8 nearest tokens to “steel” (cosine)", filename="lecture_steel")
    with st.expander("Try your own word", expanded=False):
        word = try_your_own("l4_own", "A word", "cat")
        if word:
            wt = cache.get_trace(word, name, device)
            first = analysis.word_positions(wt.tokens)
            if first:
                near, _ = cache.neighbours(name, device, int(wt.ids[first[0]]), 8)
                chart("l4_own_near", (word, name), viz.topk_bar, near,
                      title=f"nearest to “{wt.tokens[first[0]]}”", filename="lecture_own_near")


# --- 5. Positional encoding -------------------------------------------------------------------


def positions() -> None:
    name, device = pick("masked")  # an encoder: without positions it sees a set
    on = [cache.get_trace(s, name, device) for s in (DOG_MAN, MAN_DOG)]
    off = [cache.get_trace(s, name, device, False) for s in (DOG_MAN, MAN_DOG)]
    i, j = on[0].tokens.index("dog"), on[1].tokens.index("dog")
    same = float(analysis.cosines_by_stage(*off, i, j)[-1])
    answer = "the same vector" if same > 0.999 else "different vectors"
    chart("l5_binary", (DOG_MAN, name), viz.binary_table, model.binary_encoding(len(on[0].tokens)),
          on[0].tokens, filename="lecture_binary")  # fmt: skip
    if predict("l5", f"Without positional encoding, does the encoder give “dog” the same vector "
               f"in *{DOG_MAN}* and *{MAN_DOG}*?", ["the same vector", "different vectors"],
               answer, f"Cosine after the last layer: {same:.3f} without positions, "
               f"{analysis.cosines_by_stage(*on, i, j)[-1]:.3f} with them."):  # fmt: skip
        series = {"with positions": list(analysis.cosines_by_stage(*on, i, j)),
                  "without positions": list(analysis.cosines_by_stage(*off, i, j))}  # fmt: skip
        chart("l5_cos", (name, "dog"), viz.cosine_by_layer, analysis.stage_names(on[0].n_layers),
              series, "“dog” in the two sentences: cosine per layer", filename="lecture_order")
        chart("l5_sin", (DOG_MAN, name), viz.sinusoidal_heatmap, on[0].positional, on[0].tokens,
              filename="lecture_sinusoids")  # fmt: skip
    with st.expander("Try your own pair", expanded=False):
        c1, c2 = st.columns(2)
        a = try_your_own("l5_a", "Sentence A", "the cat chased the mouse", c1)
        b = try_your_own("l5_b", "Sentence B", "the mouse chased the cat", c2)
        if not (a and b):
            return
        pair = [cache.get_trace(s, name, device, p) for p in (True, False) for s in (a, b)]
        shared = analysis.shared_words(pair[0].tokens, pair[1].tokens)
        if not shared:
            st.info("Type two sentences that share a word.")
            return
        word, i, j = shared[0]
        series = {"with positions": list(analysis.cosines_by_stage(pair[0], pair[1], i, j)),
                  "without positions": list(analysis.cosines_by_stage(pair[2], pair[3], i, j))}
        chart("l5_own", (a, b, name), viz.cosine_by_layer, analysis.stage_names(pair[0].n_layers),
              series, f"“{word}” in A and in B: cosine per layer", filename="lecture_own_order")


# --- 6. Similarity and softmax ----------------------------------------------------------------


def softmax() -> None:
    name, device = pick("attention")
    c1, c2, c3 = st.columns(3)
    a = try_your_own("l6_a", "Word a", "cat", c1, max_chars=40)
    b = try_your_own("l6_b", "Word b", "kitten", c2, max_chars=40)
    temp = c3.slider("Softmax temperature T", 0.1, 5.0, 1.0, 0.1, key="l6_t")
    if a and b:
        va, vb = word_vector(a, name, device), word_vector(b, name, device)
        d = va.shape[0]
        cos = float(analysis.cosine_matrix(np.stack([va, vb]))[0, 1])
        st.markdown(f"a·b = {va @ vb:.2f} · a·b/√d = {va @ vb / np.sqrt(d):.2f} (d = {d}) · "
                    f"cosine = {cos:.2f}")  # fmt: skip
    t = cache.get_trace(RIVER, name, device)
    q = t.tokens.index("bank")
    steps = analysis.attention_steps(t, cache.attention_weights(name, device, 0), 0, 0)
    scores = steps.masked[q]
    sharp = analysis.softmax_rows(scores[None] / temp)[0]
    flat = analysis.softmax_rows(scores[None] / (temp * 2))[0]
    answer = "flatter" if sharp.max() > flat.max() else "sharper"
    if predict("l6", f"Dividing the scores by a larger temperature (T = {temp:.1f} → "
               f"{temp * 2:.1f}): does “bank”'s attention get sharper or flatter?",
               ["sharper", "flatter"], answer,
               f"Its largest weight goes from {sharp.max():.2f} to {flat.max():.2f}."):  # fmt: skip
        pairs = list(zip(t.tokens, sharp.tolist(), strict=True))
        chart("l6_row", (name, temp), viz.topk_bar, pairs,
              title=f"softmax(q·k/√d / {temp:.1f}) for “bank”, layer 1 head 1",
              filename="lecture_softmax")  # fmt: skip
        chart("l6_all", (name,), viz.attention_heatmap, t.layers[0].attention[0], t.tokens,
              title="softmax(QKᵀ/√d) for every query: layer 1, head 1", filename="lecture_qk")
