"""The frame every page draws first: the shared sidebar, the state, the URL, the model;
then the page itself, in one fragment, its body.

    def draw(view: View) -> None:              # the page below its header
        view.trace, view.model, view.model_name, view.device, view.sentence
    frame("attention", draw, intro="...")      # last line of every page

A new sentence typed in the sidebar reruns only the body (`body`): the sidebar, the menu
and the header stay as they are, so the browser redraws only the page's charts.

User text is only ever shown as text (widget values, st.code, escaped figure labels,
markdown with every markup character escaped), never as HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

import model
from model import Model, Trace
from model.examples import EXAMPLES
from model.kinds import DOES
from ui import cache, state
from ui.folder import folder_box
from ui.registry import BY_KEY, PageSpec
from ui.show import md_escape
from ui.workarounds import leave_legacy_mode

DEVICES = ["auto", "cpu", "cuda"]
APP_NAME = "Transformer Glassbox"
EXAMPLE_CHARS = 34  # a menu entry this long fits the sidebar's menu at 1280x720 (measured)


def short_example(sentence: str, limit: int = EXAMPLE_CHARS) -> str:
    """A menu entry for a sentence: whole when it fits, else as many first words as fit
    before "… <last word>" ("I swam across the river to … bank.")."""
    if len(sentence) <= limit:
        return sentence
    words = sentence.split()
    tail = f" … {words[-1]}"
    head = ""
    for word in words[:-1]:
        if len(head) + len(word) + 1 + len(tail) > limit:
            break
        head = f"{head} {word}" if head else word
    return head + tail if head else sentence[: limit - 1] + "…"


# --- The sidebar -----------------------------------------------------------------------


def _sentence_inputs() -> None:
    """The shared sentence: a text box, the lecture's examples, an upload."""
    ss = st.session_state
    ss["w_sentence"] = ss["sentence"]  # widget state is dropped between pages: copy it back
    st.markdown(
        f":material/search: **{APP_NAME}**: type a sentence here and watch a "
        "Transformer read it."
    )
    st.text_area(
        "Sentence",
        key="w_sentence",
        on_change=state.on_sentence,
        height=110,
        help="Type or paste a sentence, then press Ctrl+Enter (or click outside).",
    )
    st.selectbox(
        "Lecture examples",
        EXAMPLES,
        index=None,
        key="w_example",
        on_change=state.on_example,
        format_func=short_example,
        placeholder="Pick an example sentence…",
        help="The lecture's sentences; the one picked appears whole in the Sentence box.",
    )
    st.file_uploader(
        "…or upload a text file (.txt, .md, at most 1 MB)",
        type=["txt", "md"],
        key="w_upload",
        on_change=state.on_upload,
    )
    if ss.get("upload_error"):
        # File names are user text: escaped, so markdown shows them as they are.
        st.error(md_escape(ss["upload_error"] + " The previous sentence is kept."), icon="⚠️")
    elif ss.get("upload_ok"):
        st.caption(md_escape(ss["upload_ok"]))


Slot = st.delta_generator.DeltaGenerator  # a place in the sidebar, filled later


def sidebar(models: list[str], chosen: str, sentence: bool) -> tuple[Slot, Slot | None]:
    """Draw the shared sidebar, its model menu offering `models`; returns its places for the
    timing and (when the page reads the shared sentence) for the sentence inputs, both
    filled later by the page's body (`body`)."""
    ss = st.session_state
    ss["w_model"] = chosen
    # Asking for a GPU imports PyTorch (~1.3 s): not on a first visit, unless cuda is asked.
    known = cache.torch_ready() or ss["device"] == "cuda"
    has_cuda = cache.cuda_available() if known else False
    devices = DEVICES if has_cuda else DEVICES[:2]
    if ss["device"] not in devices:
        ss["device"] = "auto"
    ss["w_device"] = ss["device"]
    infos = cache.catalogue()

    with st.sidebar:
        inputs = st.container() if sentence else None  # the body draws them (`frame`)
        if not sentence:
            st.markdown(f":material/search: **{APP_NAME}**")
        st.selectbox(
            "Model",
            models,
            key="w_model",
            format_func=lambda name: infos[name].description if name in infos else name,
            on_change=state.on_model,
            help="The models that can serve this page.",
        )
        folder_box()  # only where models.toml allows typing a folder
        # What a class does not need on screen: folded at the sidebar's bottom.
        with st.expander("Device, timing, sharing", icon=":material/speed:"):
            st.selectbox(
                "Device",
                devices,
                key="w_device",
                on_change=state.on_device,
                help="auto: the GPU when there is one, else the CPU.",
            )
            if not known:
                st.caption("cuda: offered once PyTorch has loaded, if there is a GPU.")
            elif not has_cuda:
                st.caption("cuda: no GPU found on this machine, so it cannot be chosen.")
            timing = st.container()
            st.caption("The address bar holds the page and its choices: copy it to share.")
    return timing, inputs


# --- The frame -------------------------------------------------------------------------


