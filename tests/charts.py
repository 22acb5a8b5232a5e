"""The charts an AppTest run drew, read back from ui.workarounds.chart's elements (not a
test module)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ui.workarounds.chart import unpack


@dataclass(frozen=True)
class Chart:
    """One drawn chart: its widget key, its figure's JSON as sent, and its Plotly config."""

    key: str
    spec: str
    config: dict

    @property
    def figure(self) -> dict:
        return json.loads(self.spec)


def charts(at) -> list[Chart]:
    """Every chart element with a figure, in page order (ui.workarounds.chart.payload, read
    back with ui.workarounds.chart.unpack). The preload element carries no figure."""
    found = []
    for el in at.get("bidi_component"):
        if el.proto.component_name != "glassbox_chart" or not el.proto.bytes:
            continue
        spec, config = unpack(el.proto.bytes)
        found.append(Chart(el.proto.id.rsplit("-", 1)[-1], spec, config))
    return found


def specs(at) -> str:
    """All drawn figures' JSON, joined: for checks that a text is (or is not) drawn."""
    return " ".join(c.spec for c in charts(at))


def figures(at) -> dict[str, dict]:
    """The drawn figures by widget key."""
    return {c.key: c.figure for c in charts(at)}
