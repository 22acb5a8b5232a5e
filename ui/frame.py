"""The frame every page draws first: the shared sidebar, the session state, the URL.

    view = frame("attention", intro="...")     # first line of every page
    view.trace, view.bundle, view.model, view.device, view.sentence

State lives in plain `st.session_state` keys ("sentence", "model", "device") that the
sidebar's widgets copy into from their `on_change` callbacks, so it survives a page change
(Streamlit drops widget state between pages) and a page run alone by AppTest still works.
The sentence, the model and the page are mirrored into the URL's query parameters, so a
link opens the same view. User text is only ever shown as text (widget values, st.code,
escaped figure labels, markdown with every markup character escaped), never as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model import Bundle, Trace
from model.examples import DEFAULT_SENTENCE, EXAMPLES
from ui import cache
from ui.show import md_escape


@dataclass(frozen=True)
class PageInfo:
    key: str  # url path and ?page= value
    path: str  # the page's file, relative to app.py
    title: str
    icon: str


PAGES: list[PageInfo] = [
    PageInfo("tokens", "pages/tokens.py", "Tokens and embeddings", ":material/token:"),
    PageInfo("positional", "pages/positional.py", "Positional encoding", ":material/timeline:"),
    PageInfo("attention", "pages/attention.py", "Attention", ":material/hub:"),
    PageInfo("masked", "pages/masked.py", "Masked prediction (BERT)", ":material/masks:"),
    PageInfo("causal", "pages/causal.py", "Causal prediction (GPT)", ":material/trending_flat:"),
]
PAGE_KEYS = [p.key for p in PAGES]
TITLES = {p.key: p.title for p in PAGES}

MAX_UPLOAD_BYTES = 1024 * 1024  # 1 MB
MAX_URL_CHARS = 1500  # longer sentences are not put in the URL
DEVICES = ["auto", "cpu", "cuda"]


class UploadError(ValueError):
    """An uploaded file that cannot be used as the sentence; the message says why."""


def validate_upload(name: str, data: bytes) -> str:
    """The text of an uploaded .txt/.md file, or an UploadError saying what is wrong."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(
            f"'{name}' is {len(data) / 1024 / 1024:.1f} MB; the limit is 1 MB. "
            "Upload a shorter text file."
        )
    if not data.strip():
        raise UploadError(f"'{name}' is empty: there is no sentence in it.")
    if b"\x00" in data:
        raise UploadError(f"'{name}' looks like a binary file, not text (it has NUL bytes).")
    try:
        text = data.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as err:
        raise UploadError(
            f"'{name}' is not UTF-8 text (byte {err.start} cannot be read). "
            "Save it as UTF-8 and upload it again."
        ) from None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f\v")
    if controls > max(8, len(text) // 100):
        raise UploadError(f"'{name}' looks like a binary file, not text.")
    text = text.strip()
    if not text:
        raise UploadError(f"'{name}' is empty: there is no sentence in it.")
    return text


# --- State and URL ---------------------------------------------------------------------


def _first(value: str | list[str] | None) -> str | None:
    return value[-1] if isinstance(value, list) else value


def init_state() -> None:
    """Fill the shared state once per session, from the URL where it says something."""
    state = st.session_state
    if state.get("_initialised"):
        return
    params = st.query_params
    sentence = _first(params.get("sentence"))
    model_name = _first(params.get("model"))
    if sentence is not None:
        state["sentence"] = sentence
    state.setdefault("sentence", DEFAULT_SENTENCE)
    if model_name in cache.MODELS:
        state["model"] = model_name
    state.setdefault("model", "mlm")
    state.setdefault("device", "auto")
    state["_initialised"] = True


def write_url(page: str) -> None:
    """Mirror the sentence, model and page into the query parameters."""
    sentence = st.session_state["sentence"]
    wanted = {"page": page, "model": st.session_state["model"]}
    if 0 < len(sentence) <= MAX_URL_CHARS:
        wanted["sentence"] = sentence
    elif "sentence" in st.query_params:
        del st.query_params["sentence"]
    for key, value in wanted.items():
        if st.query_params.get(key) != value:
            st.query_params[key] = value


def _set_sentence(text: str) -> None:
    st.session_state["sentence"] = text
    st.session_state["w_sentence"] = text


def _on_sentence() -> None:
    st.session_state["sentence"] = st.session_state["w_sentence"]
    st.session_state.pop("upload_error", None)


def _on_example() -> None:
    choice = st.session_state.get("w_example")
    if choice:
        _set_sentence(choice)
        st.session_state.pop("upload_error", None)
    st.session_state["w_example"] = None  # the menu is an action, not a state


def _on_upload() -> None:
    file = st.session_state.get("w_upload")
    st.session_state.pop("upload_error", None)
    st.session_state.pop("upload_ok", None)
    if file is None:
        return
    try:
        text = validate_upload(file.name, file.getvalue())
    except UploadError as err:
        st.session_state["upload_error"] = str(err)
        return
    _set_sentence(text)
    st.session_state["upload_ok"] = f"Loaded '{file.name}': {len(text):,} characters."


def _on_model() -> None:
    st.session_state["model"] = st.session_state["w_model"]


def _on_device() -> None:
    st.session_state["device"] = st.session_state["w_device"]


# --- The sidebar -----------------------------------------------------------------------


def sidebar(forced_model: str | None) -> st.delta_generator.DeltaGenerator:
    """Draw the shared sidebar; returns a container for the timing, filled later."""
    state = st.session_state
    # Copy the shared state into the widgets (their own state is dropped between pages).
    state["w_sentence"] = state["sentence"]
    if state["model"] not in cache.MODELS:
        state["model"] = "mlm"
    state["w_model"] = state["model"]
    has_cuda = cache.cuda_available()
    devices = DEVICES if has_cuda else DEVICES[:2]
    if state["device"] not in devices:
        state["device"] = "auto"
    state["w_device"] = state["device"]

    with st.sidebar:
        st.text_area(
            "Sentence",
            key="w_sentence",
            on_change=_on_sentence,
            height=110,
            help="Type or paste a sentence, then press Ctrl+Enter (or click outside).",
        )
        st.selectbox(
            "Lecture examples",
            EXAMPLES,
            index=None,
            key="w_example",
            on_change=_on_example,
            placeholder="Pick an example sentence…",
        )
        st.file_uploader(
            "…or upload a text file (.txt, .md, at most 1 MB)",
            type=["txt", "md"],
            key="w_upload",
            on_change=_on_upload,
        )
        if state.get("upload_error"):
            # File names are user text: escaped, so markdown shows them as they are.
            message = md_escape(state["upload_error"] + " The previous sentence is kept.")
            st.error(message, icon="⚠️")
        elif state.get("upload_ok"):
            st.caption(md_escape(state["upload_ok"]))
        st.selectbox(
            "Model",
            list(cache.MODELS),
            key="w_model",
            format_func=cache.MODELS.get,
            on_change=_on_model,
            disabled=forced_model is not None,
            help="Drives the tokens, positional encoding and attention pages.",
        )
        if forced_model is not None:
            st.caption(f"This page always uses **{forced_model}**.")
        st.selectbox(
            "Device",
            devices,
            key="w_device",
            on_change=_on_device,
            help="auto: the GPU when there is one, else the CPU.",
        )
        if not has_cuda:
            st.caption("cuda: no GPU found on this machine, so it cannot be chosen.")
        timing = st.container()
        st.caption("The address bar holds the sentence, model and page: copy it to share.")
    return timing


# --- The frame -------------------------------------------------------------------------


@dataclass
class View:
    """What a page needs after the frame: the sentence, the model and its trace."""

    page: str
    sentence: str
    model: str  # the model this page uses
    device: str  # where it actually ran
    bundle: Bundle
    trace: Trace

    @property
    def key(self) -> tuple[str, str, str]:
        """What the trace depends on, for caches of what is drawn from it."""
        return (self.sentence, self.model, self.device)


def _load(name: str, device: str, sentence: str) -> tuple[Bundle, Trace, str, str | None]:
    """Model and trace on `device`; a GPU failure falls back to the CPU with a warning."""
    try:
        return (
            cache.load_bundle(name, device),
            cache.get_trace(sentence, name, device),
            device,
            None,
        )
    except Exception as err:  # noqa: BLE001 - any CUDA failure: driver, memory, build
        if device == "cpu":
            raise
        warning = f"The GPU failed ({type(err).__name__}: {err}). Running on the CPU instead."
        return (
            cache.load_bundle(name, "cpu"),
            cache.get_trace(sentence, name, "cpu"),
            "cpu",
            warning,
        )


def leave_legacy_mode() -> None:
    """Run through app.py's st.navigation even when a fresh server's first visit is a page's
    URL (a shared link such as /attention?sentence=...).

    Streamlit 1.67 starts in its legacy multipage mode whenever a pages/ folder exists and
    stays in it until some run calls st.navigation; a page opened directly in that mode runs
    alone, without app.py (no page config, a file-name menu). Leaving the mode and rerunning
    lets app.py run and resolve the same page from the URL.
    """
    from streamlit.runtime import exists
    from streamlit.runtime.pages_manager import PagesManager

    if exists() and getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


def frame(
    page: str, intro: str = "", model: str | None = None, reset: tuple[str, ...] = ()
) -> View:
    """Sidebar, state, URL, page header, the model and the sentence's trace.

    `model` forces a model for this page (the masked page needs "mlm", the causal page
    "clm"); otherwise the sidebar's choice is used. `reset` names this page's widget keys
    that depend on the tokens (a token picker, a position window): they go back to their
    defaults when the sentence or the model changes. Stops the page, with a message, when
    there is no sentence.
    """
    leave_legacy_mode()
    init_state()
    timing = sidebar(model)
    write_url(page)
    st.title(TITLES.get(page, page))
    if intro:
        st.markdown(intro)

    state = st.session_state
    sentence = state["sentence"]
    if not sentence.strip():
        st.info(
            "There is no sentence yet. Type one in the sidebar, pick one of the lecture's "
            "examples, or upload a text file.",
            icon="✍️",
        )
        st.stop()

    name = model or state["model"]
    seen = state.setdefault("_seen", {})
    if seen.get(page) != (sentence, name):
        seen[page] = (sentence, name)
        for key in reset:
            state.pop(key, None)
    if model is not None and model != state["model"]:
        st.caption(
            f"This page always runs {cache.MODELS[model]}; the sidebar's "
            f"{state['model']} applies to the tokens, positional encoding and attention pages."
        )
    bundle, trace, device, warning = _load(name, cache.resolve_device(state["device"]), sentence)
    if warning:
        st.warning(warning, icon="⚠️")
    if trace.truncated:
        kept = len(trace.tokens)
        st.warning(
            f"The text is {trace.n_input_tokens:,} tokens long, but {name} reads at most "
            f"{bundle.cfg.max_len}: only the first {kept} tokens "
            f"({kept / trace.n_input_tokens:.0%}) are used.",
            icon="✂️",
        )
    with timing:
        st.metric(
            "Forward pass",
            f"{trace.seconds * 1000:.1f} ms",
            help="Wall time of this sentence's forward pass, measured when it first ran.",
        )
        st.caption(
            f"on **{trace.device}** · {name} · {len(trace.tokens)} tokens · "
            f"{trace.n_layers} layers × {trace.n_heads} heads"
        )
    return View(page, sentence, name, device, bundle, trace)
