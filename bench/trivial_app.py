"""The floor that Streamlit itself sets: one text box, one selectbox, an echo of both.

Served exactly like the real app by `bench/bench_browser.py` (and by the e2e fixtures'
self-test), so each browser timing of the app can be reported as a ratio to the same
measurement on this page.
"""

import sys
from pathlib import Path

import streamlit as st

ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
from ui import cpu_probe  # noqa: E402  (the benchmark's exact CPU reading, as the app's)

cpu_probe.start()
st.set_page_config(page_title="Trivial baseline")

# One widget that stands in for the sentence box, one for the layer/head pickers.
sentence = st.text_input("Sentence", value="The cat sat on the mat.", key="sentence")
head = st.selectbox("Head", [0, 1, 2, 3], key="head")

# The "chart": plain text that changes with both widgets.
st.markdown(f"**Echo:** `{sentence}` / head {head}", help=None)
st.text(f"echo: {sentence} | head {head}")
