"""Every chart of the app goes through here: built once per what it depends on, kept for
reuse as its Plotly JSON, drawn (ui.workarounds.chart) with a toolbar whose camera button
saves a PNG.
Going back to a layer, head, token or sentence shown before sends the same JSON at once
(building a figure's dicts and writing its JSON, not running the model, is most of what a
rerun costs).

    chart("att_head_map", (view.key, layer, head), viz.attention_heatmap, weights, tokens,
          title="...", window=(0, 31))
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
import streamlit as st

from i18n import N_, _, language
from ui.cache import key_text
from ui.workarounds.chart import plot
from viz import Figure, to_json, zoom
from viz.zoom import enlarge

MAX_CELLS = 128 * 256  # figures of larger matrices are built afresh, not held in memory
# The toolbar's words (Plotly's own English, as its locale dictionaries name them), given to
# Plotly in the session's language; the chart element's own button too (chart.js).
TOOLBAR = (N_("Download plot as a PNG"), N_("Zoom"), N_("Pan"), N_("Zoom in"), N_("Zoom out"),
           N_("Autoscale"), N_("Reset axes"), N_("Toggle Spike Lines"),
           N_("Show closest data on hover"), N_("Compare data on hover"))  # fmt: skip
FULL_SCREEN = N_("Full screen")
DRAW_FAILED = N_("This chart could not be drawn ({error}): reload the page.")
PRESENTER_SCALE = 1.25  # a chart's text in presenter mode (?present=1), as its body text grows


def text_scale() -> float:
    """How much larger a chart's text is drawn: presenter mode's scale on a page whose address
    says it presents (the lecture's ?present=1), else 1."""
    return PRESENTER_SCALE if st.query_params.get("present") == "1" else 1.0


@st.cache_resource(max_entries=400, show_spinner=False)
def _kept(key: str, _make: Callable[[], str]) -> str:
    return _make()


def figure_json(
    kind: str,
    where: Hashable,
    build: Callable[..., Figure],
    *args: object,
    window: tuple[int, int] | None = None,
    rows: bool = True,
    cols: bool = True,
    cells: int | None = None,
    **kwargs: object,
) -> str:
    """The JSON of `build(*args, **kwargs)`, zoomed to `window` (viz.zoom), kept per (kind,
    where, window). `where` must name everything the figure depends on: the sentence, model and
    device (View.key) and every picker value that changes it. `cells` is the size of what it
    draws (default: the size of the array arguments); big figures are not kept.

    The figures are kept for every session, so the session's language is part of the key:
    a Korean session is never sent an English figure, nor the reverse."""

    scale = text_scale()

    def make() -> str:
        return to_json(enlarge(zoom(build(*args, **kwargs), window, rows=rows, cols=cols), scale))

    if cells is None:
        cells = sum(np.size(a) for a in args if isinstance(a, np.ndarray))
    if cells > MAX_CELLS:
        return make()
    # by keyword: Streamlit reads a cached function's signature once per positional argument
    return _kept(key=key_text((kind, where, window, rows, cols, language(), scale)), _make=make)


def chart(
    widget_key: str,
    where: Hashable,
    build: Callable[..., Figure],
    *args: object,
    filename: str | None = None,
    **kwargs: object,
) -> None:
    """Draw `figure_json(widget_key, where, build, *args, **kwargs)` with its toolbar:
    'Download plot as png' saves it at 2x scale (as `filename`, default the widget key)."""
    spec = figure_json(widget_key, where, build, *args, **kwargs)
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename or widget_key, "scale": 2},
        "modeBarButtonsToRemove": ["select2d", "lasso2d"],
        "fullScreenTitle": _(FULL_SCREEN),  # these two are read (and removed) by chart.js
        "drawFailed": _(DRAW_FAILED, error="{error}"),
    }
    lang = language()
    if lang != "en":
        words = {word: _(word) for word in TOOLBAR}
        config |= {"locale": lang, "locales": {lang: {"dictionary": words}}}
    plot(spec, widget_key, config)
