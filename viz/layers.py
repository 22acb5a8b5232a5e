"""Attention at real-model size: the layer x head grid one page of layers and heads at a
time, its panels named by their real layer and head numbers."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy.typing as npt

from viz._common import Figure
from viz.attention import attention_grid

_PANEL = re.compile(r"^L(\d+) H(\d+)")


def attention_grid_page(
    weights: npt.ArrayLike,
    tokens: Sequence[str],
    first_layer: int = 0,
    first_head: int = 0,
    title: str | None = None,
) -> Figure:
    """`viz.attention_grid` of a slice [l, h, T, S] of the attention stack that starts at
    layer `first_layer` and head `first_head` (0-based): panels and hover say "L7 H1"
    (the title: attention_grid's)."""
    fig = attention_grid(weights, tokens, title=title)

    def renamed(text: str) -> str:
        return _PANEL.sub(
            lambda m: f"L{int(m[1]) + first_layer} H{int(m[2]) + first_head}", text
        )

    for note in fig["layout"].get("annotations", []):
        note["text"] = renamed(note.get("text") or "")
    for trace in fig["data"]:
        trace["hovertemplate"] = renamed(trace.get("hovertemplate") or "")
    return fig
