"""The Streamlit workarounds, all in one place: what the app does because Streamlit (1.67)
does not do it, each with the reason and the test that fails when an upgrade changes it.

    leave_legacy_mode()   a pages/ folder puts Streamlit in its legacy multipage mode: a
                          shared link's first visit would run that page alone
                          (tests/test_structure.py::test_streamlit_still_has_the_legacy_switch)
    in_legacy_mode(), dismiss_page_not_found()
                          in that mode a fresh server's first visit to a page with no file
                          (a lecture step, /lecture-attention) gets Streamlit's "Page not
                          found" dialog before app.py serves the page: it is closed
                          (tests/e2e/test_pages.py, a lecture link as a fresh server's first
                          visit)
    hand_over_often()     the interpreter's switch interval at 1 ms: the server sends a
                          chart as soon as it is built (docs/PERFORMANCE.md)
    in_a_server(), fragment_run(), session_language(), asked_query()
                          what Streamlit tells no public API: whether a server runs (the
                          warm-up starts only there, not under AppTest), whether this run is
                          a fragment's own (a class's follower moves only on its tick), the
                          session's language outside the page's own code (i18n reads it
                          through this, registered here, for every figure and message), and
                          the query string a run was asked with (a page change's, before
                          Streamlit drops the parameters bound on another page)
                          (tests/test_structure.py, "Streamlit's internals")
    chart.py              every chart in an element of our own with Plotly's cartesian
                          bundle, not st.plotly_chart's 4.7 MB one (its JavaScript: chart.js,
                          load_plotly.js; tests/test_plot.py, tests/e2e/test_charts_browser.py)
    preload.py            what every run sends first: Plotly's loader, then pandas imported
                          under a lock (Plotly reads a half-imported pandas)

Elsewhere, as settings: .streamlit/config.toml turns off the file watcher (it crawls torch)
and the full garbage collection after every run.
"""

from __future__ import annotations

import sys

import streamlit as st

import i18n

# The module whose logger warns of a thread without a ScriptRunContext (the warm-up's thread
# silences it for itself).
CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"


def in_a_server() -> bool:
    """Whether a Streamlit server runs in this process (false under AppTest and in a bare
    script)."""
    from streamlit.runtime import exists

    return exists()


def _run_context():  # noqa: ANN202 - Streamlit's ScriptRunContext, or None outside a run
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True)


def asked_query() -> dict[str, str]:
    """The query string this run's request carried, as the browser sent it. On a page change
    Streamlit drops from `st.query_params` the parameters bound to another page's widgets
    (so they do not seed the new page's); a tab's shared inputs (the sentence, the model,
    the language) are bound on every page, so the app reads them here too."""
    from urllib.parse import parse_qsl

    ctx = _run_context()
    return dict(parse_qsl(ctx.query_string)) if ctx is not None else {}


def fragment_run() -> bool:
    """Whether this run is a fragment's own (its run_every tick or a widget inside it), not
    the page's full run."""
    ctx = _run_context()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def session_language() -> str | None:
    """The language the tab chose (its language menu's value, else its URL's `lang`;
    English when it chose none), or None outside a Streamlit run (in any thread: a figure
    built in a cached function, the warm-up)."""
    ctx = _run_context()
    if ctx is None:
        return None
    try:  # one lookup: a SafeSessionState has no .get(), and `in` looks the key up too
        lang = ctx.session_state[i18n.STATE_KEY]
    except KeyError:  # the menu not drawn yet in this session: the URL says
        lang = st.query_params.get(i18n.STATE_KEY)
    return lang if lang in i18n.LANGUAGES else i18n.DEFAULT


i18n.read_session_language_with(session_language)


def hand_over_often() -> None:
    """The server's event-loop thread sends a chart only once it holds the interpreter lock,
    and CPython hands the lock between threads every 5 ms by default: while a script thread
    built the page's next charts, the first one waited and left with them. Every 1 ms, it
    leaves as soon as it is built (the tokens page's first chart 114 -> 94 ms)."""
    sys.setswitchinterval(0.001)


def leave_legacy_mode() -> None:
    """Run through app.py's st.navigation even when a fresh server's first visit is a page's
    URL (a shared link such as /attention?sentence=...).

    Why a patch: Streamlit (checked on 1.67) starts in its legacy multipage mode whenever a
    pages/ folder sits beside the main script, and stays in it until some run calls
    st.navigation; a page opened directly in that mode runs alone, without app.py (no page
    config, a menu of file names). Streamlit offers no setting to turn the mode off, and the
    pages/ folder is part of this project's layout. So the class attribute that selects the
    mode is cleared once and the run restarted: app.py then resolves the same page from the
    URL. tests/test_app.py::test_streamlit_still_has_the_legacy_switch fails loudly when an
    upgrade removes or renames what this relies on.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if in_a_server() and getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


def in_legacy_mode() -> bool:
    """Whether this run started in Streamlit's legacy pages/ mode: true only in a fresh
    server's first runs, until some run calls st.navigation (app.py)."""
    from streamlit.runtime.pages_manager import PagesManager

    return bool(getattr(PagesManager, "uses_pages_directory", False))


# Polls for a moment for Streamlit's "Page not found" dialog and closes it.
_DISMISS_JS = """<script>
(() => {
  let tries = 0;
  const close = () => {
    for (const box of document.querySelectorAll('[role="dialog"]')) {
      const title = box.querySelector("h2");
      if (title && title.textContent.trim() === "Page not found") {
        const button = box.querySelector('button[aria-label="Close"]');
        if (button) { button.click(); return; }
      }
    }
    if (++tries < 100) setTimeout(close, 50);
  };
  close();
})();
</script>"""


def dismiss_page_not_found() -> None:
    """Close the "Page not found" dialog that the legacy pages/ mode showed before app.py's
    navigation found the page (a page with no file in pages/, such as a lecture step, asked
    for as a fresh server's first visit). Call it after st.navigation, only when the run
    started in that mode (`in_legacy_mode`): the page is served, so the dialog is wrong."""
    with st.container(key="legacy_not_found", height=1, border=False):
        st.html(_DISMISS_JS, unsafe_allow_javascript=True)
