"""What the lecture's steps share: the models they pick by capability, the question asked
before the answer (predict, then reveal), the step's own text box, and small helpers on a
trace. A step module (ui/lecture/steps/) imports from here; nothing here knows the steps."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

import analysis
import model
from i18n import _, particle
from model.trace import Trace
from ui import cache
from ui.lecture import classroom
from ui.registry import BY_KEY
from ui.show import md_escape
from ui.state import read_tab


def pick(page: str) -> tuple[str, str]:
    """The first model that can serve explorer page `page`, and the device it runs on."""
    names = cache.models_for(BY_KEY[page])
    if not names:
        st.error(_("No model here can serve this step."))
        st.stop()
    return names[0], model.pick_device(read_tab().device)


def as_is(choice: str) -> str:
    """A choice shown as it is: a token the model chose, a digit."""
    return choice


def _reveal(key: str) -> None:
    """The reveal button's callback: run before the script, so the run it starts draws the
    answer in the question's place. The pick is kept as it was (`{key}_pick`): revealed, the
    prediction is final."""
    ss = st.session_state
    ss[f"{key}_shown"], ss[f"{key}_pick"] = True, ss.get(f"{key}_guess")


def predict(key: str, question: str, choices: list[str], answer: str, why: str,
            label: Callable[[str], str] = as_is, more: str = "") -> bool:  # fmt: skip
    """Predict, then reveal: the class picks an answer, then the model's answer is shown.
    `choices` and `answer` are ids (tokens, or a step's N_() constants) and `label` shows
    one (`_` for constants): a guess is kept and compared as its id, in any language.
    `more`: markdown the revealed answer ends with (in a class, below the class's answer).
    Returns whether it is revealed (the step then draws its figure). Alone, the question is
    the radio's own label and the button's tooltip says to pick with the class first (a
    tooltip, not a caption: one element fewer a question, sent again each run); revealed,
    the question and the verdict on the pick are one alert in the radio's and button's
    place, the pick final: fewer elements for the server to send and the browser to draw
    again each run."""
    ss = st.session_state
    asked = _("**:material/quiz: Predict first.** {question}", question=question)
    joined = classroom.here()
    if joined is not None:  # inside a class: the pick is a vote, the teacher reveals
        with joined.claim_slot() or st.container():  # the teacher's first: the step's top
            shown = classroom.ask(joined, key, asked, choices, answer, why, label)
            if shown and more:
                st.caption(more)
        return shown
    if not ss.get(f"{key}_shown"):
        st.radio(asked, choices, index=None, key=f"{key}_guess", horizontal=True,
                 format_func=label)  # fmt: skip
        st.button(_("Reveal the model's answer"), key=f"{key}_reveal", type="primary",
                  icon=":material/visibility:", on_click=_reveal, args=(key,),
                  help=_("Pick an answer with the class, then reveal."))  # fmt: skip
        return False
    # Revealed: one element, the question and its answer, in the radio's and button's place
    pick_ = ss.get(f"{key}_pick")
    said = _("The model's answer: **{answer}**. {why}", answer=md_escape(label(answer)), why=why)
    said += f"\n\n{more}" if more else ""
    if pick_ is None:
        st.info(f"{question}\n\n{said}", icon="💡")
    elif pick_ == answer:
        st.success(f"{question}\n\n" + _("Right! {said}", said=said), icon="✅")
    else:
        guess = particle(md_escape(label(pick_)), "이/가")
        st.warning(f"{question}\n\n" + _("Not {guess}. {said}", guess=guess, said=said),
                   icon="🤔")  # fmt: skip
    return True


def try_your_own(key: str, label: str, default: str, where=None, max_chars: int = 300) -> str:
    """The step's own text box ("try your own"), kept for the session, stripped and cut to
    `max_chars` (the browser's limit, checked again here). A blank box says what to type
    under it and gives "". `label` is shown as it is (translated by the step); `where`: a
    column or container to put it in (default: here)."""
    where = where or st
    text = where.text_input(label, default, key=key, max_chars=max_chars).strip()[:max_chars]
    if not text:
        where.info(_("“{label}” is empty: type something in it to try it.", label=label),
                   icon="✍️")  # fmt: skip
    return text


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


def top_tokens(probs: np.ndarray, vocab: list[str], k: int) -> list[tuple[str, float]]:
    """The k most likely tokens of a distribution over `vocab`, with their probabilities."""
    top = np.argsort(-probs)[:k]
    return [(vocab[i], float(probs[i])) for i in top]
