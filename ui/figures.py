"""Figures kept for reuse: going back to a layer, head, token or sentence shown before gets
the same figure at once instead of building it again (building a Plotly figure, not running
the model, is most of what a rerun costs).

    fig = figure("att_map", (view.key, layer, head), viz.attention_heatmap, weights, tokens,
                 title="...", window=(0, 31))
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from ui.show import zoom

MAX_CELLS = 128 * 256  # figures of larger matrices are built afresh, not held in memory


@st.cache_resource(max_entries=400, show_spinner=False)
def _kept(kind: str, key: Hashable, _make: Callable[[], go.Figure]) -> go.Figure:
    return _make()


def figure(
    kind: str,
    key: Hashable,
    build: Callable[..., go.Figure],
    *args: object,
    window: tuple[int, int] | None = None,
    rows: bool = True,
    cols: bool = True,
    cells: int | None = None,
    **kwargs: object,
) -> go.Figure:
    """`build(*args, **kwargs)`, zoomed to `window` (see ui.show.zoom), kept per (kind, key,
    window). `key` must name everything the figure depends on: the sentence, model and
    device (View.key) and every picker value that changes it. `cells` is the size of what it
    draws (default: the size of the array arguments); big figures are not kept. The figure
    is shared by all sessions: never modify it after this."""

    def make() -> go.Figure:
        return zoom(build(*args, **kwargs), window, rows=rows, cols=cols)

    if cells is None:
        cells = sum(np.size(a) for a in args if isinstance(a, np.ndarray))
    if cells > MAX_CELLS:
        return make()
    return _kept(kind, (key, window, rows, cols), make)
