"""Margins that already hold a chart's tick labels and colour bar, estimated before drawing.

Plotly draws a chart with the margins it is given, then measures its tick labels, axis
titles and colour bar (`automargin`) and, when they need more room, draws the whole chart
a second time. With the shared 10-px margins that was nearly every chart, on every new input: a
second full draw of each, about 20 ms a chart in Chromium (README, Benchmarks). Here the
room is estimated from the labels' lengths, on the generous side, so the first draw is the
only one. `automargin` stays on: where an estimate falls short, Plotly still makes room (at
the cost of that second draw), so nothing is ever clipped.

Charts with a legend beside or above the plot, an axis on the top or right or a colour bar
below the plot are not estimated: they keep the margins they were given (a horizontal
legend below the plot is). In a grid of subplots the bottom row's
x axes and the first column's y axes are the ones measured.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

# Character widths in font sizes, measured in Chromium for Plotly's font (Open Sans):
# "teacher" at 12 px is 46 px wide, "[BOS]" 34, "weight" at 17 px 58, "0.05" at 14 px 31.
NARROW_EM = 0.56  # a lower-case letter, digit, space or sign
UPPER_EM = 0.7  # a capital letter
WIDE_EM = 1.0  # a CJK or Hangul character, or an emoji
NUMBER = "−0.5"  # the tick label assumed on an axis of plain numbers
LABEL_PAD = 5  # between tick labels and the plot
TITLE_LINE = 1.3  # an axis title's height, in font sizes
TITLE_STANDOFF = 15  # between tick labels and an axis title (the shared template's)
BAR_TITLE_SCALE = 1.2  # a colour bar's title is drawn at 1.2 times the font size
BAR_THICKNESS = 30  # Plotly's default colour bar thickness
BAR_EXTRA = 38  # a colour bar's pads, its gap from the plot and the margin beyond it
EXTRA_PX = 12  # added to every estimate: a little more room than measured
# A horizontal legend below the plot, measured in Chromium: its entries (the text and
# about 55 px of symbol and gaps each) stand in one row when they fit the plot's width,
# else in columns as wide as the widest entry. The server does not know the width: rows
# are counted for a plot 380 px wide (the embedding map's, in a 3/5 column at 1280 px);
# narrower, Plotly makes the room. A row is 1.5 font sizes high, plus pads.
LEGEND_WRAP_PX = 380
LEGEND_ENTRY_PX = 55
LEGEND_ROW_EM = 1.5
LEGEND_PAD_PX = 21


def is_wide(char: str) -> bool:
    """Whether a character is drawn about 1 em wide: a Hangul syllable, a CJK character,
    an emoji."""
    return unicodedata.east_asian_width(char) in "WF" or ord(char) >= 0x1F000


def text_px(text: object, size: float) -> float:
    """About how wide `text` (HTML-escaped, as in a figure) is at font `size`, in pixels."""
    width = 0.0
    for char in html.unescape(str(text)):
        if is_wide(char):
            width += WIDE_EM
        else:
            width += UPPER_EM if char.isupper() else NARROW_EM
    return width * size


def _widest(labels: Iterable[object], size: float) -> float:
    return max((text_px(label, size) for label in labels), default=0.0)


def _title(axis: dict) -> dict:
    """An axis's or colour bar's title as a dict (Plotly also takes a plain string)."""
    title = axis.get("title") or {}
    return {"text": title} if isinstance(title, str) else title


def axis_room(axis: dict, font: float, horizontal_labels: bool) -> float:
    """Pixels an axis needs beside its plot: tick labels, then the title.

    `horizontal_labels`: the labels are laid across the room (a y axis's labels), else they
    stand on it (an x axis's labels, rotated by `tickangle` when it is set).
    """
    if axis.get("visible") is False:
        return 0.0
    size = float((axis.get("tickfont") or {}).get("size") or font)
    labels: Sequence[object] = [NUMBER]
    if axis.get("tickmode") == "array" and axis.get("ticktext") is not None:
        labels = axis["ticktext"]
    room = 0.0
    if axis.get("showticklabels") is not False and len(labels):
        if horizontal_labels:
            room = _widest(labels, size)
        else:
            angle = math.radians(abs(float(axis.get("tickangle") or 0)))
            room = _widest(labels, size) * math.sin(angle) + size * 1.3 * math.cos(angle)
        room += LABEL_PAD
    title = _title(axis)
    if title.get("text"):
        size = (title.get("font") or {}).get("size") or font
        room += title.get("standoff", TITLE_STANDOFF) + TITLE_LINE * size
    return room


def overhang_room(axis: dict, font: float, side: str) -> float:
    """Pixels an x axis's tick labels may reach past the plot's `side` ("l" or "r"): half
    the widest upright label, centred on an end tick; or, for labels slanted up to the right
    (each ends at its tick), the first one's width, on the left only."""
    angle = float(axis.get("tickangle") or 0)
    shown = axis.get("visible") is not False and axis.get("showticklabels") is not False
    labels: Sequence[object] = [NUMBER]
    if axis.get("tickmode") == "array":
        labels = axis.get("ticktext") or []
    if not shown or not len(labels) or angle > 0:
        return 0.0
    size = float((axis.get("tickfont") or {}).get("size") or font)
    if angle == 0:
        return _widest(labels, size) / 2 + LABEL_PAD
    if side == "r":
        return 0.0
    return text_px(labels[0], size) * abs(math.cos(math.radians(angle))) + LABEL_PAD


def colorbar_room(bar: dict, font: float) -> float:
    """Pixels a vertical colour bar at the plot's right needs: the bar and its tick labels,
    or its title above them when that is wider."""
    size = float((bar.get("tickfont") or {}).get("size") or font)
    thickness = float(bar.get("thickness") or BAR_THICKNESS)
    ticks = 0.0 if bar.get("showticklabels") is False else text_px(NUMBER, size)
    title = _title(bar)
    size = (title.get("font") or {}).get("size") or BAR_TITLE_SCALE * font
    wide = text_px(title["text"], size) if title.get("text") else 0.0
    return BAR_EXTRA + max(thickness + ticks, wide)


SCALES = ("heatmap", "contour", "histogram2d")  # traces with a colour bar, not in legends


def _type(trace: dict) -> str:
    """A trace's type (Plotly's default: scatter)."""
    return trace.get("type") or "scatter"


def _colorbars(layout: dict, traces: Sequence[dict]) -> list[dict]:
    """The colour bars the chart shows: a trace's own, or the colour axes' ones."""
    bars = []
    for trace in traces:
        if _type(trace) not in SCALES:
            continue
        if trace.get("showscale") is False or trace.get("coloraxis"):
            continue
        bars.append(trace.get("colorbar") or {})
    for key, value in layout.items():
        shown = isinstance(value, dict) and value.get("showscale") is not False
        if key.startswith("coloraxis") and shown:
            bars.append(value.get("colorbar") or {})
    return bars


def _at_right(bar: dict) -> bool:
    """Whether a colour bar stands right of the plot (Plotly's default, x=1.02), where it
    needs margin; one placed in the plot area (x < 1, e.g. between two panels) needs none."""
    x = bar.get("x")
    return x is None or float(x) >= 1.0


def legend_room(layout: dict, traces: Sequence[dict], font: float) -> float | None:
    """Pixels of bottom margin a horizontal legend below the plot needs, or None for a
    legend placed anywhere else (not estimated).

    Plotly hangs it from y (a fraction of the plot's height, below 0), so the margin must
    hold that part of the plot's height too: b = (G + |y| (H - t)) / (1 + |y|) for a legend
    G pixels high in a chart H pixels high with top margin t (checked against the margins
    Chromium drew for 2, 3 and 6 entries, charts 400 and 700 px wide, 400-700 px high)."""
    legend = layout.get("legend") or {}
    y = legend.get("y")
    below = legend.get("orientation") == "h" and y is not None and float(y) < 0
    anchored = legend.get("yanchor", "auto") in ("auto", "top") and legend.get("yref") in (
        None,
        "paper",
    )
    height = layout.get("height")
    if not (below and anchored and height):
        return None
    size = float((legend.get("font") or {}).get("size") or font)
    entries = [
        text_px(trace.get("name") or "", size) + LEGEND_ENTRY_PX
        for trace in traces
        if _in_legend(trace)
    ]
    rows = 1
    if sum(entries) > LEGEND_WRAP_PX:
        columns = max(1, int(LEGEND_WRAP_PX // max(entries)))
        rows = math.ceil(len(entries) / columns)
    legend_px = LEGEND_PAD_PX + rows * LEGEND_ROW_EM * size
    drop = abs(float(y))
    top = float((layout.get("margin") or {}).get("t") or 0)
    return (legend_px + drop * (float(height) - top)) / (1 + drop)


def _in_legend(trace: dict) -> bool:
    """Whether a legend lists the trace (colour-scale traces are not listed by default)."""
    shown = trace.get("showlegend")
    return bool(shown) if shown is not None else _type(trace) not in SCALES


def _has_legend(layout: dict, traces: Sequence[dict]) -> bool:
    if layout.get("showlegend") is False:
        return False
    return layout.get("showlegend") is True or sum(map(_in_legend, traces)) > 1


def refit(fig: dict[str, Any]) -> dict[str, Any]:
    """Estimate again after a figure's axes changed (a zoom's larger tick font), in place;
    margins only grow. `fig` is a figure as viz builds it (viz._common.Figure)."""
    layout = fig.setdefault("layout", {})
    margin = estimate(layout, fig.get("data") or [])
    if margin is not None:
        layout["margin"] = margin
    return fig


AXIS = re.compile(r"^([xy])axis(\d*)$")


def edge_axes(layout: dict, letter: str) -> list[dict] | None:
    """The `letter` ("x" or "y") axes on the plot's bottom (x) or left (y) edge, whose
    labels take margin room (in a grid of subplots: the bottom row's or the first
    column's); None when an axis sits elsewhere (top, right, free, overlaid)."""
    other = "y" if letter == "x" else "x"
    out = []
    for key, axis in layout.items():
        found = AXIS.match(key)
        if not found or found[1] != letter or not isinstance(axis, dict):
            continue
        anchor = str(axis.get("anchor") or other)
        if axis.get("side") in ("top", "right") or axis.get("overlaying") or anchor == "free":
            return None
        domain = (layout.get(f"{other}axis{anchor[1:]}") or {}).get("domain") or [0, 1]
        if domain[0] <= 0.001:
            out.append(axis)
    return out


def estimate(layout: dict, traces: Sequence[dict]) -> dict | None:
    """Margins {l, r, t, b} at least `layout["margin"]` that hold the edge axes' labels and
    titles, the colour bar and a legend below the plot; None for a chart this does not
    estimate (a legend elsewhere, axes on the top or right, a horizontal colour bar).
    `layout` and `traces` are a figure's, as dicts (Plotly's figure JSON)."""
    bottom, left = edge_axes(layout, "x"), edge_axes(layout, "y")
    if bottom is None or left is None:
        return None
    font = float((layout.get("font") or {}).get("size") or 12)
    legend = legend_room(layout, traces, font) if _has_legend(layout, traces) else 0.0
    if legend is None:
        return None  # a legend beside or above the plot: not estimated
    base = dict(layout.get("margin") or {})
    bars = _colorbars(layout, traces)
    if any(bar.get("orientation") == "h" for bar in bars):
        return None  # a colour bar lying below the plot: not estimated
    need = {
        "l": max(
            max((axis_room(y, font, horizontal_labels=True) for y in left), default=0.0),
            max((overhang_room(x, font, "l") for x in bottom), default=0.0),
        ),
        "b": max(
            legend, max((axis_room(x, font, horizontal_labels=False) for x in bottom), default=0)
        ),
        "r": max(
            max((colorbar_room(bar, font) for bar in bars if _at_right(bar)), default=0.0),
            max((overhang_room(x, font, "r") for x in bottom), default=0.0),
        ),
    }
    out = dict(base)
    for side, pixels in need.items():
        if pixels:
            out[side] = max(int(base.get(side, 0)), math.ceil(pixels + EXTRA_PX))
    return out
