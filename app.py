"""Transformer Glassbox: `streamlit run app.py`.

The entry point only configures the page and navigates (the pages and their sections come
from ui/registry.py); every page draws the shared frame itself (ui.frame.frame), so a page
also runs alone (as AppTest runs it).
"""

import streamlit as st

from ui.registry import PAGES
from ui.state import init_state

st.set_page_config(
    page_title="Transformer Glassbox",
    page_icon="🔍",
    layout="wide",
    initial_sidebar_state="expanded",
)

pages = {
    spec.key: st.Page(
        spec.path, title=spec.title, icon=spec.icon, url_path=spec.key, default=i == 0
    )
    for i, spec in enumerate(PAGES)
}
sections: dict[str, list[st.Page]] = {}
for spec in PAGES:
    sections.setdefault(spec.section, []).append(pages[spec.key])
current = st.navigation(sections)

# A shared link may name its page as ?page=...: follow it once, on the session's first run
# (an explicit path such as /attention wins over it).
init_state()
if not st.session_state.get("_routed"):
    st.session_state["_routed"] = True
    wanted = st.query_params.get("page")
    if wanted in pages and current is pages[PAGES[0].key] and wanted != PAGES[0].key:
        st.switch_page(pages[wanted])

current.run()
