"""Transformer Glassbox: `streamlit run app.py`.

The entry point only configures the page and navigates (the pages and their sections come
from ui/registry.py); every page draws the shared frame itself (ui.frame.frame), so a page
also runs alone (as AppTest runs it).
"""

import sys

import streamlit as st

from ui.preload import preload_plotly

# The server's event-loop thread sends a chart only once it holds the interpreter lock, and
# CPython hands the lock between threads every 5 ms by default: while a script thread built
# the page's next charts, the first one waited and left with them. Every 1 ms, it leaves as
# soon as it is built (README, Benchmarks: the tokens page's first chart 114 -> 94 ms).
sys.setswitchinterval(0.001)

st.set_page_config(
    page_title="Transformer Glassbox",
    page_icon="🔍",
    layout="wide",
    initial_sidebar_state="expanded",
)
preload_plotly()  # first: the browser loads Plotly while the page is computed (and pandas)
# Imported after the hidden chart is sent: on a fresh server's first run these imports
# (the model registry, the caches: ~90 ms alone, more while the server is also sending the
# page's JavaScript) no longer delay the browser's download of Plotly.
from ui.cache import warm_up  # noqa: E402
from ui.registry import LECTURE, PAGES  # noqa: E402
from ui.state import init_state  # noqa: E402


def _home() -> None:
    """The app's root URL: the page a shared link names as ?page=..., else the first page.

    The root is a hidden page of its own, so every page keeps its own path (/tokens opens
    the first page too; a default page would be served at the root only).
    """
    wanted = st.query_params.get("page")
    st.switch_page(pages[wanted] if wanted in pages else pages[PAGES[0].key])


pages = {
    spec.key: st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.key)
    for spec in [*PAGES, *LECTURE]
}
home = st.Page(_home, title=PAGES[0].title, url_path="home", default=True, visibility="hidden")
sections: dict[str, list[st.Page]] = {}
for spec in [*PAGES, *LECTURE]:
    sections.setdefault(spec.section, []).append(pages[spec.key])
sections[PAGES[0].section].insert(0, home)
current = st.navigation(sections)
init_state()  # before a switch: the URL's sentence and model are read once per session
current.run()
# Once per process, after the first page ran to its end (not after the root's switch to it):
# PyTorch and every shipped model load in the background while the browser draws.
warm_up()