@dataclass
class Opened:
    """A page whose frame is drawn and whose model is loaded (see `open_page`)."""

    page: PageSpec
    model_name: str  # the model this page runs
    device: str  # where it runs
    timing: Slot  # the sidebar's place for the timing
    inputs: Slot | None = None  # the sidebar's place for the sentence inputs, if any
    loaded: bool = True  # False: opened with load=False, the device not yet chosen

    @property
    def model(self) -> Model:
        """The model, loaded on first use (shared by every session, ui.cache.load_model)."""
        return cache.load_model(self.model_name, self.device)

    def show_timing(self, seconds: float, detail: str) -> None:
        """The forward pass's wall time and what ran, in the sidebar."""
        with self.timing:
            st.metric(
                "Forward pass",
                f"{seconds * 1000:.1f} ms",
                help="Wall time of this input's forward pass, measured when it first ran.",
            )
            st.caption(f"on **{self.device}** · {self.model_name} · {detail}")


@dataclass
class View:
    """What a page needs after the frame: the sentence, the model and its trace."""

    page: PageSpec
    sentence: str
    model_name: str  # the model this page runs
    device: str  # where it actually ran
    trace: Trace
    notes: tuple[str, ...] = ()  # what a person should know about this trace (rotary, ...)

    @property
    def model(self) -> Model:
        """The model, loaded on first use (shared by every session, ui.cache.load_model)."""
        return cache.load_model(self.model_name, self.device)

    @property
    def key(self) -> tuple[str, str, str]:
        """What the trace depends on, for caches of what is drawn from it."""
        return (self.sentence, self.model_name, self.device)


def _load_model(name: str, choice: str) -> tuple[Model, str, str | None]:
    """The model on the chosen device; a GPU failure falls back to the CPU with a warning."""
    try:
        device = model.pick_device(choice)
        return cache.load_model(name, device), device, None
    except Exception as err:  # noqa: BLE001 - any CUDA failure: driver, memory, build
        if choice == "cpu":
            raise
        return cache.load_model(name, "cpu"), "cpu", _gpu_failed(err)


def _gpu_failed(err: Exception) -> str:
    return f"The GPU failed ({type(err).__name__}: {err}). Running on the CPU instead."


def open_page(page: str, intro: str = "", load: bool = True) -> Opened:
    """Sidebar, state, URL, page header and the page's model, for a page that reads its own
    input (a translation, an image); `frame` builds on it for the shared sentence.
    `load=False`: the model on the CPU, not loaded yet (`Opened.model` loads it).

    The model is the sidebar's choice when it can serve this page (ui/registry.py), else
    the first one that can. Stops the page, with a message, when no model can serve it.
    """
    leave_legacy_mode()
    state.init_state()
    spec = BY_KEY[page]
    ss = st.session_state
    models = cache.models_for(spec)
    name = ss["model"] if ss["model"] in models else (models[0] if models else "")
    shared = spec.reads == "sentence"
    timing, inputs = sidebar(models, name, sentence=shared)
    state.write_url(page, name or ss["model"], sentence=shared)
    # The title, and what the page shows folded beside it (a popover opens over the page):
    # the page's first figure comes next, high enough to be seen on a 1280x720 projector.
    title, about = st.columns([3, 1], vertical_alignment="center") if intro else (st, None)
    title.title(spec.title)
    if about is not None:
        with about.popover("About this page", icon=":material/info:"):
            st.markdown(intro)
    if not models:
        st.error(f"No model here can {DOES[spec.needs]}, so this page cannot run.")
        st.stop()
    if name != ss["model"]:
        st.caption(
            f"This page needs a model that can {DOES[spec.needs]}: it runs {name}. "
            f"The sidebar's {ss['model']} still applies on the pages it can serve."
        )
    if not load:
        return Opened(spec, name, "cpu", timing, inputs, loaded=False)
    _, device, warning = _load_model(name, ss["device"])
    if warning:
        st.warning(warning, icon="⚠️")
    return Opened(spec, name, device, timing, inputs)


def _first_view(page: str) -> tuple[Trace, tuple[str, ...]] | None:
    """The shipped trace (and notes) when this run can draw from it: the default sentence
    and model on the CPU, asked before PyTorch has loaded (ui.cache.shipped_trace)."""
    ss = st.session_state
    if BY_KEY[page].reads != "sentence" or cache.torch_ready() or ss["device"] == "cuda":
        return None
    if ss["model"] not in cache.models_for(BY_KEY[page]):
        return None
    return cache.shipped_trace(ss["sentence"], ss["model"])


@st.fragment
def body(draw: Callable[..., None], *args: object) -> None:
    """Draw the page below its header, `draw(*args)`, as one fragment (like every
    fragment here, it takes its inputs as arguments, never module globals).

    What the page draws from its input lives here, and so do the inputs: a new sentence
    (typed, picked or uploaded in the sidebar: `frame` draws those inputs from the body) or
    an input inside the page reruns only this part, not the rest of the sidebar, the menu
    and the header. The body also writes the sidebar's timing and model notes. A fragment
    may write into the sidebar: Streamlit redraws those writes in place on each of its
    runs, and a widget the fragment wrote reruns the fragment.
    """
    draw(*args)


