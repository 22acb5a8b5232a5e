"""Every chart of the app goes through here: built once per what it depends on, kept for
reuse, drawn with a toolbar whose camera button saves a PNG. Going back to a layer, head,
token or sentence shown before gets the same figure at once (building a Plotly figure, not
running the model, is most of what a rerun costs).

    chart("att_head_map", (view.key, layer, head), viz.attention_heatmap, weights, tokens,
          title="...", window=(0, 31))
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from viz import zoom

MAX_CELLS = 128 * 256  # figures of larger matrices are built afresh, not held in memory
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


@st.cache_resource(max_entries=400, show_spinner=False)
def _kept(kind: str, key: Hashable, _make: Callable[[], go.Figure]) -> go.Figure:
    return _make()


def figure(
    kind: str,
    where: Hashable,
    build: Callable[..., go.Figure],
    *args: object,
    window: tuple[int, int] | None = None,
    rows: bool = True,
    cols: bool = True,
    cells: int | None = None,
    **kwargs: object,
) -> go.Figure:
    """`build(*args, **kwargs)`, zoomed to `window` (viz.zoom), kept per (kind, where,
    window). `where` must name everything the figure depends on: the sentence, model and
    device (View.key) and every picker value that changes it. `cells` is the size of what it
    draws (default: the size of the array arguments); big figures are not kept. The figure
    is shared by all sessions: never modify it after this."""

    def make() -> go.Figure:
        return zoom(build(*args, **kwargs), window, rows=rows, cols=cols)

    if cells is None:
        cells = sum(np.size(a) for a in args if isinstance(a, np.ndarray))
    if cells > MAX_CELLS:
        return make()
    return _kept(kind, (where, window, rows, cols), make)


def chart(
    widget_key: str,
    where: Hashable,
    build: Callable[..., go.Figure],
    *args: object,
    filename: str | None = None,
    **kwargs: object,
) -> None:
    """Draw `figure(widget_key, where, build, *args, **kwargs)` with its toolbar: 'Download
    plot as png' saves it at 2x scale (as `filename`, default the widget key)."""
    fig = figure(widget_key, where, build, *args, **kwargs)
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename or widget_key, "scale": 2},
        "modeBarButtonsToRemove": ["select2d", "lasso2d"],
    }
    st.plotly_chart(fig, key=widget_key, config=config, theme=None)
