"""The session's shared state and the URL that mirrors it; the sidebar's input callbacks.

State lives in plain `st.session_state` keys ("shared_sentence", "model", "device") that
the sidebar's widgets copy into from their `on_change` callbacks, so it survives a page
change (Streamlit drops widget state between pages) and a page run alone by AppTest still
works. The sentence, the model, the page and the language (`lang`, only when not English)
are mirrored into the URL's query parameters, so a link opens the same view.

The sentence's parameter (`sentence`) is the sentence box's own: the box is bound to it
(`bind="query-params"`, ui.sidebar), so the browser keeps it in the URL when a page is
picked in the menu. A page change asks for the new page with only the link's parameters
and the bound ones; before, the URL held no sentence until the new page's run wrote it
back, and a tab whose replica died in between came back with the default sentence
(docs/DEPLOY.md). Longer sentences (an upload) leave the URL: the box is not bound then.
"""

from __future__ import annotations

import streamlit as st

from i18n import DEFAULT, LANGUAGES, N_, STATE_KEY, _
from model import Trace
from model.examples import DEFAULT_SENTENCE
from ui import cache

MAX_UPLOAD_BYTES = 1024 * 1024  # 1 MB
MAX_URL_CHARS = 1500  # longer sentences are not put in the URL
SENTENCE = "shared_sentence"  # the shared sentence, in session state
URL_BOX = "_url_box"  # the page whose sentence box is bound to the URL in this session
ENGLISH = "tr_sentence"  # the translation pages' own sentence, in session state
ENGLISH_URL = "english"  # its query parameter, and the key of their box (bound to it)
ENGLISH_BOX = "_url_english_box"  # the page whose English box was bound on its last run


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


def _first(value: str | list[str] | None) -> str | None:
    return value[-1] if isinstance(value, list) else value


def init_state() -> None:
    """Fill the shared state once per session, from the URL where it says something; then,
    on every call (every page, the lecture's too), keep the language in the URL."""
    state = st.session_state
    if not state.get("_initialised"):
        _fill(state)
    write_language()


def _fill(state) -> None:  # noqa: ANN001 - st.session_state
    params = st.query_params
    lang = _first(params.get(STATE_KEY))
    if lang in LANGUAGES:
        state[STATE_KEY] = lang
    if state.get(STATE_KEY) not in LANGUAGES:
        state[STATE_KEY] = DEFAULT
    sentence = _first(params.get("sentence"))
    model_name = _first(params.get("model"))
    if sentence is not None:
        state[SENTENCE] = sentence
    state.setdefault(SENTENCE, DEFAULT_SENTENCE)
    models = cache.catalogue()
    if model_name in models:
        state["model"] = model_name
    state.setdefault("model", next(iter(models), ""))
    state.setdefault("device", "auto")
    state["_initialised"] = True


def write_language() -> None:
    """`lang` in the URL when it is not English; an English address stays as it was."""
    lang = st.session_state.get(STATE_KEY, DEFAULT)
    if lang != DEFAULT:
        if st.query_params.get(STATE_KEY) != lang:
            st.query_params[STATE_KEY] = lang
    elif STATE_KEY in st.query_params:
        del st.query_params[STATE_KEY]


def on_language() -> None:
    """The sidebar's language menu: the whole page is drawn again (it is outside the body)."""
    st.session_state[STATE_KEY] = st.session_state["w_lang"]


def write_url(page: str, model_name: str, sentence: bool = True) -> None:
    """Mirror the page, its model, the language and the shared sentence into the query
    parameters. Also on a page that does not read the sentence: a tab moved to another
    replica there keeps it for the next page that does.

    Once a page has drawn its sentence box, the box keeps the sentence's parameter (it is
    bound to it, and a bound parameter cannot be set here): the sentence is written here
    only on the page's first run, before its box is bound. The translation pages' English
    sentence (`english`) is kept the same way, on every page once the session has one."""
    write_language()
    wanted = {"page": page, "model": model_name}
    text = st.session_state[SENTENCE]
    if not sentence:
        st.session_state[URL_BOX] = None  # no box on this page: nothing is bound
    if st.session_state.get(URL_BOX) != page and 0 < len(text) <= MAX_URL_CHARS:
        wanted["sentence"] = text
    english = st.session_state.get(ENGLISH, "")
    if st.session_state.get(ENGLISH_BOX) != page and 0 < len(english) <= MAX_URL_CHARS:
        wanted[ENGLISH_URL] = english  # the translation pages' sentence: the same way
    st.session_state[ENGLISH_BOX] = None  # the English box, when this page draws one, says
    for key, value in wanted.items():
        if st.query_params.get(key) != value:
            st.query_params[key] = value


def bind_box(page: str, text: str = SENTENCE, box: str = URL_BOX) -> str | None:
    """How the sentence box of `page` is bound: to the URL while the sentence fits there,
    not at all when it is longer (then its parameter leaves the URL). The translation
    pages' English box is bound the same way: `bind_box(page, ENGLISH, ENGLISH_BOX)`."""
    bound = len(st.session_state[text]) <= MAX_URL_CHARS
    st.session_state[box] = page if bound else None
    return "query-params" if bound else None


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


# --- The sidebar's callbacks -------------------------------------------------------------


def set_sentence(text: str) -> None:
    st.session_state[SENTENCE] = text  # the box is set from it when it is drawn


def on_sentence() -> None:
    st.session_state[SENTENCE] = st.session_state["sentence"]
    st.session_state.pop("upload_error", None)


def on_example() -> None:
    choice = st.session_state.get("w_example")
    if choice:
        set_sentence(choice)
        st.session_state.pop("upload_error", None)
    st.session_state["w_example"] = None  # the menu is an action, not a state


def on_upload() -> None:
    file = st.session_state.get("w_upload")
    st.session_state.pop("upload_error", None)
    st.session_state.pop("upload_ok", None)
    if file is None:
        return
    try:
        text = validate_upload(file.name, file.getvalue())
    except UploadError as err:  # kept untranslated: drawn in the language of the moment
        st.session_state["upload_error"] = (err.message, err.values)
        return
    set_sentence(text)
    st.session_state["upload_ok"] = (N_("Loaded '{name}': {n:,} characters."),
                                     {"name": file.name, "n": len(text)})  # fmt: skip


def on_model() -> None:
    st.session_state["model"] = st.session_state["w_model"]


def on_device() -> None:
    st.session_state["device"] = st.session_state["w_device"]
