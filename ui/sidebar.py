"""The sidebar every page shares: the app's name, the shared sentence's inputs (drawn by the
page's body, ui.frame), the model menu, the model-folder box (only where models.toml allows
it: a shared server must not let a visitor read any path) and the device, timing and
sharing notes. It returns the places the body fills in later."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

import model
from i18n import LANGUAGES, _
from model import ModelInfo
from model.examples import DEFAULT_SENTENCE, EXAMPLES
from model.kinds import KIND_TABLE
from model.registry import settings
from ui import cache, state
from ui.show import md_escape

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


def sentence_box(tab: state.Tab) -> None:
    """The shared sentence's text box, bound to the URL's `sentence` (ui.state), drawn by
    the page's body (ui.frame): a sentence typed in it reruns only the body. It shows the
    tab's sentence, which ui.frame.open_page put in its key at the run's start: on a page's
    first run Streamlit would seed the box from this page's own (none yet), not from the
    sentence the tab came with."""
    st.text_area(
        _("Sentence"),
        DEFAULT_SENTENCE,
        key=state.SENTENCE,
        on_change=st.session_state.pop,
        args=("upload_error", None),
        bind=state.bound(tab.sentence),
        persist_state="session",
        height=110,
        help=_("Type or paste a sentence, then press Ctrl+Enter (or click outside)."),
    )


def sentence_extras() -> None:
    """The other ways to a new sentence, below its box: the lecture's examples and an
    upload. Drawn by the page's full run, not by its body: a body run then sends the box
    alone, and a pick or an upload (rarer than typing) draws the whole page again."""
    ss = st.session_state
    st.selectbox(
        _("Lecture examples"),
        EXAMPLES,
        index=None,
        key="w_example",
        on_change=state.on_example,
        format_func=short_example,
        placeholder=_("Pick an example sentence…"),
        help=_("The lecture's sentences; the one picked appears whole in the Sentence box."),
    )
    st.file_uploader(
        _("…or upload a text file (.txt, .md, at most 1 MB)"),
        type=["txt", "md"],
        key="w_upload",
        on_change=state.on_upload,
    )
    if ss.get("upload_error"):  # (message, values), translated now (ui.state.on_upload)
        # File names are user text: escaped, so markdown shows them as they are.
        message, values = ss["upload_error"]
        said = _("{error} The previous sentence is kept.", error=_(message, **values))
        st.error(md_escape(said), icon="⚠️")
    elif ss.get("upload_ok"):
        message, values = ss["upload_ok"]
        st.caption(md_escape(_(message, **values)))


def lecture_links() -> None:
    """The lecture and "Teach a class" (presenter mode, a class opened): one click from any
    explorer page, the home page included."""
    def lecture() -> None:  # a stand-in: a link finds its page by the address alone
        """The lecture's overview (ui/lecture/frame.py serves it)."""

    overview = st.Page(lecture, title=_("The lecture"), url_path="lecture")
    left, right = st.columns(2)
    for where, label, icon, query in (
        (left, _("The lecture"), ":material/school:", {}),
        (right, _("Teach a class"), ":material/groups:", {"present": "1", "teach": "1"}),
    ):
        try:
            where.page_link(overview, label=label, icon=icon, query_params=query)
        except StreamlitAPIException:  # a page run alone (AppTest): a plain link
            where.markdown(f"[{label}](lecture{'?' + urlencode(query) if query else ''})")


def model_label(info: ModelInfo) -> str:
    """ "mlm · masked, BERT-style (encoder)": a model in the menu, in the session's language
    (ModelInfo.description is the English one)."""
    if info.hf:
        if "fill_mask" in info.capabilities:
            head = _("{name} · Hugging Face {family}, masked LM ({kind})")
        elif "next_token" in info.capabilities:
            head = _("{name} · Hugging Face {family}, causal LM ({kind})")
        else:
            head = _("{name} · Hugging Face {family}, no prediction head ({kind})")
        return head.format(name=info.name, family=info.hf, kind=info.kind)
    entry = KIND_TABLE.get(info.kind)
    return f"{info.name} · {_(entry.label) if entry else info.kind}"


