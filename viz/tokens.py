"""The sentence as tokens: a row of chips, each with its token id underneath."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import N_, _
from viz._common import MAX_HEIGHT, Figure, apply_layout, check_length, escape_all, hover_label

ROW_UNITS = 70.0  # width of one row of chips, in character widths (~10 px each)
CHIP_GAP = 0.8  # horizontal space between chips
ROW_STEP = 1.4  # vertical distance between rows (a chip is 1.0 high)
ROW_PX = 70  # pixels per row of chips
CHIP_FILL = "#e8f0fe"
CHIP_LINE = "#4a78c2"
HIGHLIGHT_FILL = "#ffe2c2"
HIGHLIGHT_LINE = "#d9731a"
CHIP_HOVER = N_("position %{customdata[0]}: %{customdata[1]}<br>id %{customdata[2]}<extra></extra>")


def _chip_width(token: str, token_id: str) -> float:
    """Width of one chip, in character widths, wide enough for the token and its id."""
    return max(len(token), 0.75 * len(token_id), 1) + 2.0


def _rounded_box(x0: float, y0: float, x1: float, y1: float) -> str:
    """SVG path of a box with rounded corners (Plotly shape paths allow Q curves)."""
    rx, ry = 0.7, 0.16
    return (
        f"M {x0 + rx},{y0} L {x1 - rx},{y0} Q {x1},{y0} {x1},{y0 + ry} "
        f"L {x1},{y1 - ry} Q {x1},{y1} {x1 - rx},{y1} L {x0 + rx},{y1} "
        f"Q {x0},{y1} {x0},{y1 - ry} L {x0},{y0 + ry} Q {x0},{y0} {x0 + rx},{y0} Z"
    )


def chip_layout(tokens: Sequence[str], ids: Sequence[int]) -> list[tuple[float, float, float]]:
    """Place the chips left to right, wrapping into rows: (x start, width, row) per token."""
    placed: list[tuple[float, float, float]] = []
    x, row = 0.0, 0
    for token, token_id in zip(tokens, ids, strict=True):
        width = _chip_width(str(token), str(token_id))
        if x > 0 and x + width > ROW_UNITS:
            x, row = 0.0, row + 1
        placed.append((x, width, row))
        x += width + CHIP_GAP
    return placed


def token_strip(
    tokens: Sequence[str],
    ids: npt.ArrayLike,
    title: str | None = None,
    highlight: Sequence[int] = (),
) -> Figure:
    """The sentence as a row of token chips, each showing the token and its id underneath.

    Long sentences wrap into several rows. Hover shows position, token (with a `TokenLabel`'s
    note: the tokenizer's own string, the character a byte belongs to) and id. Positions in
    `highlight` (e.g. the masked tokens) get an orange chip. The title defaults to "tokens".
    """
    id_list = [int(i) for i in np.asarray(ids).reshape(-1)]
    check_length(tokens, len(id_list), "tokens")
    placed = chip_layout(tokens, id_list)
    marked = set(highlight)

    shapes = []
    centres_x, centres_y = [], []
    for position, (x0, width, row) in enumerate(placed):
        y0 = row * ROW_STEP
        on = position in marked
        shapes.append(
            {
                "type": "path",
                "path": _rounded_box(x0, y0, x0 + width, y0 + 1.0),
                "fillcolor": HIGHLIGHT_FILL if on else CHIP_FILL,
                "line": {"color": HIGHLIGHT_LINE if on else CHIP_LINE, "width": 1.5},
                "layer": "below",
            }
        )
        centres_x.append(x0 + width / 2)
        centres_y.append(y0 + 0.5)

    customdata = [
        [position, hover_label(token), token_id]
        for position, (token, token_id) in enumerate(zip(tokens, id_list, strict=True))
    ]
    traces = [
        {
            "type": "scatter",
            "x": centres_x,
            "y": [y - 0.15 for y in centres_y],
            "mode": "text",
            "text": escape_all(tokens),
            "textfont": {"size": 16, "color": "#1a1a1a"},
            "customdata": customdata,
            "hovertemplate": _(CHIP_HOVER),
            "name": _("token"),
        },
        {
            "type": "scatter",
            "x": centres_x,
            "y": [y + 0.25 for y in centres_y],
            "mode": "text",
            "text": [str(token_id) for token_id in id_list],
            "textfont": {"size": 12, "color": "#555555"},
            "customdata": customdata,
            "hovertemplate": _(CHIP_HOVER),
            "name": "id",
        },
    ]
    rows = (placed[-1][2] + 1) if placed else 1
    width_used = max((x0 + width for x0, width, _ in placed), default=1.0)
    hidden = {"visible": False, "fixedrange": True}
    return apply_layout(
        {"data": traces},
        _("tokens") if title is None else title,
        int(max(150, min(MAX_HEIGHT, ROW_PX * rows + 90))),
        shapes=shapes,
        showlegend=False,
        xaxis={**hidden, "range": [-0.2, max(ROW_UNITS, width_used) + 0.2]},
        yaxis={**hidden, "range": [rows * ROW_STEP - 0.2, -0.2]},
    )
