"""Korean or English: every sentence a person reads goes through `_()`.

The catalogues are gettext's, made the standard way (docs/ARCHITECTURE.md, "Two languages"):
Babel extracts every `_()`, `ngettext()` and `N_()` message from the source into
`locale/glassbox.pot`, the Korean translations live in `locale/ko/LC_MESSAGES/glassbox.po`,
and the compiled `glassbox.mo` beside it is shipped (`python -m i18n.catalogue` updates
and compiles both; `--check` is CI's completeness check).

Rules for a message:
- one whole sentence with named placeholders, filled in after translation:
  `_("{model} reads at most {n} tokens.", model=name, n=512)` (Korean puts the verb last,
  so never glue a sentence from translated pieces);
- a message with placeholders doubles its literal braces (`{{` `}}`), as `str.format`;
- a constant defined at import time is marked with `N_()` and translated where it is
  shown: `_(spec.title)`;
- a word the model chose, wrapped by a sentence, takes its particle from `particle()`.

What stays as it is: model tokens, user text, code, numbers.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path

LANGUAGES = {"en": "English", "ko": "한국어"}  # code -> its name in itself
DEFAULT = "en"
DOMAIN = "glassbox"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
STATE_KEY = "lang"  # the session-state key (and the URL's query parameter)

_forced: ContextVar[str | None] = ContextVar("glassbox_language", default=None)


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalogue of `lang` (English: the messages themselves). Not named
    `catalogue`: that is the submodule i18n.catalogue, which would replace it once imported."""
    if lang == DEFAULT:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


# How a Streamlit run reads its session's language (None outside a run): registered by the
# app (ui.workarounds.session_language), so this package imports no Streamlit.
_session_reader: list[Callable[[], str | None]] = []


def read_session_language_with(reader: Callable[[], str | None]) -> None:
    """Register how the session's language is read in a Streamlit run (once per process)."""
    _session_reader[:] = [reader]


def language() -> str:
    """The language of what is being drawn: the one `using()` set, else the Streamlit
    session's choice (its `lang`, read by the registered reader), else outside a Streamlit
    run the environment's `GLASSBOX_LANG` (the lab's checker in a notebook), else English."""
    forced = _forced.get()
    if forced is not None:
        return forced
    lang = _session_reader[0]() if _session_reader else None
    if lang is None:  # no Streamlit run here
        lang = os.environ.get("GLASSBOX_LANG", DEFAULT)
    return lang if lang in LANGUAGES else DEFAULT


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Draw in `lang` inside the block, whatever the session chose (tests, the CLI)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; one of {sorted(LANGUAGES)}")
    token = _forced.set(lang)
    try:
        yield
    finally:
        _forced.reset(token)


def _(message: str, /, **values: object) -> str:
    """`message` in the current language, its named placeholders filled in."""
    text = translations(language()).gettext(message)
    return text.format(**values) if values else text


def ngettext(singular: str, plural: str, n: int, /, **values: object) -> str:
    """The singular or plural of a message for the count `n` (also a placeholder `{n}`)."""
    text = translations(language()).ngettext(singular, plural, n)
    return text.format(n=n, **values)


def N_(message: str, /) -> str:
    """Mark a constant for extraction; translate it where it is shown with `_()`."""
    return message


# Particles: the form after a final consonant (받침), then the form after a vowel.
_PAIRS = {"은/는": ("은", "는"), "이/가": ("이", "가"), "을/를": ("을", "를"),
          "과/와": ("과", "와"), "으로/로": ("으로", "로"), "이라/라": ("이라", "라")}  # fmt: skip
_DIGIT_CODA = {"0": 21, "1": 8, "2": 0, "3": 16, "4": 0, "5": 0, "6": 1, "7": 8, "8": 8, "9": 0}
_LATIN_CODA = {"l": 8, "m": 16, "n": 4, "g": 21}  # read aloud: ...ㄹ, ...ㅁ, ...ㄴ, ...ng
_RIEUL = 8  # ㄹ: takes 로, not 으로


def _coda(word: str) -> int | None:
    """The final consonant (받침) index of how `word` ends when read aloud (0: none), or
    None when it cannot be told (a symbol, an emoji)."""
    for ch in reversed(word.strip()):
        if "가" <= ch <= "힣":
            return (ord(ch) - 0xAC00) % 28
        if ch in _DIGIT_CODA:
            return _DIGIT_CODA[ch]
        if ch.isascii() and ch.isalpha():
            tail = word.strip().lower()
            if tail.endswith("ng"):
                return 21
            return _LATIN_CODA.get(ch.lower(), 0)
        if ch.isalnum():
            return None
    return None


def particle(word: str, pair: str) -> str:
    """`word` followed by the right form of the particle `pair` ("은/는", "이/가", "을/를",
    "과/와", "으로/로", "이라/라"), chosen from how the word ends; "은(는)" when that cannot
    be told. In English (or for any other pair) the word alone."""
    if language() != "ko" or pair not in _PAIRS:
        return word
    after_consonant, after_vowel = _PAIRS[pair]
    coda = _coda(word)
    if coda is None:
        return f"{word}{after_consonant}({after_vowel})"
    if pair == "으로/로" and coda == _RIEUL:
        return word + after_vowel
    return word + (after_consonant if coda else after_vowel)
