"""What a tab shows, read from one place: its URL.

The sentence, the translation pages' English sentence, the model and the language are the
query parameters `sentence`, `english`, `model` and `lang`. Each is the value of one widget
(the sentence box, the English box, the model menu, the language menu) bound to its
parameter (`bind="query-params"`) and kept across pages (`persist_state="session"`): a
change in the widget is a change in the URL, and a URL opened afresh (a reload, a shared
link, a tab moved to another replica) seeds the widget. `read_tab()` reads them once per
run into a frozen `Tab`, which the frame passes down; no session key copies a widget.

A page without the sentence box (a page with its own input) leaves `sentence` out of its
URL, as it does not show it; the session keeps it for the next page that does. Longer
sentences (an upload) leave the URL: the box is not bound then.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from i18n import DEFAULT, LANGUAGES, N_, STATE_KEY, _
from model import Trace
from model.examples import DEFAULT_SENTENCE, TRANSLATION_EXAMPLES
from ui import cache
from ui.workarounds import asked_query

MAX_UPLOAD_BYTES = 1024 * 1024  # 1 MB
MAX_URL_CHARS = 1500  # longer sentences are not put in the URL
SENTENCE = "sentence"  # the sentence box's key and its query parameter
ENGLISH = "english"  # the translation pages' English box's key and its query parameter
MODEL = "model"  # the model menu's key and its query parameter
DEVICE = "device"  # the device menu's key (not in the URL: it is this server's)
LANG = STATE_KEY  # the language menu's key and its query parameter ("lang")
COMPARE_ON = "compare_on"  # compare mode's toggle's key and its query parameter
COMPARE = "compare"  # compare mode's second sentence: its box's key, its query parameter


@dataclass(frozen=True)
class Tab:
    """What a tab shows, as its URL says: read once per run by `read_tab`."""

    sentence: str
    english: str
    model: str  # the model chosen in the menu (a page that it cannot serve runs another)
    device: str  # "auto", "cpu" or "cuda"
    lang: str
    compare: str  # compare mode's second sentence ("" when compare mode is off)


def _value(key: str, default: str) -> str:
    """A bound widget's value: the widget's own (a run after the one that drew it, or a
    change just made), else the URL's (a tab's first run on a page), else `default`."""
    if key in st.session_state:
        value = st.session_state[key]
        return default if value is None else value
    value = st.query_params.get(key, asked_query().get(key))
    return default if value is None else value


def _on(key: str) -> bool:
    """A bound toggle's value: the widget's own, else the URL's ("true")."""
    if key in st.session_state:
        return bool(st.session_state[key])
    return st.query_params.get(key, "").lower() == "true"


def read_tab() -> Tab:
    """The tab's sentences, model, device and language, from its widgets and its URL."""
    lang = _value(LANG, DEFAULT)
    models = cache.catalogue()
    name = _value(MODEL, "")
    return Tab(
        sentence=_value(SENTENCE, DEFAULT_SENTENCE),
        english=_value(ENGLISH, next(iter(TRANSLATION_EXAMPLES))),
        model=name if name in models else next(iter(models), ""),
        device=_value(DEVICE, "auto"),
        lang=lang if lang in LANGUAGES else DEFAULT,
        compare=_value(COMPARE, "") if _on(COMPARE_ON) else "",
    )


def bound(text: str) -> str | None:
    """How a sentence box is bound: to the URL while `text` fits there, not at all when it
    is longer (its parameter then leaves the URL)."""
    return "query-params" if len(text) <= MAX_URL_CHARS else None


class UploadError(ValueError):
    """An uploaded file that cannot be used as the sentence; the message says why. It keeps
    its message untranslated (`message`, `values`), so the state holds no language."""

    def __init__(self, message: str, **values: object) -> None:
        super().__init__(message.format(**values))
        self.message, self.values = message, values

    def __str__(self) -> str:
        return _(self.message, **self.values)


def validate_upload(name: str, data: bytes) -> str:
    """The text of an uploaded .txt/.md file, or an UploadError saying what is wrong."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(
            N_("'{name}' is {size:.1f} MB; the limit is 1 MB. Upload a shorter text file."),
            name=name, size=len(data) / 1024 / 1024,
        )  # fmt: skip
    if not data.strip():
        raise UploadError(N_("'{name}' is empty: there is no sentence in it."), name=name)
    if b"\x00" in data:
        raise UploadError(
            N_("'{name}' looks like a binary file, not text (it has NUL bytes)."), name=name
        )
    try:
        text = data.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as err:
        raise UploadError(
            N_("'{name}' is not UTF-8 text (byte {byte} cannot be read). Save it as UTF-8 "
               "and upload it again."), name=name, byte=err.start,
        ) from None  # fmt: skip
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f\v")
    if controls > max(8, len(text) // 100):
        raise UploadError(N_("'{name}' looks like a binary file, not text."), name=name)
    text = text.strip()
    if not text:
        raise UploadError(N_("'{name}' is empty: there is no sentence in it."), name=name)
    return text


def reset_on_new_input(page: str, source: tuple, keys: dict, trace: Trace) -> None:
    """The one reset mechanism: when this page sees a new (sentence, model), each of `keys`
    goes back to its default: None (the widget's own default), or a function of the new
    trace (a token to start on, tokens to mask).

    A key with a function default is also given it when the state has forgotten it:
    Streamlit drops a widget's value after a run that does not draw it (another page), so
    on coming back to the page, or after a reconnect whose page change was lost, the tokens
    to mask were none. And its value is written back on every run, so the widget is always
    sent with the server's value: a browser that missed the run that set it (its messages
    lost to a dying replica or nginx restart) shows and sends what the page uses, not the
    widget's empty default."""
    state = st.session_state
    seen = state.setdefault("_seen", {})
    new = seen.get(page) != source
    seen[page] = source
    for key, default in keys.items():
        if default is None:
            if new:
                state.pop(key, None)
        else:  # a start from the trace when new or forgotten, else the value, written back
            state[key] = default(trace) if new or key not in state else state[key]


# --- The sidebar's callbacks: a new sentence from outside its box ------------------------


def set_sentence(text: str) -> None:
    """The sentence box's value (a callback's, before the box is drawn)."""
    st.session_state[SENTENCE] = text
    st.session_state.pop("upload_error", None)


def on_example() -> None:
    choice = st.session_state.get("w_example")
    if choice:
        set_sentence(choice)
    st.session_state["w_example"] = None  # the menu is an action, not a state


def on_upload() -> None:
    ss = st.session_state
    file = ss.get("w_upload")
    ss.pop("upload_error", None)
    ss.pop("upload_ok", None)
    if file is None:
        return
    try:
        text = validate_upload(file.name, file.getvalue())
    except UploadError as err:  # kept untranslated: drawn in the language of the moment
        ss["upload_error"] = (err.message, err.values)
        return
    set_sentence(text)
    ss["upload_ok"] = (N_("Loaded '{name}': {n:,} characters."),
                       {"name": file.name, "n": len(text)})  # fmt: skip
