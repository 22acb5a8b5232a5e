"""What every run sends first, so a fresh browser starts loading Plotly at once.

This module imports only Streamlit (and ui.workarounds.chart, which imports only Streamlit
and the standard library): on a fresh server's first run it is the first thing app.py
imports, and the loader leaves before numpy, the figure builders or the models are imported
(those took 210 ms of that run before it, while the same process was also serving the
page's JavaScript).
"""

from __future__ import annotations

import threading

import streamlit as st

from ui.workarounds.chart import preload

_FIRST_PANDAS = threading.Lock()
_HIDE_PRELOAD = (
    "<style>.st-key-plotly_preload, div:has(> .st-key-plotly_preload) "
    "{ display: none !important; }</style>"
)


def preload_plotly() -> None:
    """Start loading Plotly (ui.workarounds.chart.preload) before anything else a run
    computes: a fresh
    browser then fetches and compiles Plotly's JavaScript while the server is still
    computing the page, not after its first chart arrives. Sent on every run (in a hidden
    container), so the elements after it keep their places.

    Then pandas is imported, under a lock every run takes first: Plotly reads pandas from
    sys.modules without importing it, and a session that drew while another session's
    thread was still importing pandas got a half-initialized module ("AttributeError:
    partially initialized module 'pandas'", seen in the class load test). So no run draws
    before the first import has ended, and the first one imports it after the loader is on
    its way (the browser compiles Plotly meanwhile)."""
    with _FIRST_PANDAS:
        with st.container(key="plotly_preload"):
            st.html(_HIDE_PRELOAD)
            preload()
        import pandas  # noqa: F401
