"""Shared pieces of every figure: token axes, heights, fonts, colour scales, cell text.

Token strings are user text. They only ever reach a figure as data: HTML-escaped in tick
labels, text and titles (Plotly renders a subset of HTML there), and through `customdata`
in hover templates, never formatted into the template string itself.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import plotly.graph_objects as go

# Colour scales: weights and probabilities live in [0, 1]; signed values are centred at 0.
WEIGHT_SCALE = "Blues"
SIGNED_SCALE = "RdBu_r"  # red for positive, blue for negative, white at 0
MASKED_COLOUR = "#2b2b2b"  # cells masked to -inf, and gaps in heatmaps

FONT_SIZE = 14
TITLE_SIZE = 18
MIN_HEIGHT = 300
MAX_HEIGHT = 2000
ROW_PX = 22
EXTRA_PX = 120
TEXT_CELLS_MAX = 12  # print the numbers in the cells when both sides are at most this
MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}

MINUS_INF = "-∞"
PLUS_INF = "∞"


def escape(text: object) -> str:
    """HTML-escape user text (`&`, `<`, `>`) so Plotly shows it literally."""
    return html.escape(str(text), quote=False)


def escape_all(labels: Sequence[object]) -> list[str]:
    """Escape every label of a sequence."""
    return [escape(label) for label in labels]


def tick_font_size(n: int) -> int:
    """A tick font that shrinks as the number of ticks on an axis grows."""
    if n <= 16:
        return FONT_SIZE
    if n <= 32:
        return 12
    if n <= 64:
        return 10
    if n <= 128:
        return 8
    return 7


def figure_height(n_rows: int, row_px: int = ROW_PX, extra: int = EXTRA_PX) -> int:
    """Height in pixels for `n_rows` rows, at least MIN_HEIGHT and at most MAX_HEIGHT."""
    return int(max(MIN_HEIGHT, min(MAX_HEIGHT, row_px * n_rows + extra)))


def token_axis(
    labels: Sequence[object], title: str | None = None, *, vertical: bool = False
) -> dict:
    """An integer axis 0..n-1 with the (escaped) labels as ticks.

    Integer positions keep repeated tokens ("the" twice) as separate rows or columns,
    which a categorical axis would merge. `vertical=True` runs it top-down so position 0
    is the top row.
    """
    n = len(labels)
    axis: dict = {
        "tickmode": "array",
        "tickvals": list(range(n)),
        "ticktext": escape_all(labels),
        "tickfont": {"size": tick_font_size(n)},
        "showgrid": False,
        "zeroline": False,
    }
    if vertical:
        axis["autorange"] = "reversed"
    elif n > 8 or max((len(str(label)) for label in labels), default=0) > 6:
        axis["tickangle"] = -60
    if title is not None:
        axis["title"] = {"text": escape(title)}
    return axis


def number_axis(title: str | None = None, *, vertical: bool = False) -> dict:
    """A plain numeric axis (dimensions, positions) with automatic ticks."""
    axis: dict = {"showgrid": False, "zeroline": False}
    if vertical:
        axis["autorange"] = "reversed"
    if title is not None:
        axis["title"] = {"text": escape(title)}
    return axis


_GRID = "#EBF0F8"
_AXIS = {
    "gridcolor": _GRID,
    "zerolinecolor": _GRID,
    "linecolor": _GRID,
    "ticks": "",
    "zerolinewidth": 2,
    "automargin": True,  # room for long token labels
    "title": {"standoff": 15},
}
# A small white template: plotly's own "plotly_white" is copied into every figure that names
# it, which costs ~30 ms a figure; this one holds only what the figures here use.
WHITE = go.layout.Template(
    layout={"paper_bgcolor": "white", "plot_bgcolor": "white", "xaxis": _AXIS, "yaxis": _AXIS}
)


def apply_layout(fig: go.Figure, title: str, height: int, **extra: object) -> go.Figure:
    """Apply the shared look (title size, font, tight margins, white template, height).

    Keyword arguments are further layout settings and win over the defaults.
    """
    layout: dict = {
        "title": {
            "text": escape(title),
            "font": {"size": TITLE_SIZE},
            "x": 0.01,
            "xanchor": "left",
        },
        "font": {"size": FONT_SIZE},
        "height": height,
        "margin": MARGIN,
        "template": WHITE,
        "hoverlabel": {"font": {"size": FONT_SIZE}},
    }
    layout.update(extra)
    fig.update_layout(**layout)
    return fig


def as_array(values: npt.ArrayLike, ndim: int, name: str) -> np.ndarray:
    """`values` as a float array with exactly `ndim` dimensions, or a ValueError."""
    array = np.asarray(values, dtype=float)
    if array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {array.shape}")
    return array


def check_length(labels: Sequence[object], n: int, name: str) -> None:
    """Raise a ValueError unless there are exactly `n` labels."""
    if len(labels) != n:
        raise ValueError(f"{name}: expected {n} labels, got {len(labels)}")


def format_value(value: float, fmt: str = ".3f") -> str:
    """One number as text, with the infinities of a masked score shown as ∞ signs."""
    if np.isposinf(value):
        return PLUS_INF
    if np.isneginf(value):
        return MINUS_INF
    if np.isnan(value):
        return "–"
    return format(float(value), fmt)


def cell_text(values: np.ndarray, fmt: str = ".3f") -> np.ndarray:
    """Every cell of a matrix formatted as text (object array of the same shape)."""
    out = np.full(values.shape, "–", dtype=object)
    finite = np.isfinite(values)
    out[finite] = [format(v, fmt) for v in values[finite].tolist()]
    out[np.isposinf(values)] = PLUS_INF
    out[np.isneginf(values)] = MINUS_INF
    return out


def finite_or_nan(values: np.ndarray) -> np.ndarray:
    """A copy with ±inf replaced by NaN, which Plotly draws as a gap (JSON has no inf)."""
    return np.where(np.isfinite(values), values, np.nan)


def signed_limit(*arrays: np.ndarray) -> float:
    """The largest finite |value| over the arrays, for a colour scale symmetric around 0."""
    largest = 0.0
    for array in arrays:
        finite = array[np.isfinite(array)]
        if finite.size:
            largest = max(largest, float(np.abs(finite).max()))
    return largest or 1.0


def cell_customdata(
    row_labels: Sequence[object], col_labels: Sequence[object], values_text: np.ndarray
) -> np.ndarray:
    """Per-cell hover data [row label, column label, value text] for a heatmap, shape [R, C, 3]."""
    rows, cols = values_text.shape
    data = np.empty((rows, cols, 3), dtype=object)
    data[:, :, 0] = np.asarray(escape_all(row_labels), dtype=object)[:, None]
    data[:, :, 1] = np.asarray(escape_all(col_labels), dtype=object)[None, :]
    data[:, :, 2] = values_text
    return data


def show_cell_text(shape: tuple[int, ...], text_auto: bool | None) -> bool:
    """Numbers in the cells: as asked, or by default when the matrix is small."""
    if text_auto is not None:
        return text_auto
    return max(shape) <= TEXT_CELLS_MAX


def heatmap_trace(
    values: np.ndarray,
    row_labels: Sequence[object],
    col_labels: Sequence[object],
    *,
    hovertemplate: str,
    signed: bool,
    hover_fmt: str = ".3f",
    text_auto: bool | None = None,
    text_fmt: str = ".2f",
    zmin: float | None = None,
    zmax: float | None = None,
    coloraxis: str | None = None,
    colorbar_title: str | None = None,
) -> go.Heatmap:
    """The one heatmap trace all builders use: integer x/y, customdata hover, optional text.

    customdata holds [row label, column label, value text] per cell; ±inf cells become
    gaps (NaN) in z and show "∞" text.
    """
    text = cell_text(values, text_fmt) if show_cell_text(values.shape, text_auto) else None
    kwargs: dict = {
        "z": finite_or_nan(values),
        "x": list(range(values.shape[1])),
        "y": list(range(values.shape[0])),
        "customdata": cell_customdata(row_labels, col_labels, cell_text(values, hover_fmt)),
        "hovertemplate": hovertemplate,
        "hoverongaps": True,
    }
    if text is not None:
        kwargs["text"] = text
        kwargs["texttemplate"] = "%{text}"
        kwargs["textfont"] = {"size": tick_font_size(max(values.shape))}
    if coloraxis is not None:
        kwargs["coloraxis"] = coloraxis
    else:
        if signed:
            limit = signed_limit(values)
            kwargs.update(colorscale=SIGNED_SCALE, zmid=0.0)
            kwargs["zmin"] = -limit if zmin is None else zmin
            kwargs["zmax"] = limit if zmax is None else zmax
        else:
            kwargs["colorscale"] = WEIGHT_SCALE
            if zmin is not None:
                kwargs["zmin"] = zmin
            if zmax is not None:
                kwargs["zmax"] = zmax
        colorbar: dict = {"thickness": 14}
        if colorbar_title:
            colorbar["title"] = {"text": escape(colorbar_title)}
        kwargs["colorbar"] = colorbar
    return go.Heatmap(**kwargs)
