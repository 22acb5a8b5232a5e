"""Zoom a token-by-token figure to a window of positions (the figure keeps every position)."""

from __future__ import annotations

import plotly.graph_objects as go

from viz._common import tick_font_size


def zoom(
    fig: go.Figure, window: tuple[int, int] | None, rows: bool = True, cols: bool = True
) -> go.Figure:
    """Show only positions window[0]..window[1] of a token-by-token figure (in place): on
    the x axis when `cols`, on the (top-down) y axis when `rows`. None: the whole figure."""
    if window is None:
        return fig
    start, end = window
    size = end - start + 1
    font = {"size": tick_font_size(size)}
    if cols:
        fig.update_xaxes(range=[start - 0.5, end + 0.5], tickfont=font)
    if rows:
        fig.update_yaxes(range=[end + 0.5, start - 0.5], tickfont=font, autorange=False)
        fig.update_layout(height=max(300, min(2000, 22 * size + 140)))
    return fig