def language_menu() -> None:
    """English / 한국어, in the sidebar: its label reads in both. Outside the body, so a
    change draws the whole page again in the other language. Bound to the URL's `lang`
    (absent for English, the default); it shows the tab's language (`sentence_box`)."""
    st.session_state[state.LANG] = state.read_tab().lang
    with st.sidebar:
        st.radio(  # the codes are the options (a bound radio keeps an option as it shows
            "Language · 언어",  # it: `lang=ko`), each language's name below its code
            list(LANGUAGES),
            captions=list(LANGUAGES.values()),
            key=state.LANG,
            horizontal=True,
            bind="query-params",
            persist_state="session",
        )


Slot = st.delta_generator.DeltaGenerator  # a place in the sidebar, filled later


def sidebar(tab: state.Tab, models: list[str], sentence: bool) -> tuple[Slot | None, Slot | None]:
    """Draw the shared sidebar, its model menu offering `models` (bound to the URL's
    `model`); returns its places for the timing (None while its expander is folded) and
    (when the page reads the shared sentence) for the sentence box, both filled later by
    the page's body (`body`); the examples and the upload below the box are drawn here."""
    # Asking for a GPU imports PyTorch (~1.3 s): not on a first visit, unless cuda is asked.
    known = cache.torch_ready() or tab.device == "cuda"
    has_cuda = cache.cuda_available() if known else False
    devices = DEVICES if has_cuda else DEVICES[:2]
    if tab.device not in devices:  # cuda asked for (a link, an old session) and not here
        st.session_state[state.DEVICE] = "auto"
    infos = cache.catalogue()

    with st.sidebar:
        if sentence:  # the line above the inputs stays; the body draws the inputs (`frame`)
            st.markdown(
                _(":material/search: **{app}**: type a sentence here and watch a Transformer "
                  "read it.", app=APP_NAME)
            )  # fmt: skip
        else:
            st.markdown(f":material/search: **{APP_NAME}**")
        lecture_links()
        inputs = st.container() if sentence else None  # the box: the body draws it
        if sentence:
            sentence_extras()
        # Bound to the URL's `model` by name (a bound menu keeps an option as it shows it):
        # what each model is, in the menu's tooltip and below it.
        name = st.selectbox(
            _("Model"),
            models,
            key=state.MODEL,
            bind="query-params",
            persist_state="session",
            help=_("The models that can serve this page:") + "\n\n" + "\n".join(
                f"- {model_label(infos[m])}" for m in models if m in infos),
        )
        if name in infos:
            st.caption(md_escape(model_label(infos[name])))
        folder_box()  # only where models.toml allows typing a folder
        language_menu()
        # What a class does not need on screen: folded at the sidebar's bottom. Opening it
        # reruns the page, which then writes its timing there: while it is closed, a new
        # sentence sends no timing (`Opened.show_timing`).
        box = st.expander(_("Device, timing, sharing"), icon=":material/speed:",
                          key="w_more_open", on_change="rerun")  # fmt: skip
        with box:
            st.selectbox(
                _("Device"),
                devices,
                key=state.DEVICE,
                persist_state="session",
                help=_("auto: the GPU when there is one, else the CPU."),
            )
            if not known:
                st.caption(_("cuda: offered once PyTorch has loaded, if there is a GPU."))
            elif not has_cuda:
                st.caption(_("cuda: no GPU found on this machine, so it cannot be chosen."))
            timing = st.container() if box.open else None
            st.caption(_("The address bar holds the page and its choices: copy it to share."))
    return timing, inputs


# --- The model-folder box -------------------------------------------------------------


def _on_folder() -> None:
    ss = st.session_state
    text = (ss.get("w_folder") or "").strip()
    ss.pop("folder_error", None)
    if not text:
        return
    folder = Path(text).expanduser()
    try:
        info = model.register(folder.stem if folder.suffix == ".gguf" else folder.name, folder)
    except (ValueError, OSError) as err:
        ss["folder_error"] = str(err)
        return
    ss[state.MODEL] = info.name


def folder_box() -> None:
    """A text box for a model folder (ours, a transformers folder or a .gguf file), shown
    only when the teacher's models.toml allows it."""
    if not settings().allow_any_folder:
        return
    st.text_input(
        _("Model folder"),
        key="w_folder",
        on_change=_on_folder,
        placeholder="/path/to/a/model/folder",
        help=_("A checkpoint folder of this app, a Hugging Face transformers folder "
               "(safetensors) or a .gguf file; models.toml allows this on this server."),
    )  # fmt: skip
    if st.session_state.get("folder_error"):
        st.error(md_escape(st.session_state["folder_error"]), icon="⚠️")
