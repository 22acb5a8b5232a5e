"""The frame every explorer page is drawn in: the shared sidebar, the state, the URL, the
page's header and model; then the page itself, in one fragment, its body. One protocol for
every page, its last line:

    def draw(view: View) -> None: ...          # a page of the shared sentence
    def draw(opened: Opened) -> Trace | None:   # a page with its own input (registry: "own")
    frame("attention", draw, intro="...")

The order of a run is the frame's, not each page's (docs/ARCHITECTURE.md):
- the page's first chart leaves first: the body traces, draws the page, and only then writes
  the sidebar's part (the sentence box, the URL, the timing, the model's notes), also
  after an error in the page; a page with its own input returns the trace it drew and the
  frame writes its timing after it;
- a page of the shared sentence returns early instead of calling st.stop(), which would drop
  what the frame writes after it (tests/test_structure.py checks that no such page stops);
- a new sentence typed in the sidebar reruns only the body: the sidebar, the menu and the
  header stay as they are.

User text is only ever shown as text (widget values, st.code, escaped figure labels,
markdown with every markup character escaped), never as HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

import model
from i18n import _
from model import Encoded, Model, Trace
from model.kinds import NO_MODEL, RUNS_ANOTHER
from ui import cache, state
from ui.registry import BY_KEY
from ui.show import md_escape
from ui.sidebar import sentence_box, sidebar
from ui.view import Opened, View, layers_detail
from ui.workarounds import leave_legacy_mode

Reset = dict[str, Callable[[Trace], object] | None]
First = Callable[[Trace | Encoded, tuple[str, str]], None]  # `frame`'s first: (tokens, key)
T = TypeVar("T")


def on_the_gpu_or_the_cpu(run: Callable[[str], T], device: str) -> tuple[T, str]:
    """`run(device)`; when a GPU fails (driver, memory, build), `run("cpu")` instead, with a
    warning in the page. Returns the result and where it ran."""
    try:
        return run(device), device
    except Exception as err:  # noqa: BLE001 - any CUDA failure: driver, memory, build
        if device == "cpu":
            raise
        error = f"{type(err).__name__}: {err}"
        st.warning(_("The GPU failed ({error}). Running on the CPU instead.", error=error),
                   icon="⚠️")  # fmt: skip
        return run("cpu"), "cpu"


def _load_model(name: str, choice: str) -> tuple[Model, str]:
    """The model on the chosen device ("auto", "cpu", "cuda"), the CPU if the GPU fails;
    returns it and where it runs."""

    def load(device: str) -> tuple[Model, str]:
        actual = model.pick_device(device)
        return cache.load_model(name, actual), actual

    return on_the_gpu_or_the_cpu(load, choice)[0]


def open_page(page: str, intro: str = "", load: bool = True) -> Opened:
    """Sidebar, state, URL, page header and the page's model (`frame` calls it).
    `load=False`: the model on the CPU, not loaded yet (`Opened.model` loads it).

    The model is the sidebar's choice when it can serve this page (ui/registry.py), else
    the first one that can. Stops the page, with a message, when no model can serve it.
    """
    leave_legacy_mode()
    tab = state.read_tab()
    # The sentence box's key holds the tab's sentence from the run's start, not only once
    # the body draws the box (last): a click on the menu before then (a shared link's, a
    # moved tab's first run) asks for the next page without the sentence, as the browser
    # sends only the parameters of the widgets it shows, and the next run finds it here.
    st.session_state[state.SENTENCE] = tab.sentence
    spec = BY_KEY[page]
    models = cache.models_for(spec)
    name = tab.model if tab.model in models else (models[0] if models else "")
    if name:  # the menu shows the tab's model, or this page's first (`sentence_box`)
        st.session_state[state.MODEL] = name
    shared = spec.reads == "sentence"
    timing, inputs = sidebar(tab, models, sentence=shared)
    # The title, and what the page shows folded beside it (a popover opens over the page):
    # the page's first figure comes next, high enough to be seen on a 1280x720 projector.
    title, about = st.columns([3, 1], vertical_alignment="center") if intro else (st, None)
    title.title(_(spec.title))
    if about is not None:
        with about.popover(_("About this page"), icon=":material/info:"):
            st.markdown(_(intro))
    if not models:
        st.error(_(NO_MODEL[spec.needs]))
        st.stop()
    if name != tab.model:
        st.caption(_(RUNS_ANOTHER[spec.needs], model=name, chosen=tab.model))
    if not load:
        return Opened(spec, name, "cpu", timing, inputs, loaded=False)
    device = _load_model(name, tab.device)[1]
    return Opened(spec, name, device, timing, inputs)


@st.fragment
def body(draw: Callable[..., None], *args: object) -> None:
    """Draw the page below its header, `draw(*args)`, as one fragment (like every
    fragment here, it takes its inputs as arguments, never module globals).

    What the page draws from its input lives here, and so do the inputs: a sentence typed
    in the sidebar (the body draws its box) or an input inside the page reruns only this
    part, not the rest of the sidebar, the menu and the header (an example picked or a file
    uploaded, below the box, reruns the whole page). The body also writes the sidebar's
    timing and model notes. A fragment may write into the sidebar: Streamlit redraws those
    writes in place on each of its runs, and a widget the fragment wrote reruns the
    fragment.
    """
    draw(*args)


def frame(page: str, draw: Callable, intro: str = "", reset: Reset | None = None,
          first: First | None = None,
          controls: Callable[[], None] | None = None) -> None:  # fmt: skip
    """The last line of every explorer page: `open_page`, then the page in its body.

    A page of the shared sentence (the registry's `reads="sentence"`) gets `draw(view)`
    with the sentence's trace. `reset` names its widget keys that depend on the tokens (a
    token picker, a position window, tokens to mask): when the sentence or the model
    changes they go back to their defaults (None: the widget's own; a function: its value
    for the new trace). `first(tokens, key)` draws the top of the page from the sentence's
    tokens alone (the tokens page's chips), before the model is loaded and the sentence
    traced: a shared link's first chart then does not wait for PyTorch. A page with its
    own input (`reads="own"`) gets `draw(opened)` and returns the trace it drew (None when
    it drew none), whose timing the frame writes. `controls()` draws widgets above the body
    in the page's full run (compare mode's toggle and second sentence, the vision page's
    image source): a new input in the body does not send them again, and a change in them
    reruns the whole page.
    """
    shared = BY_KEY[page].reads == "sentence"
    opened = open_page(page, intro, load=not shared)
    if controls is not None:
        controls()
    if shared:
        body(_shared_page, opened, draw, reset or {}, first)
    else:
        body(_own_page, opened, draw)


def _own_page(opened: Opened, draw: Callable[[Opened], Trace | None]) -> None:
    """The body of a page with its own input: the page, then its timing in the sidebar."""
    trace = draw(opened)
    if trace is not None:
        opened.show_timing(trace.seconds, layers_detail(trace))


def _shared_page(opened: Opened, draw: Callable[[View], None], reset: Reset,
                 first: First | None = None) -> None:  # fmt: skip
    """The body of a page that reads the shared sentence: the trace, the page, and then
    the sidebar's part (the sentence box, the URL, the timing, the model's notes).

    The sidebar's part comes last so that the page's first chart is the first thing a new
    sentence sends: sent first, the sidebar's widgets kept the browser busy until the
    page's other charts had arrived too, and it drew them all in one go before showing any
    (docs/PERFORMANCE.md: the tokens page's first chart 160 -> 109 ms a new sentence)."""
    view = None
    tab = state.read_tab()  # this run's: a sentence typed in the box reruns the body alone
    try:
        key = (tab.sentence, opened.model_name)
        early = cache.text_tokens(*key) if first is not None else None
        if first is not None and early is not None:  # the tokens, read without the model
            first(early, key)
        view = _shared_view(opened, tab, reset)
        if view is not None:
            if first is not None and early is None:  # a model that reads text its own way
                first(view.trace, key)
            draw(view)
    finally:  # also with no sentence or after an error: the box to type one in is there
        _sidebar_part(opened, tab, view)


def _sidebar_part(opened: Opened, tab: state.Tab, view: View | None) -> None:
    """What the body writes into the sidebar: after the page (`_shared_page`); the timing
    and the model's notes only when there is a trace."""
    if opened.inputs is not None:
        with opened.inputs:
            sentence_box(tab)
    if view is None:
        return
    opened.show_timing(view.trace.seconds, layers_detail(view.trace))
    with st.sidebar:  # what a person should know about this model's trace (rotary, ...)
        for note in view.notes:
            st.caption(f":material/info: {md_escape(note)}")


def _first_view(page: str, tab: state.Tab) -> tuple[Trace, tuple[str, ...]] | None:
    """The shipped trace (and notes) when this run can draw from it: the default sentence
    and model on the CPU, asked before PyTorch has loaded (ui.cache.shipped_trace)."""
    if cache.torch_ready() or tab.device == "cuda":
        return None
    if tab.model not in cache.models_for(BY_KEY[page]):
        return None
    return cache.shipped_trace(tab.sentence, tab.model)


def _shared_view(opened: Opened, tab: state.Tab, reset: Reset) -> View | None:
    """The shared sentence's trace (the shipped one on a first visit): the body's first
    step, so that a new sentence is read and traced by the body alone. None, with a
    message, when there is no sentence."""
    page, name, sentence = opened.page.key, opened.model_name, tab.sentence
    first = _first_view(page, tab)
    if first is not None:  # drawn at once; the model loads when the page first uses it
        return _view(opened, sentence, first[0], first[1], reset)
    if not opened.loaded:  # the model, on the chosen device, once the shipped trace is past
        opened.device = _load_model(name, tab.device)[1]
        opened.loaded = True
    if not sentence.strip():
        st.info(
            _("There is no sentence yet. Type one in the **Sentence** box in the sidebar (on "
              "the left), pick one of the lecture's examples, or upload a text file."),
            icon="✍️",
        )  # fmt: skip
        return None
    trace, opened.device = on_the_gpu_or_the_cpu(
        lambda d: cache.get_trace(sentence, name, d), opened.device
    )
    return _view(opened, sentence, trace, opened.model.notes, reset)


def _view(opened: Opened, sentence: str, trace: Trace, notes: tuple[str, ...],
          reset: Reset) -> View:  # fmt: skip
    """The rest of `_shared_view` once the trace is known: the reset rule and the
    truncation warning."""
    name = opened.model_name
    state.reset_on_new_input(opened.page.key, (sentence, name), reset, trace)
    if trace.truncated:
        kept = len(trace.tokens)
        st.warning(
            _("The text is {n:,} tokens long, but {model} reads at most {max_len}: only the "
              "first {kept} tokens ({share:.0%}) are used.", n=trace.n_input_tokens,
              model=name, max_len=opened.model.max_len, kept=kept,
              share=kept / trace.n_input_tokens),
            icon="✂️",
        )  # fmt: skip
    return View(opened.page, sentence, name, opened.device, trace, notes)
