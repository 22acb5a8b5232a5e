"""The translation pages' shared input: one English sentence of the toy grammar (the box of
both pages, bound to the tab's URL as `english=`: a reload, a shared link and a tab moved
to another replica read it there), the lecture's presets, and what to do with words
outside the vocabulary."""

from __future__ import annotations

import streamlit as st

import viz
from i18n import _
from model import Trace, Translation
from model.examples import TRANSLATION_EXAMPLES, TRANSLATION_PROBES
from ui import cache
from ui.figures import chart
from ui.show import md_escape
from ui.state import ENGLISH, bound, read_tab
from ui.view import Opened

BANKS = TRANSLATION_PROBES[3:5]  # the money bank (은행) and the river bank (강둑)
MAX_CHARS = 2000  # longer input is cut before it reaches the model (the context is far less)


def _on_example() -> None:
    choice = st.session_state.get("w_tr_example")
    if choice:
        st.session_state[ENGLISH] = choice  # the box's value, set before it is drawn
    st.session_state["w_tr_example"] = None  # the menu is an action, not a state


def english_sentence() -> str:
    """The English sentence box and the lecture's presets; stops the page when the
    sentence is empty. The box is bound to the URL's `english` while the sentence fits
    there (ui.state.bound), and kept for both translation pages."""
    text = read_tab().english
    st.session_state[ENGLISH] = text  # the tab's (ui.sidebar.sentence_box)
    left, right = st.columns([3, 2])
    text = left.text_input(
        _("English sentence"),
        next(iter(TRANSLATION_EXAMPLES)),
        key=ENGLISH,
        bind=bound(text),
        persist_state="session",
        help=_("Words of the toy grammar (see the vocabulary below), up to eight clauses "
               "joined by “and”. Press Enter."),
    )
    right.selectbox(
        _("Lecture examples"),
        list(TRANSLATION_EXAMPLES),
        index=None,
        key="w_tr_example",
        on_change=_on_example,
        placeholder=_("Pick a sentence…"),
    )
    text = text[:MAX_CHARS]
    if not text.strip():
        st.info(_("Type an English sentence above, or pick one of the lecture's."), icon="✍️")
        st.stop()
    return text


def english_vocabulary(vocabulary: list[str]) -> list[str]:
    """The English words of a shared English/Korean vocabulary (specials aside)."""
    return sorted(w for w in vocabulary if w.isascii() and w.isalpha())


def stop_if_unknown(translation: Translation, vocabulary: list[str]) -> None:
    """Name the words the model does not know, list the ones it does, and stop the page."""
    if not translation.unknown:
        return
    words = ", ".join(f"“{w}”" for w in dict.fromkeys(translation.unknown))
    st.error(
        _("Not in the toy grammar's vocabulary: {words}. The translators only know the words "
          "below; try one of the lecture's examples.", words=md_escape(words)),
        icon="📖",
    )
    st.code(" ".join(english_vocabulary(vocabulary)), language=None, wrap_lines=True)
    st.stop()


def translated(opened: Opened) -> tuple[str, Translation, Trace]:
    """The page's sentence, its translation by the page's model and the trace of both (the
    page stops, saying why, when the sentence is empty or has unknown words)."""
    name, device = opened.model_name, opened.device
    text = english_sentence()
    out = cache.translate(text, name, device)
    stop_if_unknown(out, cache.vocabulary(name, device))
    return text, out, cache.get_trace(text, name, device)


def reference(text: str) -> str | None:
    """The grammar's own translation of a preset (None for a typed sentence)."""
    key = " ".join(text.lower().strip().rstrip(".!?").split())
    return TRANSLATION_EXAMPLES.get(key)


def two_banks(name: str, device: str) -> None:
    """The two banks: 은행 (money) and 강둑 (river), and what each looks at in the English."""
    st.subheader(_("Two banks"))
    cols = st.columns(2)
    for n, (place, sentence) in enumerate(zip(cols, BANKS, strict=True)):
        bt = cache.get_trace(sentence, name, device)
        hits = [i for i, tok in enumerate(bt.tokens) if "은행" in tok or "강둑" in tok]
        with place:
            st.markdown(f"*{sentence}*")
            if not hits:
                st.caption(_("The translation has no 은행 or 강둑: {tokens}",
                             tokens=" ".join(bt.tokens[1:])))  # fmt: skip
                continue
            i = hits[0]  # the step before it (query i - 1) is the one that writes it
            row = bt.cross_layers[-1].attention.mean(0)[i - 1]
            top = int(row.argmax())
            chart(f"xa_bank_{n}", (sentence, name, device), viz.attention_row,
                  row, bt.encoder.tokens, bt.tokens[i - 1], filename="bank_cross_attention",
                  title=_("writing “{token}”: last layer, average of heads",
                          token=bt.tokens[i]))  # fmt: skip
            st.caption(_("The strongest English key: “{token}” ({weight}).",
                         token=bt.encoder.tokens[top], weight=format(row[top], ".0%")))
