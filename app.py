"""Transformer Glassbox: `streamlit run app.py`.

The entry point only configures the page and navigates: the explorer pages come from
ui/registry.py (a file each in pages/), Lecture mode's from its syllabus (ui/lecture/).
Every page draws the shared frame itself, so a page also runs alone (as AppTest runs it).
"""

import streamlit as st

from ui import cpu_probe
from ui.workarounds import dismiss_page_not_found, hand_over_often, in_legacy_mode
from ui.workarounds.preload import preload_plotly

hand_over_often()
cpu_probe.start()  # only where the benchmark asks for it (GLASSBOX_CPU_PROBE)

st.set_page_config(
    page_title="Transformer Glassbox",
    page_icon="🔍",
    layout="wide",
    initial_sidebar_state="auto",  # a phone opens on the page, not the menu
)
preload_plotly()  # first: the browser loads Plotly while the page is computed (and pandas)
# Imported after the hidden chart is sent: on a fresh server's first run these imports
# (the model registry, the caches: ~90 ms alone, more while the server is also sending the
# page's JavaScript) no longer delay the browser's download of Plotly.
from i18n import _  # noqa: E402
from ui.cache import warm_up  # noqa: E402
from ui.lecture import frame as lecture  # noqa: E402
from ui.registry import PAGES  # noqa: E402


def _home() -> None:
    """The app's root URL: the page a shared link names as ?page=..., else the first page,
    with the link's other parameters (its sentence, model, language).

    The root is a hidden page of its own, so every page keeps its own path (/tokens opens
    the first page too; a default page would be served at the root only).
    """
    params = st.query_params.to_dict()
    wanted = params.pop("page", None)
    target = pages[wanted] if wanted in pages else pages[PAGES[0].key]
    st.switch_page(target, query_params=params)


# The menu in the session's language: titles and sections are N_() messages, translated here
# each run; a page's identity is its key (its address), never its title.
pages = {spec.key: st.Page(spec.path, title=_(spec.title), icon=spec.icon, url_path=spec.key)
         for spec in PAGES}  # fmt: skip
steps = lecture.pages()  # the overview and every step, served from the syllabus
pages |= {page.url_path: page for page in steps}
home = st.Page(_home, title=_(PAGES[0].title), url_path="home", default=True,
               visibility="hidden")  # fmt: skip
sections: dict[str, list[st.Page]] = {}
for spec in PAGES:
    sections.setdefault(_(spec.section), []).append(pages[spec.key])
sections[_(PAGES[0].section)].insert(0, home)
sections[_(lecture.SECTION)] = steps + lecture.old_links()  # hidden: /lecture_5 opens its step
legacy = in_legacy_mode()  # a fresh server's first visit: see ui/workarounds
current = st.navigation(sections)
if legacy:
    dismiss_page_not_found()
current.run()
# Once per process, after the first page ran to its end (not after the root's switch to it):
# PyTorch and every shipped model load in the background while the browser draws.
warm_up()
