"""Transformer Glassbox: `streamlit run app.py`.

The entry point only configures the page and navigates; every page draws the shared
sidebar itself (ui.frame.frame), so a page also runs alone (as AppTest runs it).
"""

import streamlit as st

from ui.frame import PAGES, init_state

st.set_page_config(
    page_title="Transformer Glassbox",
    page_icon="🔍",
    layout="wide",
    initial_sidebar_state="expanded",
)

pages = {
    info.key: st.Page(
        info.path, title=info.title, icon=info.icon, url_path=info.key, default=i == 0
    )
    for i, info in enumerate(PAGES)
}
current = st.navigation(list(pages.values()))

# A shared link may name its page as ?page=...: follow it once, on the session's first run
# (an explicit path such as /attention wins over it).
init_state()
if not st.session_state.get("_routed"):
    st.session_state["_routed"] = True
    wanted = st.query_params.get("page")
    if wanted in pages and current is pages[PAGES[0].key] and wanted != PAGES[0].key:
        st.switch_page(pages[wanted])

current.run()
