"""Compare mode: a second sentence beside the sidebar's, both drawn with the same model,
layer and head, and the difference made explicit for one word they share; on the masked
page, sentence A's activations patched into B's run (`patch_into`).

    frame("tokens", draw, controls=compare.controls)  # the toggle, above the body
    other = compare.second_sentence(view)        # None while compare mode is off
    if other: compare.word_across(view, other)   # the tokens page's comparison

The toggle and the second sentence are session state ("compare_on", "compare_text") that
the widgets copy back, as the sidebar does, so the mode stays on from page to page, and the
URL carries the second sentence (?compare=...) so a link opens the same comparison.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import viz
from analysis.interventions import first_guess, restored, two_guesses
from i18n import N_, _
from model import CLEAN, SITES, Patch, RunOptions, Trace
from model.examples import PAIRS
from ui import cache
from ui.figures import chart
from ui.parts.interventions.knockout import layers_on_request
from ui.show import md_escape
from ui.state import COMPARE, COMPARE_ON, MAX_URL_CHARS, SENTENCE, read_tab
from ui.view import View

NO_POSITIONS = RunOptions(positions=False)
PAIR_NAMES = [N_("bank: river / cash"), "the dog bit the man / the man bit the dog",
              "he / she was not satisfied"]  # fmt: skip
# shown with _(): the last two are the lecture's sentences, the same in both languages
SERIES = {"with positions": N_("with positions"), "without positions": N_("without positions")}


def _partner(sentence: str) -> str:
    """The lecture's other sentence of the pair `sentence` belongs to, else the first pair's."""
    for a, b in PAIRS:
        if sentence.strip() in (a, b):
            return b if sentence.strip() == a else a
    return PAIRS[0][1] if sentence.strip() != PAIRS[0][1] else PAIRS[0][0]


def _on_pair() -> None:
    ss = st.session_state
    pick = ss.get("w_compare_pair")
    if pick is not None:  # the boxes' values, set before they are drawn
        ss[SENTENCE], ss[COMPARE] = PAIRS[pick]
        ss["w_compare_pair"] = None


def controls() -> None:
    """The compare toggle (the URL's `compare_on`); when on, the second sentence's box (the
    URL's `compare`) and the lecture's pairs as presets. Drawn by the page's full run above
    its body (ui.frame's `controls`): a new sentence A, typed in the sidebar, reruns the
    body alone and does not send them again; a change here reruns the whole page."""
    on = st.toggle(_("Compare with a second sentence"), key=COMPARE_ON,
                   bind="query-params", persist_state="session",
                   help=_("Draw a second sentence beside this one, same layer and "
                          "head."))  # fmt: skip
    if not on:
        return
    c1 = c2 = st.container(horizontal=True, gap="large")  # one row: one element, not three
    text = c1.text_input(_("Second sentence (B); the sidebar's is A"),
                         _partner(read_tab().sentence), key=COMPARE, max_chars=MAX_URL_CHARS,
                         bind="query-params", persist_state="session")  # fmt: skip
    c2.selectbox(_("…or a pair from the lecture"), range(len(PAIRS)), index=None,
                 format_func=lambda i: _(PAIR_NAMES[i]), key="w_compare_pair",
                 on_change=_on_pair, placeholder=_("Pick a pair (sets A and B)…"))  # fmt: skip
    if not text.strip():
        st.info(_("Type a second sentence to compare with."), icon="✍️")


def second_sentence(view: View) -> Trace | None:
    """The second sentence's trace with the page's model, while compare mode is on and the
    second sentence is not empty (`controls` draws its widgets); else None."""
    text = read_tab().compare
    if not text.strip():
        return None
    return cache.get_trace(text, view.model_name, view.device)


def pick_word(a: Trace, b: Trace, key: str) -> tuple[str, int, int] | None:
    """A word both sentences have (by default "bank", else the first), with its position in
    each; None, with a note, when they share none."""
    shared = analysis.shared_words(a.tokens, b.tokens)
    if not shared:
        st.info(_("The two sentences share no word, so there is no word to follow in both."))
        return None
    words = [w for w, _i, _j in shared]
    first = next((words.index(w) for w in ("bank", "he", "dog") if w in words), 0)
    n = st.selectbox(_("Word to compare"), range(len(shared)), index=first, key=key,
                     format_func=lambda i: words[i])  # fmt: skip
    return shared[n]


def strips(view: View, b: Trace) -> None:
    """The two sentences' tokens, A above B."""
    for name, t in (("A", view.trace), ("B", b)):
        chart(f"cmp_strip_{name}", (view.model_name, tuple(t.ids)), viz.token_strip, t.tokens,
              t.ids, _("{name}: {n} tokens", name=name, n=len(t.ids)),
              filename=f"tokens_{name}")  # fmt: skip


def word_across(view: View, b: Trace, positions: bool = False) -> None:
    """The chosen word's two contextual vectors: their cosine at every stage (and, when
    `positions`, the same with the positional encoding switched off)."""
    a = view.trace
    picked = pick_word(a, b, "cmp_word")
    if picked is None:
        return
    word, i, j = picked
    stages = analysis.stage_names(a.n_layers)
    series = {"with positions": list(analysis.cosines_by_stage(a, b, i, j))}
    if positions:
        a0, b0 = (cache.get_trace(s, view.model_name, view.device, NO_POSITIONS)
                  for s in (view.sentence, read_tab().compare))  # fmt: skip
        series["without positions"] = list(analysis.cosines_by_stage(a0, b0, i, j))
    title = _("'{word}' in A and in B: cosine of its two vectors", word=word)
    named = {_(SERIES[k]): v for k, v in series.items()}
    chart("cmp_cosine", (view.key, tuple(b.ids), i, j, positions), viz.cosine_by_layer, stages,
          named, title, filename="compare_cosine")  # fmt: skip
    on = series["with positions"]
    said = {"word": md_escape(word), "first": format(on[0], ".2f"), "last": format(on[-1], ".2f")}
    if on[-1] < on[0] - 0.05:
        text = _("At the input the two '{word}' vectors have cosine {first}; after the last "
                 "layer {last}: the context has pulled them apart.", **said)
    elif on[-1] > on[0] + 0.05:
        text = _("At the input the two '{word}' vectors have cosine {first}; after the last "
                 "layer {last}: the layers made them more alike, not less.", **said)
    else:
        text = _("At the input the two '{word}' vectors have cosine {first}; after the last "
                 "layer {last}: the context changed them little.", **said)
    if positions:
        off = series["without positions"]
        ends = {"first": format(off[0], ".2f"), "last": format(off[-1], ".2f")}
        if min(off) > 0.999:
            text += " " + _("Without positions: {first} at the input, {last} at the end: "
                            "attention alone cannot tell the two orders apart.", **ends)
        elif a.causal:
            text += " " + _("Without positions: {first} at the input, {last} at the end: even "
                            "without positions a decoder sees order through its causal mask "
                            "(each token sees only the words before it).", **ends)
        else:
            text += " " + _("Without positions: {first} at the input, {last} at the end.", **ends)
    st.caption(text)


def _top_key(weights, tokens: list[str], query: int) -> str:
    """'river' (0.54): the word (not itself, not a special token) the query looks at most."""
    words = [n for n in analysis.word_positions(tokens) if n != query] or [query]
    best = max(words, key=lambda n: weights[query, n])
    return f"'{md_escape(tokens[best])}' ({weights[query, best]:.2f})"


def attention_side_by_side(view: View, b: Trace, layer: int, head: int, window=None) -> None:
    """A's and B's weights for the same layer and head side by side (as tall as the longer,
    so that they end level), and below them one shared word's row in each on one weight
    scale (the word picked above them)."""
    names, traces = ("A", "B"), (view.trace, b)
    maps = [t.layers[layer].attention[head] for t in traces]  # [T, T] each
    picked = pick_word(view.trace, b, "cmp_att_word")
    rows = max(len(t.tokens) for t in traces)
    for column, name, t, weights in zip(st.columns(2), names, traces, maps, strict=True):
        with column:
            chart(f"cmp_att_{name}", (view.model_name, tuple(t.ids), layer, head, rows),
                  viz.attention_heatmap, weights, t.tokens, tall_as=rows,
                  title=_("{name}: layer {layer}, head {head}", name=name, layer=layer + 1,
                          head=head + 1),
                  window=window, filename=f"attention_{name}")  # fmt: skip
    if picked is None:
        return
    word, *where = picked
    chart("cmp_rows", (view.model_name, tuple(view.trace.ids), tuple(b.ids), layer, head,
                       tuple(where)),
          viz.attention_rows, [w[q] for w, q in zip(maps, where, strict=True)],
          [t.tokens for t in traces], word, where,
          [_("{name}: '{word}' attends to…", name=name, word=word) for name in names],
          title=_("'{word}' in A and in B: its attention on one scale", word=word),
          filename="rows_A_B")  # fmt: skip
    found = [_top_key(w, t.tokens, q) for w, t, q in zip(maps, traces, where, strict=True)]
    st.caption(_(
        "In this head '{word}' looks most at {a} in A and at {b} in B (itself and the "
        "special tokens left out). Follow one query below to find the heads where a word "
        "stands out.", word=md_escape(word), a=found[0], b=found[1],
    ))


def guesses_side_by_side(view: View, b: Trace, k: int) -> None:
    """One shared word hidden behind [MASK] in A and in B: the two ranked guess lists."""
    picked = pick_word(view.trace, b, "cmp_mask_word")
    if picked is None:
        return
    word, i, j = picked
    name, device = view.model_name, view.device
    mask = cache.special_ids(name, device)["[MASK]"]
    notes = []
    for column, (label, t), q in zip(st.columns(2), (("A", view.trace), ("B", b)), (i, j),
                                     strict=True):  # fmt: skip
        ids = tuple(mask if n == q else int(x) for n, x in enumerate(t.ids))
        hidden = [n for n, x in enumerate(ids) if x == mask]
        ranked = cache.fill_mask_ids(ids, name, device, k)[hidden.index(q)]
        top, p = ranked[0]
        notes.append(f"{label}: '{md_escape(top)}' {p:.0%}")
        with column:
            chart(f"cmp_mask_{label}", (name, ids, k), viz.topk_bar, ranked,
                  title=_("{name}: '{word}' hidden", name=label, word=word),
                  filename=f"masked_{label}")  # fmt: skip
    st.caption(_("First guesses with '{word}' hidden: {guesses}.", word=md_escape(word),
                 guesses="; ".join(notes)))  # fmt: skip


def _aligned_pairs(name: str, device: str) -> list[str]:
    """The lecture's pairs whose two sentences have as many tokens with this model."""
    good = []
    for a, b in PAIRS:
        n, m = (len(cache.get_trace(s, name, device).tokens) for s in (a, b))
        if n == m:
            good.append(_("*{a}* / *{b}* ({n} tokens each)", a=md_escape(a), b=md_escape(b), n=n))
    return good


def patch_into(view: View, b: Trace | None) -> None:
    """Patch A into B: the shared word hidden in both, B run with A's activations at one
    (layer, position) at a time; the share of the logit difference between A's guess and
    B's that each patch restores."""
    st.subheader(_("Patch A into B"))
    if b is None:
        st.info(_("Turn on **Compare with a second sentence** above and pick the pair "
                  "“bank: river / cash”: A's stream is then copied into B's run, one layer "
                  "and position at a time."), icon="🔀")  # fmt: skip
        return
    a, name, device = view.trace, view.model_name, view.device
    if len(a.tokens) != len(b.tokens):
        counts = {"a": len(a.tokens), "b": len(b.tokens)}
        good = _aligned_pairs(name, device)
        st.info(_("Patching copies A's stream into B position by position, so both need as "
                  "many tokens: A has {a}, B {b}; try {pairs}.", **counts,
                  pairs=_(" or ").join(good)) if good
                else _("Patching copies A's stream into B position by position, so both need "
                       "as many tokens: A has {a}, B {b}.", **counts), icon="📏")  # fmt: skip
        return
    picked = pick_word(a, b, "cmp_patch_word")
    if picked is None:
        return
    word, i, j = picked
    specials = cache.special_ids(name, device)
    mask = specials["[MASK]"]
    ids_a, ids_b = (tuple(mask if n == q else int(x) for n, x in enumerate(t.ids))
                    for t, q in ((a, i), (b, j)))  # fmt: skip
    site = st.radio(_("Site"), SITES, horizontal=True, key="patch_site",
                    help=_("resid_pre: the stream entering the layer; attn_out, mlp_out: what "
                           "its attention or its MLP adds."))  # fmt: skip
    lp_a = cache.log_probs(ids_a, name, device, (CLEAN,), (i,))[0, 0]
    lp_b = cache.log_probs(ids_b, name, device, (CLEAN,), (j,))[0, 0]
    ga, gb = two_guesses(lp_a, lp_b, specials.values())
    n_layers, n = a.n_layers, len(ids_b)

    def patched(layer: int) -> np.ndarray:  # [T]: the share each position restores
        runs = (CLEAN, *(RunOptions(patch=Patch(ids_a, ((layer, p),), site)) for p in range(n)))
        lp = cache.log_probs(ids_b, name, device, runs, (j,))[:, 0]  # B clean in the same batch
        return restored(lp[1:, ga] - lp[1:, gb], lp_a[ga] - lp_a[gb], lp[0, ga] - lp[0, gb])

    rows = layers_on_request(("patch", ids_a, ids_b, site, name), n_layers, n_layers * n,
                             cache.is_big(name, device), patched)  # fmt: skip
    rows = [patched(layer) for layer in range(n_layers)] if rows is None else rows
    if not rows:
        return
    share, done = np.stack(rows), len(rows)
    vocab = cache.vocabulary(name, device)
    shown = [["[MASK]" if n == q else str(tok) for n, tok in enumerate(t.tokens)]
             for t, q in ((a, i), (b, j))]  # fmt: skip
    cols = [f"{tb} ← {ta}" if ta != tb else tb for ta, tb in zip(*shown, strict=True)]
    chart("patch_grid", (view.key, ids_a, ids_b, site, done), viz.matrix_heatmap, share,
          [_("layer {n}", n=layer + 1) for layer in range(done)], cols,
          title=_("share restored of log p({a}) − log p({b}) at B's [MASK]", a=vocab[ga],
                  b=vocab[gb]),
          x_title=_("position (B ← A)"), y_title=_("{site} of", site=site),
          filename="patch_grid")  # fmt: skip
    best = np.unravel_index(np.nanargmax(share), share.shape) if np.isfinite(share).any() else None
    both = first_guess(lp_a, specials.values())
    same = both == first_guess(lp_b, specials.values())
    words = {"word": md_escape(word), "a": md_escape(vocab[ga]), "b": md_escape(vocab[gb]),
             "both": md_escape(vocab[both])}  # fmt: skip
    said = (_("With '{word}' hidden, A guesses '{a}' and B '{b}'.", **words) if not same
            else _("With '{word}' hidden, both guess '{both}' first; followed here: each one's "
                   "likeliest other guess that it rates above the other sentence, '{a}' (A) and "
                   "'{b}' (B).", **words))  # fmt: skip
    said += " " + _("Each cell runs B with A's {site} at one layer and position: 0 leaves B's "
                    "difference, 1 gives A's.", site=site)  # fmt: skip
    if best is not None:
        layer, p = int(best[0]), int(best[1])
        said += " " + _("The most is restored by layer {layer} at position {p} ('{token}'): "
                        "{share}.", layer=layer + 1, p=p, token=md_escape(cols[p]),
                        share=format(share[layer, p], ".0%"))  # fmt: skip
        context = np.delete(share, j, axis=1)
        if np.isfinite(context).any():
            layer, p = np.unravel_index(np.nanargmax(context), context.shape)
            p += p >= j  # back to a position of the sentence
            said += " " + _("Away from the [MASK]: layer {layer} at position {p} ('{token}'), "
                            "{share}.", layer=layer + 1, p=p, token=md_escape(cols[p]),
                            share=format(share[layer, p], ".0%"))  # fmt: skip
    st.caption(said)
