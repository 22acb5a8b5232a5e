"""Streamlit's widget JavaScript fetched early (ui/workarounds/widget_js.py): the files are
read from Streamlit's own build, and every run sends the warm-up. That every kind of
element the app draws is covered is checked by tests/test_fuzz_pages.py, which opens every
view of every page; that a walk then fetches nothing from the server, by
tests/e2e/test_widget_js_browser.py."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from tests.test_app import ROOT, TIMEOUT
from ui.workarounds import widget_js
from ui.workarounds.widget_js import CHUNKS, NESTED, STATIC, chunk_files, lazy_chunks

JS = STATIC / "static" / "js"


def test_every_chunk_named_is_found_in_streamlits_build() -> None:
    """A Streamlit upgrade that renames a chunk or changes how its build lists lazy imports
    fails here, not silently in a classroom."""
    files = chunk_files()
    names = {re.sub(r"\.[\w-]+\.(js|css)$", "", f.rsplit("/", 1)[-1]) for f in files}
    named = set(CHUNKS.values()) | {child for _parent, child in NESTED}
    assert named - names == set()
    for f in files:
        assert (JS / f).resolve().is_file(), f  # relative to the entry script, in js/


def test_what_the_page_loads_with_its_entry_is_not_fetched_again() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    boot = set(re.findall(r'"\./static/js/([^"]+)"', html))
    assert boot and not boot & {f.removeprefix("./") for f in chunk_files()}


def test_lazy_chunks_reads_vites_table() -> None:
    script = (
        'const __vite__mapDeps=(i,m=__vite__mapDeps,d=(m.f||(m.f=["./A.x1.js","./dep.y2.js",'
        '"../css/A.z3.css"])))=>i.map(i=>d[i]);'
        "a=()=>H(()=>import(`./A.x1.js`),__vite__mapDeps([0,1,2]),import.meta.url),"
        "b=()=>H(()=>import(`./B-Q.w9.js`).then(e=>e.t),__vite__mapDeps([1]),import.meta.url)"
    )
    assert lazy_chunks(script) == {
        "A": ["./A.x1.js", "./dep.y2.js", "../css/A.z3.css"],
        "B-Q": ["./dep.y2.js"],
    }
    assert lazy_chunks("no table here") == {}


def test_every_run_sends_the_warm_up_once_per_tab() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    scripts = [h.proto.body for h in at.get("html") if "__glassboxWarm" in h.proto.body]
    assert len(scripts) == 1
    body = scripts[0]
    assert "if (window.__glassboxWarm) return;" in body  # a later run's copy does nothing
    for f in chunk_files():
        assert f'"{f}"' in body
    assert f"{widget_js.DELAY_MS})" in body
