"""What each page asks the experiments: its prediction (the guess at the [MASK], the next
token, the translation, the digit), the input the passes read, and what it shows once heads
are knocked out. Each function is one section tab of its page."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import _
from model import RunOptions, Sampling, Trace
from ui import cache
from ui.figures import chart
from ui.parts.interventions.knockout import Question, described, knockout
from ui.parts.interventions.mlp import KEPT as MLP_KEPT
from ui.parts.interventions.mlp import inside_mlp
from ui.parts.interventions.reading import beside_attribution, layer_guesses
from ui.show import md_escape
from ui.view import Opened, View

UNFILTERED = Sampling()
KEPT = ("ko_token", "ko_heads", "ko_keep", "attr_method", "attr_layer", "attr_head",
        "exp_position", *MLP_KEPT)
# the experiments' widgets, whose values are kept while their tab is shut (ui.show.keep_state)


def default_position(t: Trace) -> int:
    """Where a decoder's guess is read at first: before the sentence's last word (the
    river sentence's "bank"), else after its last token."""
    words = [i for i in analysis.word_positions(t.tokens) if any(c.isalpha() for c in t.tokens[i])]
    return words[-1] - 1 if words and words[-1] > 0 else len(t.tokens) - 1


RESET = {"ko_token": None, "ko_heads": None, "exp_position": default_position}
# the pages' reset keys: the token followed, the heads and the position move with the input


def _guesses(t: Trace, position: int, name: str, device: str, k: int) -> list[int]:
    """The model's k first guesses at `position`, as ids: special tokens left out (but a
    decoder's [EOS], as its next-token view keeps it)."""
    specials = dict(cache.special_ids(name, device))
    if t.causal:
        specials.pop("[EOS]", None)
    probs = analysis.prediction_probs(t.logits[[position]], specials.values())
    return [int(i) for i in np.argsort(-probs[0], kind="stable")[:k]]


def _token(t: Trace, position: int, name: str, device: str, also: int | None = None) -> int:
    """The token the grid follows: the first guess by default, or one the visitor picks."""
    vocab = cache.vocabulary(name, device)
    choices = _guesses(t, position, name, device, 10)
    if also is not None and also not in choices:
        choices.append(also)
    if st.session_state.get("ko_token") not in choices:
        st.session_state["ko_token"] = choices[0]
    return st.selectbox(_("Token whose log-probability the grid follows"), choices,
                        key="ko_token", format_func=lambda i: vocab[i],
                        help=_("The first guess, or another of the model's guesses."))  # fmt: skip


def _ranked_bar(key: str, where: tuple, candidates: list, title: str) -> None:
    chart(key, where, viz.topk_bar, candidates, title=title, filename=key)


# -- the text pages: a prediction at one position --------------------------------------------


def read_at(t: Trace) -> int:
    """A decoder's position picker: the guess read is the token after this one."""
    if "exp_position" not in st.session_state or st.session_state["exp_position"] >= len(t.tokens):
        st.session_state["exp_position"] = default_position(t)
    after = [*t.tokens[1:], "?"]
    return st.selectbox(_("Read the guess after"), range(len(t.tokens)), key="exp_position",
                        format_func=lambda i: f"{i} · {t.tokens[i]} → {after[i]}")  # fmt: skip


def causal_sections(view: View) -> dict:
    """The causal page's experiment tabs (ui.show.lazy_sections: id -> (label, draw)): the
    guess after a position picked in each."""
    t = view.trace

    def nxt(p: int) -> int | None:
        return int(t.ids[p + 1]) if p + 1 < len(t.ids) else None

    return {
        "knockout": (_("Knock out heads"),
                     lambda: text_knockout(view, t, (p := read_at(t)), nxt(p))),
        "lens": (_("Every layer's guess"), lambda: text_lens(view, t, read_at(t))),
        "attribution": (_("Attention beside attribution"),
                        lambda: text_attribution(view, t, read_at(t))),
        "mlp": (_("Inside the MLP"), lambda: text_mlp(view, t, read_at(t))),
    }


def text_knockout(view: View, t: Trace, position: int, original: int | None = None) -> None:
    """Masked (t: the sentence with its [MASK]s, position: the first one) or causal (the
    sentence and a position): the grid, then the prediction after a knockout; `original`:
    the hidden (or next) token, offered beside the guesses."""
    name, device = view.model_name, view.device
    ids = tuple(int(i) for i in t.ids)
    token = _token(t, position, name, device, original)
    vocab = cache.vocabulary(name, device)
    at_mask = t.tokens[position] == "[MASK]"
    said = {"token": vocab[token], "after": t.tokens[position]}
    label = (_("log p({token}) at the [MASK]", **said) if at_mask
             else _("log p({token}) after '{after}'", **said))  # fmt: skip
    q = Question(ids, name, device, (position,), (token,), label)
    guess = page_guess(view, t, position)

    def trace_of(options: RunOptions) -> Trace:
        return cache.get_trace_ids(ids, name, device, options)

    knockout(q, view.model.heads(), (view.key, ids), lambda o: guess(o, "ko_guesses"), trace_of,
             query=position)  # fmt: skip


def page_guess(view: View, t: Trace, position: int) -> Callable[[RunOptions, str], None]:
    """What draws the page's prediction under some options as a chart of its own key: the
    guess at the [MASK] (masked; t: the sentence with its [MASK]s) or after `position`."""
    name, device = view.model_name, view.device
    ids = tuple(int(i) for i in t.ids)
    vocab = cache.vocabulary(name, device)
    at_mask = t.tokens[position] == "[MASK]"

    def show(options: RunOptions, key: str) -> None:
        if view.model.can("fill_mask"):
            masks = [n for n, tok in enumerate(t.tokens) if tok == "[MASK]"]
            ranked = cache.fill_mask_ids(ids, name, device, 5, options)[masks.index(position)]
        else:
            probs = cache.next_distribution(ids[: position + 1], name, device, UNFILTERED, options)
            ranked = [(vocab[i], float(probs[i])) for i in np.argsort(-probs)[:5]]
        how = {"options": described(options), "after": t.tokens[position]}
        _ranked_bar(key, (view.key, ids, options), ranked,
                    _("the guess at the [MASK], {options}", **how) if at_mask
                    else _("the guess after '{after}', {options}", **how))  # fmt: skip

    return show


def text_mlp(view: View, t: Trace, position: int) -> None:
    """Inside the MLP at `position`, the page's prediction there before and after."""
    token = _guesses(t, position, view.model_name, view.device, 1)[0]
    inside_mlp(view, t, position, page_guess(view, t, position), token)


def text_lens(view: View, t: Trace, position: int) -> None:
    """Every layer's guess at `position`, for the sentence as `t` reads it."""
    ids = tuple(int(i) for i in t.ids)
    at = {"token": t.tokens[position], "position": position}
    what = (_("at the [MASK] (position {position})", **at) if t.tokens[position] == "[MASK]"
            else _("at '{token}' (position {position})", **at))  # fmt: skip
    layer_guesses(ids, view.model_name, view.device, position, what)


def text_attribution(view: View, t: Trace, position: int) -> None:
    """Attention beside attribution for the first guess at `position`."""
    name, device = view.model_name, view.device
    token = _guesses(t, position, name, device, 1)[0]
    ids = tuple(int(i) for i in t.ids)
    vocab = cache.vocabulary(name, device)
    beside_attribution(t, ids, name, device, position, token, vocab[token])


# -- the translation: the whole target sentence -----------------------------------------------


def translation_knockout(opened: Opened, text: str, t: Trace) -> None:
    """The log-probability of the whole translation (teacher-forced), each head out alone
    (encoder, decoder and cross-attention), then heads out together and the translation
    decoded again."""
    name, device = opened.model_name, opened.device
    eos = cache.special_ids(name, device)["[EOS]"]
    pair = (tuple(int(i) for i in t.encoder.ids), tuple(int(i) for i in t.ids))
    q = Question(pair, name, device, tuple(range(len(t.ids))), (*pair[1][1:], eos),
                 _("log p(the translation)"))  # fmt: skip

    def show(options: RunOptions) -> None:
        out = cache.translate(text, name, device, options)
        st.markdown(_("**Decoded again, {options}:**", options=md_escape(described(options))))
        st.code(out.text or _("(nothing)"), language=None, wrap_lines=True)

    def trace_of(options: RunOptions) -> Trace:
        return cache.get_trace(text, name, device, options)

    knockout(q, opened.model.heads(), (text, name, device), show, trace_of, cross=True)
    st.caption(_("The grid's rows are the encoder's self-attention, the decoder's masked "
                 "self-attention and its cross-attention; the attention drawn is the last "
                 "step's cross-attention over the English words."))  # fmt: skip


# -- the digit ----------------------------------------------------------------------------------


def vision_knockout(opened: Opened, pixels: bytes, t: Trace) -> None:
    """The log-probability of the predicted digit (or another), each head out alone, then
    heads out together and the digits ranked again; [CLS]'s attention per layer."""
    name, device = opened.model_name, opened.device
    probs = analysis.softmax_rows(t.logits[:1])[0]
    order = [int(i) for i in np.argsort(-probs, kind="stable")]
    if st.session_state.get("ko_token") not in order:
        st.session_state["ko_token"] = order[0]
    digit = st.selectbox(_("Digit whose log-probability the grid follows"), order,
                         key="ko_token")  # fmt: skip
    q = Question(pixels, name, device, (0,), (digit,), f"log p({digit})")

    def show(options: RunOptions) -> None:
        p = analysis.softmax_rows(trace_of(options).logits[:1])[0]
        ranked = sorted(((str(d), float(x)) for d, x in enumerate(p)), key=lambda c: -c[1])
        _ranked_bar("ko_digits", (pixels, name, device, options), ranked,
                    _("the digits, {options}", options=described(options)))  # fmt: skip

    def trace_of(options: RunOptions) -> Trace:
        return cache.trace_image(pixels, name, device, options)

    knockout(q, opened.model.heads(), (pixels, name, device), show, trace_of, query=0)