def frame(
    page: str,
    draw: Callable[[View], None],
    intro: str = "",
    reset: dict[str, Callable[[Trace], object] | None] | None = None,
) -> None:
    """`open_page`, then `draw(view)` with the shared sentence's trace, in the page's body
    (`body`): the last line of every page that reads the sidebar's sentence.

    `reset` names this page's widget keys that depend on the tokens (a token picker, a
    position window, tokens to mask): when the sentence or the model changes they go back
    to their defaults (None: the widget's own; a function: its value for the new trace).
    The body shows a message instead, when there is no sentence. The model is loaded by the
    body (`_shared_view`), only when the shipped trace cannot serve. `draw` returns early
    rather than calling st.stop(): what a run writes after a stop is dropped, and the
    sidebar's part of the body comes after the page (`_shared_page`).
    """
    body(_shared_page, open_page(page, intro, load=False), draw, reset)


def _shared_page(
    opened: Opened,
    draw: Callable[[View], None],
    reset: dict[str, Callable[[Trace], object] | None] | None,
) -> None:
    """The body of a page that reads the shared sentence: the trace, the page, and then
    the sidebar's part (the sentence inputs, the URL, the timing, the model's notes).

    The sidebar's part comes last so that the page's first chart is the first thing a new
    sentence sends: sent first, the sidebar's widgets kept the browser busy until the
    page's other charts had arrived too, and it drew them all in one go before showing any
    (README, Benchmarks: the tokens page's first chart 160 -> 109 ms a new sentence)."""
    view = None
    try:
        view = _shared_view(opened, reset)
        if view is not None:
            draw(view)
    finally:  # also with no sentence or after an error: the box to type one in is there
        _sidebar_part(opened, view)


def _sidebar_part(opened: Opened, view: View | None) -> None:
    """What the body writes into the sidebar, and the URL: after the page (`_shared_page`);
    the timing and the model's notes only when there is a trace."""
    if opened.inputs is not None:
        with opened.inputs:
            _sentence_inputs()
    state.write_url(opened.page.key, opened.model_name, sentence=True)
    if view is None:
        return
    opened.show_timing(view.trace.seconds, layers_detail(view.trace))
    with st.sidebar:  # what a person should know about this model's trace (rotary, ...)
        for note in view.notes:
            st.caption(f":material/info: {md_escape(note)}")


def layers_detail(t: Trace) -> str:
    """What ran, for the sidebar's timing: "12 tokens · 2 layers × 4 heads"."""
    return f"{len(t.tokens)} tokens · {t.n_layers} layers × {t.n_heads} heads"


def _shared_view(
    opened: Opened, reset: dict[str, Callable[[Trace], object] | None] | None
) -> View | None:
    """The shared sentence's trace (the shipped one on a first visit): the body's first
    step, so that a new sentence is read and traced by the body alone. None, with a
    message, when there is no sentence."""
    page, name = opened.page.key, opened.model_name
    sentence = st.session_state["sentence"]
    first = _first_view(page)
    if first is not None:  # drawn at once; the model loads when the page first uses it
        return _view(opened, sentence, first[0], first[1], reset)
    if not opened.loaded:  # the model, on the chosen device, once the shipped trace is past
        _, opened.device, warning = _load_model(name, st.session_state["device"])
        opened.loaded = True
        if warning:
            st.warning(warning, icon="⚠️")
    if not sentence.strip():
        st.info(
            "There is no sentence yet. Type one in the **Sentence** box in the sidebar (on "
            "the left), pick one of the lecture's examples, or upload a text file.",
            icon="✍️",
        )
        return None
    try:
        trace = cache.get_trace(sentence, name, opened.device)
    except Exception as err:  # noqa: BLE001 - a GPU failure during the pass: the CPU instead
        if opened.device == "cpu":
            raise
        st.warning(_gpu_failed(err), icon="⚠️")
        opened.device = "cpu"
        trace = cache.get_trace(sentence, name, "cpu")
    return _view(opened, sentence, trace, opened.model.notes, reset)


def _view(
    opened: Opened,
    sentence: str,
    trace: Trace,
    notes: tuple[str, ...],
    reset: dict[str, Callable[[Trace], object] | None] | None,
) -> View:
    """The rest of `_shared_view` once the trace is known: the reset rule and the
    truncation warning."""
    name = opened.model_name
    state.reset_on_new_input(opened.page.key, (sentence, name), reset or {}, trace)
    if trace.truncated:
        kept = len(trace.tokens)
        st.warning(
            f"The text is {trace.n_input_tokens:,} tokens long, but {name} reads at most "
            f"{opened.model.max_len}: only the first {kept} tokens "
            f"({kept / trace.n_input_tokens:.0%}) are used.",
            icon="✂️",
        )
    return View(opened.page, sentence, name, opened.device, trace, notes)
