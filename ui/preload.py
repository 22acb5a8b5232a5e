"""The hidden chart every run sends first, so a fresh browser starts loading Plotly at once.

This module imports only Streamlit and Plotly (which Streamlit has already imported): on a
fresh server's first run it is the first thing app.py imports, and the hidden chart leaves
before numpy, the figure builders or the models are imported (those took 210 ms of that
run before it, while the same process was also serving the page's JavaScript).
"""

from __future__ import annotations

import threading

import plotly.graph_objects as go
import streamlit as st

# An invisible one-point chart that every run sends first (see `preload_plotly`).
_PRELOAD = go.Figure(
    go.Scatter(x=[0], y=[0]),
    layout={"height": 40, "width": 40, "xaxis": {"visible": False}, "yaxis": {"visible": False}},
)
_FIRST_PANDAS = threading.Lock()
_HIDE_PRELOAD = (
    "<style>.st-key-plotly_preload, div:has(> .st-key-plotly_preload) "
    "{ display: none !important; }</style>"
)


def preload_plotly() -> None:
    """A hidden chart, sent before anything else a run computes: a fresh browser then
    fetches and compiles Plotly's JavaScript (4.7 MB, loaded only when a page first shows a
    chart) while the server is still computing the page, not after its first chart arrives.
    Sent on every run, so the elements after it keep their places.

    Then pandas is imported, under a lock every run takes first: Plotly reads pandas from
    sys.modules without importing it, and a session that drew while another session's
    thread was still importing pandas got a half-initialized module ("AttributeError:
    partially initialized module 'pandas'", seen in the class load test). So no run draws
    before the first import has ended, and the first one imports it after its hidden chart
    is on its way (the browser compiles Plotly meanwhile)."""
    with _FIRST_PANDAS:
        with st.container(key="plotly_preload"):
            st.html(_HIDE_PRELOAD)
            st.plotly_chart(_PRELOAD, key="plotly_preload_chart", config={"staticPlot": True})
        import pandas  # noqa: F401
