"""Streamlit's widget JavaScript, fetched early, so that a replica's death cannot cut it off.

Streamlit's browser code fetches the JavaScript of each kind of element the first time a
page draws one (`static/js/TextInput.<hash>.js` and the chunks it needs). A fetch cut off
by a replica that died mid-lesson fails for good in that tab: the browser keeps the failed
module import, React keeps the failed lazy component, and the student sees "Failed to
fetch dynamically imported module" until they reload (docs/DEPLOY.md).

So every page, once drawn and idle, fetches the chunks of every kind of element the app
draws (`CHUNKS`) into the browser's HTTP cache, trying a failed fetch again. Streamlit
serves them as immutable, so its later imports are answered from that cache, whatever
happens to the server. The files are read from Streamlit's own build (its index.html and
the entry script's table of lazy chunks), so an upgrade brings its own names.

    warm_up()          sent by every run (ui.workarounds.preload): the fetches start once a
                       page has settled, once per browser tab
    chunk_files()      the files fetched, relative to the entry script

tests/test_widget_js.py walks every page of the registry and fails on an element kind
missing from CHUNKS; tests/e2e/test_widget_js_browser.py checks in a real browser that a
walk of the pages fetches no chunk from the server once the warm-up is done.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import streamlit
import streamlit as st

STATIC = Path(streamlit.__file__).resolve().parent / "static"

# The element kinds the app draws (as Streamlit's AppTest names them) -> the lazy chunk of
# Streamlit's frontend that draws each.
CHUNKS: dict[str, str] = {
    "bidi_component": "BidiComponent",  # the chart element (components v2)
    "button": "Button",
    "button_group": "ButtonGroup",  # st.segmented_control
    "checkbox": "Checkbox",
    "code": "StreamlitSyntaxHighlighter",
    "component_instance": "ComponentInstance",  # streamlit-drawable-canvas
    "dataframe": "DataFrame",
    "download_button": "DownloadButton",
    "file_uploader": "FileUploader",
    "html": "Html",
    "image": "ImageList",
    "metric": "Metric",
    "multiselect": "Multiselect",
    "number_input": "NumberInput",
    "page_link": "PageLink",
    "progress": "Progress",
    "radio": "Radio",
    "select_slider": "Slider",
    "selectbox": "Selectbox",
    "slider": "Slider",
    "spinner": "Spinner",
    "text_area": "TextArea",
    "text_input": "TextInput",
    "toggle": "Checkbox",
}
# Element kinds drawn by the chunks loaded with the page (markdown, alerts, headings).
IN_ENTRY = frozenset({"caption", "divider", "empty", "error", "exception", "header", "info",
                      "latex", "markdown", "subheader", "success", "title", "toast",
                      "warning"})  # fmt: skip
# Chunks that a chunk loaded with the page loads itself, on first use: (the chunk, what it
# loads) -> why the app needs it.
NESTED: dict[tuple[str, str], str] = {
    ("StreamlitMarkdown", "rehype-katex"): "st.latex and $...$ in text (KaTeX)",
}

_ENTRY = re.compile(r'<script type="module"[^>]*src="\./static/js/([^"]+)"')
_PRELOADED = re.compile(r'<link rel="modulepreload"[^>]*href="\./static/js/([^"]+)"')
_DEPS_TABLE = re.compile(r"m\.f=\[([^\]]*)\]")
_LAZY = re.compile(
    r"import\(`\./([\w-]+?)\.[\w-]+\.js`\)(?:\.then\([^)]*\))?,__vite__mapDeps\(\[([\d,]*)\]\)"
)


def lazy_chunks(script: str) -> dict[str, list[str]]:
    """A built script's lazy imports: each chunk's name ("TextInput") -> its file and the
    files it needs, relative to the script ("./TextInput.MPWivlu9.js"), from the table
    Vite writes into the script (`__vite__mapDeps`)."""
    table = _DEPS_TABLE.search(script)
    if table is None:
        return {}
    files = re.findall(r'"([^"]+)"', table.group(1))
    return {name: [files[int(i)] for i in deps.split(",") if i]
            for name, deps in _LAZY.findall(script)}  # fmt: skip


@functools.cache
def chunk_files() -> tuple[str, ...]:
    """The files of `CHUNKS` and `NESTED` with everything they import, relative to the
    entry script ("./TextInput.MPWivlu9.js"), less what the page loaded with the entry."""
    js = STATIC / "static" / "js"
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    entry = _ENTRY.search(html)
    if entry is None:
        return ()
    boot = {f"./{name}" for name in [entry.group(1), *_PRELOADED.findall(html)]}
    wanted = {entry.group(1): set(CHUNKS.values())}  # a script's file -> the chunks it loads
    for parent, child in NESTED:
        for path in js.glob(f"{parent}.*.js"):
            wanted.setdefault(path.name, set()).add(child)
    found: dict[str, None] = {}  # ordered: each chunk's own file first
    for script, names in wanted.items():
        for name, files in lazy_chunks((js / script).read_text(encoding="utf-8")).items():
            if name in names:
                found.update((f, None) for f in files if f not in boot)
    return tuple(found)


_WARM_JS = """<script>
(() => {
  // Once per tab: after the page has settled, fetch Streamlit's widget chunks into the
  // HTTP cache (ui/workarounds/widget_js.py), two at a time, trying each failed one again.
  if (window.__glassboxWarm) return;
  const files = FILES;
  const state = window.__glassboxWarm = {total: files.length, fetched: 0, failed: [], done: false};
  const entry = document.querySelector('script[type="module"][src*="/js/index."]');
  if (!entry) { state.done = true; return; }
  const queue = files.map((f) => new URL(f, entry.src).href);
  const fetchOne = async (url) => {
    for (let tries = 0; tries < 6; tries++) {
      try {
        const response = await fetch(url, {credentials: "same-origin"});
        if (response.ok) { await response.arrayBuffer(); state.fetched += 1; return; }
      } catch (error) { /* a replica gone or hung: try again */ }
      await new Promise((r) => setTimeout(r, 1000 * 2 ** tries));  // 1, 2, 4, 8, 16, 32 s
    }
    state.failed.push(url);
  };
  const worker = async () => { while (queue.length) await fetchOne(queue.shift()); };
  const start = () => Promise.all([worker(), worker()]).then(() => { state.done = true; });
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1));
  setTimeout(() => idle(start, {timeout: 3000}), DELAY_MS);
})();
</script>"""
DELAY_MS = 3000  # after a page's first run: its charts and first inputs come first


@functools.cache
def _script() -> str:
    return _WARM_JS.replace("FILES", json.dumps(chunk_files())).replace("DELAY_MS", str(DELAY_MS))


def warm_up() -> None:
    """Send the warm-up (once per tab, it does nothing after its first run)."""
    st.html(_script(), unsafe_allow_javascript=True)
