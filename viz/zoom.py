"""Zoom a token-by-token figure to a window of positions: the axes show only the window and
the data outside it is dropped, so a 256-token sentence sends the browser a 32-token
figure (the data is what a rerun and the browser pay for)."""

from __future__ import annotations

import numpy as np

from viz._common import Figure, tick_font_size, update_axes
from viz.margins import refit


def _positions(values: object) -> np.ndarray | None:
    """The trace's coordinates when they are the integer positions 0..n-1, else None."""
    if values is None:
        return None
    a = np.asarray(values)
    if a.ndim != 1 or a.dtype.kind not in "iu" or not np.array_equal(a, np.arange(len(a))):
        return None
    return a


def _crop(trace: dict, keep_x: slice | None, keep_y: slice | None) -> None:
    """Drop a heatmap's or a bar chart's data outside the window (in place)."""
    x, y = _positions(trace.get("x")), _positions(trace.get("y"))
    kind = trace.get("type")
    if kind == "heatmap" and trace.get("z") is not None:
        z = np.asarray(trace["z"])
        rows = keep_y if (keep_y is not None and y is not None) else slice(None)
        cols = keep_x if (keep_x is not None and x is not None) else slice(None)
        update: dict = {"z": z[rows, cols]}
        if x is not None:
            update["x"] = x[cols].tolist()
        if y is not None:
            update["y"] = y[rows].tolist()
        for name in ("customdata", "text"):
            value = trace.get(name)
            if value is not None and np.ndim(value) >= 2:
                update[name] = np.asarray(value, dtype=object)[rows, cols].tolist()
        trace.update(update)
    elif kind == "bar":
        axis, keep = ("x", keep_x) if trace.get("orientation") != "h" else ("y", keep_y)
        where = x if axis == "x" else y
        if where is None or keep is None:
            return
        update = {axis: where[keep].tolist()}
        other = "y" if axis == "x" else "x"
        for name in (other, "customdata", "text"):
            value = trace.get(name)
            if value is not None and np.ndim(value) >= 1 and len(value) == len(where):
                update[name] = np.asarray(value, dtype=object)[keep].tolist()
        trace.update(update)


def zoom(
    fig: Figure, window: tuple[int, int] | None, rows: bool = True, cols: bool = True
) -> Figure:
    """Show only positions window[0]..window[1] of a token-by-token figure (in place): on
    the x axis when `cols`, on the (top-down) y axis when `rows`; the data outside the
    window is dropped. None: the whole figure."""
    if window is None:
        return fig
    start, end = window
    size = end - start + 1
    keep = slice(start, end + 1)
    for trace in fig.get("data") or []:
        _crop(trace, keep if cols else None, keep if rows else None)
    layout = fig.setdefault("layout", {})
    font = {"size": tick_font_size(size)}
    if cols:
        update_axes(layout, "x", range=[start - 0.5, end + 0.5], tickfont=font)
    if rows:
        update_axes(layout, "y", range=[end + 0.5, start - 0.5], tickfont=font, autorange=False)
        layout["height"] = max(300, min(2000, 22 * size + 140))
    return refit(fig)  # the window's labels are drawn larger: room for them (viz.margins)


def enlarge(fig: Figure, factor: float) -> Figure:
    """The figure's text `factor` times larger, for a projector (in place): its fonts (the
    figure's, its titles', axes' ticks and titles', legend's, colour bars' and notes'), with
    its margins and height grown alike, so labels sized for the margins still fit. Text
    inside heatmap cells keeps its size (it was fitted to its cells)."""
    if factor == 1:
        return fig

    def grow(font: dict | None) -> None:
        if isinstance(font, dict) and isinstance(font.get("size"), int | float):
            font["size"] = round(font["size"] * factor, 1)

    layout = fig["layout"]
    grow(layout.get("font"))
    grow(layout.get("hoverlabel", {}).get("font"))
    title = layout.get("title")
    if isinstance(title, dict):
        grow(title.get("font"))
    grow(layout.get("legend", {}).get("font"))
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            grow(axis.get("tickfont"))
            if isinstance(axis.get("title"), dict):
                grow(axis["title"].get("font"))
    for note in layout.get("annotations", []):
        grow(note.get("font"))
    for trace in fig["data"]:
        bar = trace.get("colorbar")
        if isinstance(bar, dict):
            grow(bar.get("tickfont"))
            if isinstance(bar.get("title"), dict):
                grow(bar["title"].get("font"))
    margin = layout.get("margin")
    if isinstance(margin, dict):
        for side in ("l", "r", "t", "b"):
            if isinstance(margin.get(side), int | float):
                margin[side] = round(margin[side] * factor)
    if isinstance(layout.get("height"), int | float):
        layout["height"] = round(layout["height"] * factor)
    return fig
