"""What issue 14 changed for speed, checked by what is built and sent (the times themselves
are measured by bench/bench_browser.py, never asserted)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.charts import charts, specs
from ui.workarounds.chart import PLOTLY_URL

ROOT = Path(__file__).resolve().parent.parent
GRID_PANEL = '"L1 H1"'  # a panel title of the every-layer-x-head grid


def _specs(at: AppTest) -> str:
    return specs(at)


def test_the_layer_head_grid_is_built_only_when_opened() -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "attention.py"), default_timeout=120).run()
    assert not at.exception
    closed = len(charts(at))
    assert GRID_PANEL not in _specs(at)
    grid = [e for e in at.expander if e.label == "Every layer × head at once"]
    assert len(grid) == 1 and not grid[0].children, "closed, and nothing built inside"
    at.session_state["att_grid_open"] = True
    at.run()
    assert not at.exception
    assert GRID_PANEL in _specs(at) and len(charts(at)) == closed + 1


def test_the_app_starts_loading_plotly_before_anything_else() -> None:
    """app.py's first element is a hidden container that makes a fresh browser load Plotly
    (and the chart element's JavaScript) while the page is still computed
    (ui.workarounds.preload.preload_plotly): a script that adds Plotly's <script>, then an
    empty chart."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    first = at.main.children[0]
    assert first.key == "plotly_preload", "the first element of the page"
    mine = [e.proto for e in at.get("html") if ".st-key-plotly_preload" in e.proto.body
            or "loadPlotly()" in e.proto.body]  # fmt: skip (not the legacy mode's dismissal)
    style, loader = sorted(mine, key=lambda h: "<script" in h.body)
    assert ".st-key-plotly_preload" in style.body and "display: none" in style.body
    assert PLOTLY_URL in loader.body and "loadPlotly()" in loader.body
    assert loader.unsafe_allow_javascript
    empty = at.get("bidi_component")[0]
    assert empty.proto.component_name == "glassbox_chart" and not empty.proto.bytes
    assert charts(at), "the page's own charts follow"


def test_no_full_garbage_collection_after_every_run() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


def test_follow_one_query_is_computed_only_when_opened(monkeypatch) -> None:
    """Closed: no ranking, no chart, no masked pass; opened: all three."""
    import ui.parts.attention.query as query_part

    calls: list[int] = []
    real = query_part.head_links
    monkeypatch.setattr(query_part, "head_links", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = AppTest.from_file(str(ROOT / "pages" / "attention.py"), default_timeout=120).run()
    assert not at.exception and not calls and not at.dataframe
    assert "att_query_row" not in [c.key for c in charts(at)]
    at.session_state["att_query_open"] = True
    at.run()
    assert not at.exception and calls and len(at.dataframe) == 1
    assert any("hidden behind [MASK]" in c.value for c in at.caption)


def test_the_model_work_log_times_each_computation_once(monkeypatch, tmp_path) -> None:
    """The benchmark's floor (bench/bench_browser.py): with GLASSBOX_MODEL_LOG set, a model
    computation logs its CPU time once, the outer one when one calls another; unset, the
    function is left as it is."""
    from ui import cache

    assert cache.model_work(len) is len  # the log is off in the tests
    log = tmp_path / "work.txt"
    monkeypatch.setattr(cache, "MODEL_LOG", str(log))

    @cache.model_work
    def inner(n: int) -> int:
        return sum(i * i for i in range(n))

    @cache.model_work
    def outer(n: int) -> int:
        return inner(n) + inner(n)

    assert outer(200_000) == 2 * inner(200_000)
    seconds = [float(line) for line in log.read_text().split()]
    assert len(seconds) == 2 and all(s > 0 for s in seconds)  # outer's, then inner's alone
    assert seconds[0] > seconds[1]  # outer did inner's work twice
