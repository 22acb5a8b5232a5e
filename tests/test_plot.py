"""The charts are drawn with Plotly's cartesian bundle (ui/workarounds/chart.py), which knows
only some trace types: every figure a page draws, and every trace a figure builder can make, must be
one of them (a 3-D or map trace would draw nothing)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.charts import charts
from tests.figures import every_figure
from tests.test_app import EVERY_PAGE, app_test
from ui.show import section_ids, section_key
from ui.workarounds.chart import PLOTLY_FILE, payload, unpack

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "static" / PLOTLY_FILE


def bundle_traces() -> set[str]:
    """The trace types the shipped bundle registers."""
    return set(re.findall(r'moduleType:"trace",name:"(\w+)"', BUNDLE.read_text()))


def test_the_bundle_is_shipped_served_and_registers_what_the_app_draws() -> None:
    """Plotly's cartesian build is in static/, which .streamlit/config.toml serves at
    /app/static/."""
    assert "plotly.js (cartesian - minified)" in BUNDLE.read_text()[:200]
    assert {"heatmap", "scatter", "bar"} <= bundle_traces()
    assert "scatter3d" not in bundle_traces(), "the cartesian build, not the full one"
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableStaticServing"] is True


def test_the_payload_keeps_the_figure_json_as_written() -> None:
    spec = '{"data":[{"type":"heatmap","y":["\\u00e9t\\u00e9","<b>x</b>"]}],"layout":{}}'
    config = {"toImageButtonOptions": {"filename": 'a,"figure":b'}}
    assert unpack(payload(spec, config)) == (spec, config)
    assert json.loads(payload(spec, config))["figure"] == json.loads(spec)


def test_every_trace_a_figure_builder_makes_is_in_the_bundle() -> None:
    """Every builder of viz/ (tests/figures.py finds them), on its inputs: its traces'
    types; and no plotly trace object is made in viz/ or ui/ (their figures are dicts)."""
    used = {trace["type"] for spec in every_figure().values() for trace in spec["data"]}
    assert used and used <= bundle_traces(), used - bundle_traces()
    for folder in ("viz", "ui"):
        for path in (ROOT / folder).glob("**/*.py"):
            assert not re.findall(r"\bgo\.([A-Z]\w*)\(", path.read_text()), path


@pytest.mark.parametrize("key", EVERY_PAGE)
def test_every_drawn_figure_uses_the_bundles_traces(key: str) -> None:
    at = app_test(key).run()
    assert not at.exception, at.exception
    drawn = charts(at)
    for tab in section_ids(key)[1:]:
        at.session_state[section_key(key)] = tab
        assert not at.run().exception, at.exception
        drawn += charts(at)
    types = {trace.get("type", "scatter") for chart in drawn for trace in chart.figure["data"]}
    assert types <= bundle_traces(), types - bundle_traces()
