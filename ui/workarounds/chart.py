"""The element every chart of the app is drawn in: heatmaps drawn by the element itself,
everything else by Plotly's cartesian bundle, in the page.

Streamlit's own `st.plotly_chart` loads the full plotly.js bundle (4.7 MB: maps, 3-D, every
trace type) the first time a page shows a chart; on a fresh browser compiling it took
0.7 s, the longest single step before the first chart. The app draws only heatmaps,
scatter and bar charts, so it ships Plotly's cartesian bundle (`static/`, 1.5 MB, MIT;
compiled in about 0.25 s) and draws each figure from a small custom element
(`st.components.v2`, in the page's own DOM, no iframe; its JavaScript in chart.js and
load_plotly.js beside this file):

    plot(spec_json, "att_head_map", config)   # one chart
    preload()                                 # first in every run: start loading the scripts

The figure's JSON and the Plotly config travel as one UTF-8 JSON payload (bytes: Streamlit
sends them as they are). A figure made of heatmaps (attention, embeddings, similarity, the
causal mask, every layer x head, the vision page's images with their patch grid and the
attention laid over them), of one trace of bars, or the token chips is drawn as one
SVG by `static/svg_chart.js`: Plotly took about 45 ms of the browser's time a chart, drawn
one after another; this takes a few. The same tick labels, colour bar, title, hover text and
PNG download; other figures, and any with settings it does not read, go to Plotly. A chart
drawn again with new data is updated in place, and follows its column's width (a
ResizeObserver: Plotly's own `responsive` follows only the window, not the sidebar opening
or closing). The toolbar has a camera (a PNG at twice the size) and a full-screen button
for the projector.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import streamlit as st

# Served by Streamlit's static file serving (server.enableStaticServing): static/ at the
# repository root is /app/static/. Relative, so a server under a base path finds it too.
PLOTLY_FILE = "plotly-cartesian.min.js"
PLOTLY_URL = f"app/static/{PLOTLY_FILE}"
_STATIC = Path(__file__).resolve().parents[2] / "static"
# svg_chart.js is loaded once a page (inline, it would travel with every chart's message); the
# address names its content, so a browser's cached copy of an older one is never used.
_SVG_CHART = (_STATIC / "svg_chart.js").read_bytes()
SVG_CHART_URL = f"app/static/svg_chart.js?v={hashlib.sha256(_SVG_CHART).hexdigest()[:12]}"

_HERE = Path(__file__).resolve().parent
_LOAD_JS = (
    (_HERE / "load_plotly.js").read_text(encoding="utf-8")
    .replace("PLOTLY_URL", PLOTLY_URL).replace("SVG_CHART_URL", SVG_CHART_URL)
)  # fmt: skip
_CHART_JS = _LOAD_JS + (_HERE / "chart.js").read_text(encoding="utf-8")
_CSS = ".gb-chart { position: relative; } .gb-chart:fullscreen { background: #fff; }"

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
    """Draw one figure, given as its Plotly JSON (`viz.to_json(fig)`), with a Plotly config."""
    _chart(key=key, data=payload(spec, config), height="content")


def preload() -> None:
    """Start loading the chart scripts at once: script tags, and an empty chart element so that the
    element's own JavaScript is fetched before the page's widgets' (sent first in a run)."""
    start = f"<script>{_LOAD_JS}loadSvgChart();loadPlotly();</script>"
    st.html(start, unsafe_allow_javascript=True)
    _chart(key="plotly_preload_chart", data=None, height="content")
