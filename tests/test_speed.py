"""What issue 14 changed for speed, checked by what is built and sent (the times themselves
are measured by bench/bench_browser.py, never asserted)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
GRID_PANEL = '"L1 H1"'  # a panel title of the every-layer-x-head grid


def _specs(at: AppTest) -> str:
    return " ".join(c.proto.spec for c in at.get("plotly_chart"))


def test_the_layer_head_grid_is_built_only_when_opened() -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "attention.py"), default_timeout=120).run()
    assert not at.exception
    closed = len(at.get("plotly_chart"))
    assert GRID_PANEL not in _specs(at)
    grid = [e for e in at.expander if e.label == "Every layer × head at once"]
    assert len(grid) == 1 and not grid[0].children, "closed, and nothing built inside"
    at.session_state["att_grid_open"] = True
    at.run()
    assert not at.exception
    assert GRID_PANEL in _specs(at) and len(at.get("plotly_chart")) == closed + 1


def test_the_app_sends_a_hidden_plotly_chart_before_anything_else() -> None:
    """app.py's first element is the hidden chart that makes a fresh browser load Plotly
    while the page is still computed (ui.preload.preload_plotly)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert at.main.children[0].key == "plotly_preload", "the first element of the page"
    html = " ".join(e.proto.body for e in at.get("html"))
    assert ".st-key-plotly_preload" in html and "display: none" in html
    assert at.get("plotly_chart")[0].proto.config and '"staticPlot": true' in (
        at.get("plotly_chart")[0].proto.config
    )


def test_no_full_garbage_collection_after_every_run() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


def test_follow_one_query_is_computed_only_when_opened(monkeypatch) -> None:
    """Closed: no ranking, no chart, no masked pass; opened: all three."""
    import ui.query

    calls: list[int] = []
    real = ui.query.head_links
    monkeypatch.setattr(ui.query, "head_links", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = AppTest.from_file(str(ROOT / "pages" / "attention.py"), default_timeout=120).run()
    assert not at.exception and not calls and not at.dataframe
    assert '"att_query_row"' not in " ".join(c.proto.id for c in at.get("plotly_chart"))
    at.session_state["att_query_open"] = True
    at.run()
    assert not at.exception and calls and len(at.dataframe) == 1
    assert any("hidden behind [MASK]" in c.value for c in at.caption)
