"""The element every chart of the app is drawn in: Plotly's cartesian bundle, in the page.

Streamlit's own `st.plotly_chart` loads the full plotly.js bundle (4.7 MB: maps, 3-D, every
trace type) the first time a page shows a chart; on a fresh browser compiling it took
0.7 s, the longest single step before the first chart. The app draws only heatmaps,
scatter and bar charts, so it ships Plotly's cartesian bundle (`static/`, 1.5 MB, MIT;
compiled in about 0.25 s) and draws each figure with it from a small custom element
(`st.components.v2`, in the page's own DOM, no iframe; its JavaScript in chart.js and
load_plotly.js beside this file):

    plot(spec_json, "att_head_map", config)   # one chart
    preload()                                 # first in every run: start loading Plotly

The figure's JSON and the Plotly config travel as one UTF-8 JSON payload (bytes: Streamlit
sends them as they are). A chart drawn again with new data is updated in place
(`Plotly.react`), and follows its column's width (a ResizeObserver: Plotly's own
`responsive` follows only the window, not the sidebar opening or closing). The toolbar
has Plotly's buttons (the camera saves a PNG) and a full-screen button for the projector.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

# Served by Streamlit's static file serving (server.enableStaticServing): static/ at the
# repository root is /app/static/. Relative, so a server under a base path finds it too.
PLOTLY_FILE = "plotly-cartesian.min.js"
PLOTLY_URL = f"app/static/{PLOTLY_FILE}"

_HERE = Path(__file__).resolve().parent
_LOAD_JS = (_HERE / "load_plotly.js").read_text(encoding="utf-8").replace("PLOTLY_URL", PLOTLY_URL)
_CHART_JS = _LOAD_JS + (_HERE / "chart.js").read_text(encoding="utf-8")
_CSS = ".gb-chart:fullscreen { background: #fff; }"

_chart = st.components.v2.component("glassbox_chart", js=_CHART_JS, css=_CSS, isolate_styles=False)


_HEAD, _FIGURE = '{"config":', ',"figure":'


def payload(spec: str, config: dict) -> bytes:
    """What the element gets: {"config": ..., "figure": ...}, the figure's JSON as it is."""
    return (_HEAD + json.dumps(config) + _FIGURE + spec + "}").encode()


def unpack(data: bytes) -> tuple[str, dict]:
    """`payload`'s inverse: the figure's JSON as it was written, and the config."""
    text = data.decode()
    cut = text.index(_FIGURE)
    return text[cut + len(_FIGURE) : -1], json.loads(text[len(_HEAD) : cut])


def plot(spec: str, key: str, config: dict) -> None:
    """Draw one figure, given as its Plotly JSON (`fig.to_json()`), with a Plotly config."""
    _chart(key=key, data=payload(spec, config), height="content")


def preload() -> None:
    """Start loading Plotly at once: a script tag, and an empty chart element so that the
    element's own JavaScript is fetched before the page's widgets' (sent first in a run)."""
    st.html(f"<script>{_LOAD_JS}loadPlotly();</script>", unsafe_allow_javascript=True)
    _chart(key="plotly_preload_chart", data=None, height="content")
