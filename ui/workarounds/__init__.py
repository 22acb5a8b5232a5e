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
    from streamlit.runtime import exists
    from streamlit.runtime.pages_manager import PagesManager

    if exists() and getattr(PagesManager, "uses_pages_directory", False):
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
