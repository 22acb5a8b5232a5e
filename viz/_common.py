"""Shared pieces of every figure: token axes, heights, fonts, colour scales, cell text, and
the JSON the app sends (`to_json`).

A figure is Plotly's figure JSON as Python data (`Figure`): {"data": [trace dicts, each
with its "type"], "layout": {...}}, built as plain dicts and lists. No plotly object is made
at run time: Plotly's validation and its copy of a figure cost most of a figure's build (the
tests check every builder's figure against Plotly's schema instead, tests/figures.py).
Properties are written nested ({"marker": {"color": ...}}, never `marker_color`), colour
scales as the [[position, colour], ...] lists Plotly's named scales expand to, titles as
{"text": ...}.

Token strings are user text. They only ever reach a figure as data: HTML-escaped in tick
labels, text and titles (Plotly renders a subset of HTML there), and through `customdata`
in hover templates, never formatted into the template string itself.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from viz.margins import TITLE_STANDOFF, WIDE_EM, is_wide, text_px
from viz.margins import estimate as estimate_margins

Figure = dict[str, Any]
"""Plotly's figure JSON as Python data: {"data": [trace dicts, each with "type"], "layout":
{...}}. Values may be numpy arrays (sent as Plotly's typed arrays, `to_json`)."""


def _scale(colours: Sequence[str]) -> list[list[float | str]]:
    """Colours evenly spaced from 0 to 1, as Plotly expands a named colour scale."""
    last = len(colours) - 1
    return [[i / last, colour] for i, colour in enumerate(colours)]


# Colour scales: weights and probabilities live in [0, 1]; signed values are centred at 0.
# Plotly's named scales "Blues" and "RdBu_r", as plotly.py writes them into a figure (its
# scales, not Plotly.js's own of the same names; tests/test_figures.py compares them).
WEIGHT_SCALE = _scale(
    ["rgb(247,251,255)", "rgb(222,235,247)", "rgb(198,219,239)", "rgb(158,202,225)",
     "rgb(107,174,214)", "rgb(66,146,198)", "rgb(33,113,181)", "rgb(8,81,156)", "rgb(8,48,107)"]
)  # fmt: skip
SIGNED_SCALE = _scale(  # red for positive, blue for negative, white at 0
    ["rgb(5,48,97)", "rgb(33,102,172)", "rgb(67,147,195)", "rgb(146,197,222)",
     "rgb(209,229,240)", "rgb(247,247,247)", "rgb(253,219,199)", "rgb(244,165,130)",
     "rgb(214,96,77)", "rgb(178,24,43)", "rgb(103,0,31)"]
)  # fmt: skip
MASKED_COLOUR = "#2b2b2b"  # cells masked to -inf, and gaps in heatmaps

FONT_SIZE = 14
TITLE_SIZE = 18
MIN_HEIGHT = 300
MAX_HEIGHT = 2000
ROW_PX = 22
EXTRA_PX = 120
# Numbers in cells are printed only where they fit. A builder does not know how wide its
# chart is drawn: it assumes a column COLUMN_PX wide (a chart beside another on a 1280-px
# projector) and takes off its token labels and colour bar (plot_width). Measured at
# 1280x720: charts 308-387 px wide, their plot areas 104-217 px.
COLUMN_PX = 340
NARROW_PLOT_PX = 200  # a plot area that narrow still shows a few short labels side by side
CELL_FONT_MIN = 9  # below this a number is unreadable on a projector: hover only
CHAR_EM = 0.6  # width of a digit, sign or point, in font sizes (Arial's digits: 0.556)
CELL_PAD_PX = 4
MARGIN = {"l": 10, "r": 10, "t": 60, "b": 10}

MINUS_INF = "-∞"
PLUS_INF = "∞"


def escape(text: object) -> str:
    """HTML-escape user text (`&`, `<`, `>`) so Plotly shows it literally."""
    return html.escape(str(text), quote=False)


def escape_all(labels: Sequence[object]) -> list[str]:
    """Escape every label of a sequence."""
    return [escape(label) for label in labels]


class TokenLabel(str):
    """A token label with a note that hovers add (the tokenizer's own string, the character
    a byte belongs to: ui.show.labelled); tick labels and text show the plain string."""

    note: str

    def __new__(cls, text: str, note: str = "") -> TokenLabel:
        label = super().__new__(cls, text)
        label.note = note
        return label


def hover_label(label: object) -> str:
    """A label escaped for a hover, with its note where it has one ("␣Paris (tokenizer:
    ĠParis)")."""
    note = getattr(label, "note", "")
    return escape(label) + (f" ({escape(note)})" if note else "")


def hover_all(labels: Sequence[object]) -> list[str]:
    """`hover_label` of every label of a sequence."""
    return [hover_label(label) for label in labels]


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
    elif n * max((text_px(t, tick_font_size(n)) for t in axis["ticktext"]), default=0) > (
        NARROW_PLOT_PX
    ):
        # Too wide side by side for a narrow plot: slanted here, not by Plotly after a
        # first draw (its automatic angle is known only once drawn: viz.margins).
        axis["tickangle"] = -30
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
    # Plotly's default ("hide past div") measures every tick label's box on every draw:
    # 55 of a 20-token heatmap's 99 ms in Chromium (README, Benchmarks). Automargin already
    # makes room for the labels, so nothing is hidden by not checking.
    "ticklabeloverflow": "allow",
    "title": {"standoff": TITLE_STANDOFF},
}


def white() -> dict:
    """The figures' small white template, a fresh copy for each figure's layout (no figure
    shares a dict with another). Plotly's own "plotly_white" is copied into every figure
    that names it, which costs ~30 ms a figure; this one holds only what the figures here
    use."""

    def axis() -> dict:
        return {**_AXIS, "title": dict(_AXIS["title"])}

    return {
        "layout": {
            "paper_bgcolor": "white", "plot_bgcolor": "white", "xaxis": axis(), "yaxis": axis()
        }
    }


# Hangul in every figure (issue 31): Plotly's own Latin fonts first, so an English figure
# looks as it did, then the Korean fonts of Windows, macOS and Linux for the characters
# they lack (the pages' stack: .streamlit/config.toml's theme.font).
FONT_FAMILY = (
    '"Open Sans", verdana, arial, "Malgun Gothic", "Apple SD Gothic Neo", "Noto Sans CJK KR", '
    '"Noto Sans KR", sans-serif'
)


def apply_layout(fig: Figure, title: str, height: int, **extra: object) -> Figure:
    """Apply the shared look (title size, font, tight margins, white template, height) to
    `fig`'s layout, in place (and return it).

    Keyword arguments are further layout settings and win over the defaults; nested dicts
    merge into what the layout already has (as Plotly's update_layout does).
    """
    layout: dict = {
        "title": {
            "text": escape(title),
            "font": {"size": TITLE_SIZE},
            "x": 0.01,
            "xanchor": "left",
        },
        "font": {"size": FONT_SIZE, "family": FONT_FAMILY},
        "height": height,
        "margin": dict(MARGIN),
        "template": white(),
        "hoverlabel": {"font": {"size": FONT_SIZE, "family": FONT_FAMILY}},
    }
    layout.update(extra)
    full = merged(fig.get("layout") or {}, layout)
    # Margins that already hold the labels and colour bar: one draw, not two (viz.margins).
    margin = estimate_margins(full, fig.get("data") or [])
    if margin is not None:
        full["margin"] = margin
    fig["layout"] = full
    return fig


def panel_axes(i: int) -> tuple[str, str]:
    """The x and y axes of panel i of a `panel_row`, as a trace names them ("x", "y"; then
    "x2", "y2", ...); the layout's keys are "xaxis" + the number ("xaxis", "xaxis2")."""
    n = str(i + 1) if i else ""
    return f"x{n}", f"y{n}"


def panel_row(widths: Sequence[float], gap: float, titles: Sequence[str]) -> dict:
    """Layout of panels side by side on one shared y axis, each titled above: what
    plotly's make_subplots(rows=1, shared_yaxes=True) lays out, without its cost (8 ms a
    figure, most of a two-panel figure's build). The x axes x, x2, ... split the width
    left after the gaps (`gap`, a fraction of it, between panels) in proportion to
    `widths`; the y axes y2, y3, ... match y and hide their labels. Panel i's traces go on
    its `panel_axes(i)`."""
    free = 1.0 - gap * (len(widths) - 1)
    total = float(sum(widths))
    layout: dict = {"annotations": []}
    start = 0.0
    for i, (width, title) in enumerate(zip(widths, titles, strict=True)):
        x, y = panel_axes(i)
        end = min(1.0, start + free * width / total)
        layout[f"xaxis{x[1:]}"] = {"anchor": y, "domain": [start, end]}
        layout[f"yaxis{y[1:]}"] = {"anchor": x, "domain": [0.0, 1.0]}
        if i:
            layout[f"yaxis{y[1:]}"].update(matches="y", showticklabels=False)
        layout["annotations"].append(
            {
                "text": escape(title),
                "x": (start + end) / 2,
                "xanchor": "center",
                "xref": "paper",
                "y": 1.0,
                "yanchor": "bottom",
                "yref": "paper",
                "showarrow": False,
                "font": {"size": 16},
            }
        )
        start = end + gap
    return layout


def panel_grid(
    rows: int, cols: int, h_gap: float, v_gap: float, titles: Sequence[str]
) -> dict:
    """Layout of a grid of panels, rows top-down, each titled above: what plotly's
    make_subplots(rows, cols, subplot_titles=titles, horizontal_spacing=h_gap,
    vertical_spacing=v_gap) lays out, by the same arithmetic, without building a figure.
    Panel (r, c) (from 0) is number r * cols + c; its traces go on `panel_axes(number)`."""
    widths = [(1.0 - h_gap * (cols - 1)) / cols] * cols
    heights = [(1.0 - v_gap * (rows - 1)) / rows] * rows
    layout: dict = {"annotations": []}
    for r in range(rows):
        below = rows - 1 - r  # the rows under this one
        bottom = sum(heights[:below]) + below * v_gap
        y_domain = [min(max(bottom, 0.0), 1.0), min(max(bottom + heights[below], 0.0), 1.0)]
        for c in range(cols):
            left = sum(widths[:c]) + c * h_gap
            x_domain = [left, left + widths[c]]
            x, y = panel_axes(r * cols + c)
            layout[f"xaxis{x[1:]}"] = {"anchor": y, "domain": x_domain}
            layout[f"yaxis{y[1:]}"] = {"anchor": x, "domain": y_domain}
            title = titles[r * cols + c] if r * cols + c < len(titles) else ""
            if title:
                layout["annotations"].append(
                    {
                        "text": title,
                        "x": sum(x_domain) / 2.0,
                        "xanchor": "center",
                        "xref": "paper",
                        "y": y_domain[1],
                        "yanchor": "bottom",
                        "yref": "paper",
                        "showarrow": False,
                        "font": {"size": 16},
                    }
                )
    return layout


def axis_keys(layout: dict, letter: str) -> list[str]:
    """The layout's keys of every `letter` ("x" or "y") axis: "xaxis" (always, as Plotly's
    update_xaxes counts it), then "xaxis2", "xaxis3", ... as the layout has them."""
    more = [key for key in layout if key.startswith(f"{letter}axis") and key[5:].isdigit()]
    return [f"{letter}axis", *more]


def update_axes(layout: dict, letter: str, **update: object) -> None:
    """Merge `update` into every `letter` axis of the layout, in place: Plotly's
    update_xaxes (letter "x") or update_yaxes."""
    for key in axis_keys(layout, letter):
        layout[key] = merged(layout.get(key) or {}, update)


def merged(base: dict, update: dict) -> dict:
    """`base` with `update` merged in, nested dicts key by key (as Plotly's update does)."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


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


class Labels(list):
    """Nested lists of hover labels (strings and numbers, no numpy): JSON as they are."""


def cell_customdata(
    row_labels: Sequence[object], col_labels: Sequence[object] | None,
    values_text: np.ndarray | None, *, shape: tuple[int, int] | None = None,
) -> Labels:
    """Per-cell hover data [row label, column label, value text] for a heatmap, nested
    lists [R][C][3]; [R][C][2] without `values_text` (the hover then reads the number from
    z); [R][C][1], the row labels alone, without the column labels too (`shape` then gives
    R, C: a hover that names the column by its number, %{x}). A row's cells then share one
    list: JSON writes it in each cell."""
    rows = hover_all(row_labels)
    if col_labels is None and values_text is None:
        cols = shape[1] if shape is not None else 0
        return Labels([[row]] * cols for row in rows)
    cols = hover_all(col_labels) if col_labels is not None else [""] * shape[1]
    if values_text is None:
        return Labels([[row, col] for col in cols] for row in rows)
    return Labels([[row, col, text] for col, text in zip(cols, texts, strict=True)]
                  for row, texts in zip(rows, np.asarray(values_text).tolist(), strict=True))


def char_widths(text: str) -> float:
    """`text`'s width in digit widths (CHAR_EM): its length, a Hangul or CJK character (a
    translated title) counting as WIDE_EM / CHAR_EM of them."""
    return len(text) + sum(map(is_wide, text)) * (WIDE_EM / CHAR_EM - 1)


def plot_width(row_labels: Sequence[object], colorbar_title: str | None = "") -> float:
    """The width a heatmap's cells get in a COLUMN_PX-wide chart: less the row labels (and
    the axis title), less the colour bar and its title (None: no colour bar)."""
    n = len(row_labels)
    longest = max((len(str(label)) for label in row_labels), default=0)
    labels_px = longest * tick_font_size(n) * CHAR_EM + 30
    bar_px = 0.0
    if colorbar_title is not None:
        bar_px = 50 + char_widths(colorbar_title) * FONT_SIZE * CHAR_EM
    return max(COLUMN_PX - MARGIN["l"] - MARGIN["r"] - labels_px - bar_px, 40.0)


def cell_font(
    n_rows: int, n_cols: int, texts: Sequence[str] | np.ndarray, plot_px: float
) -> int | None:
    """The font size at which the longest of `texts` fits in every cell of an n_rows x
    n_cols grid drawn `plot_px` wide, or None when no readable size fits (hover only).

    The one rule for numbers in cells (every heatmap, the causal mask): a cell is
    plot_px / n_cols wide and at least ROW_PX high.
    """
    if n_rows == 0 or n_cols == 0:
        return None
    chars = max((len(str(t)) for t in np.asarray(texts, dtype=object).ravel()), default=0)
    cell_w = plot_px / n_cols - CELL_PAD_PX
    for size in range(FONT_SIZE, CELL_FONT_MIN - 1, -1):
        if chars * size * CHAR_EM <= cell_w and size <= ROW_PX - CELL_PAD_PX:
            return size
    return None


def widest_cells(values: np.ndarray, fmt: str) -> list[str]:
    """The cells' texts (`cell_text`) that can be the widest under a fixed-point `fmt`
    (".2f"): the smallest and the largest finite value's, and the marks of ±inf and gaps.
    Enough to tell whether the numbers fit, without formatting every cell."""
    finite = values[np.isfinite(values)]
    out = [format(v, fmt) for v in (finite.min(), finite.max())] if finite.size else []
    for mark, where in ((PLUS_INF, np.isposinf), (MINUS_INF, np.isneginf), ("–", np.isnan)):
        if where(values).any():
            out.append(mark)
    return out


def cell_text_font(
    shape: tuple[int, ...], texts: Sequence[str] | np.ndarray, text_auto: bool | None,
    plot_px: float,
) -> int | None:  # fmt: skip
    """The font for numbers in the cells of a matrix of `shape` whose widest texts are among
    `texts`, or None for none: `text_auto` False never prints them, True always (at the
    smallest readable size when they do not fit), None (the default) only where they fit
    (`cell_font`)."""
    if text_auto is False:
        return None
    rows, cols = shape
    size = cell_font(rows, cols, texts, plot_px)
    return size if size is not None or not text_auto else CELL_FONT_MIN


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
) -> dict:
    """The one heatmap trace all builders use: integer x/y, customdata hover, and numbers
    in the cells where they fit (`cell_text_font`), else on hover only.

    customdata holds [row label, column label] per cell (the row label alone where the
    template does not read the column's, `%{customdata[1]}`), and the hover template's
    `%{customdata[2]}` (the value) reads z in `hover_fmt`; a matrix with ±inf cells (gaps, NaN
    in z) keeps each value's text as customdata[2], "∞" for those.
    """
    bar = None if coloraxis is not None else (colorbar_title or "")
    font = cell_text_font(values.shape, widest_cells(values, text_fmt), text_auto,
                          plot_width(row_labels, bar))  # fmt: skip
    exact = bool(np.isfinite(values).all())  # no gaps in z: the hover reads each number there
    trace: dict = {
        "type": "heatmap",
        "z": finite_or_nan(values),
        "x": list(range(values.shape[1])),
        "y": list(range(values.shape[0])),
        "customdata": cell_customdata(
            row_labels, col_labels if not exact or "customdata[1]" in hovertemplate else None,
            None if exact else cell_text(values, hover_fmt), shape=values.shape),
        "hovertemplate": (hovertemplate.replace("%{customdata[2]}", f"%{{z:{hover_fmt}}}")
                          if exact else hovertemplate),
        "hoverongaps": True,
    }  # fmt: skip
    if font is not None:  # each cell's number formatted only when they are shown
        trace["text"] = cell_text(values, text_fmt)
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": font}
    if coloraxis is not None:
        trace["coloraxis"] = coloraxis
    else:
        if signed:
            limit = signed_limit(values)
            trace.update(colorscale=SIGNED_SCALE, zmid=0.0)
            trace["zmin"] = -limit if zmin is None else zmin
            trace["zmax"] = limit if zmax is None else zmax
        else:
            trace["colorscale"] = WEIGHT_SCALE
            if zmin is not None:
                trace["zmin"] = zmin
            if zmax is not None:
                trace["zmax"] = zmax
        colorbar: dict = {"thickness": 14}
        if colorbar_title:
            colorbar["title"] = {"text": escape(colorbar_title)}
        trace["colorbar"] = colorbar
    return trace


# --- the JSON the app sends -----------------------------------------------------------------

# numpy dtypes that plotly.py writes as Plotly.js typed arrays, and their short names
# (static/svg_chart.js's TYPED table reads each of them).
TYPED = {
    "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2",
    "int32": "i4", "uint32": "u4", "float32": "f4", "float64": "f8",
}  # fmt: skip
_NARROWER = {"i": (np.int8, np.int16, np.int32), "u": (np.uint8, np.uint16, np.uint32)}
# Keys whose arrays are always written as lists: Plotly's fixed-length settings (a range, a
# domain) and the keys plotly.py never writes as typed arrays.
_AS_LISTS = frozenset({"range", "domain", "layer", "layers", "geojson"})
_HTML_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("/", "\\u002f"))


def typed_array(values: np.ndarray) -> dict | list:
    """A numpy array as Plotly's typed array {"dtype", "bdata" (base64 of its little-endian
    bytes), "shape" (2-D and up: "R, C")}, as plotly.py 6 writes it: 64-bit integers
    narrowed to the fewest bits that hold them. Nested lists where plotly.py writes lists:
    an empty array, strings or other objects, booleans, integers too big for 32 bits."""
    if values.size == 0:
        return values.tolist()
    if values.dtype.kind in "iu" and values.dtype.itemsize == 8:
        low, high = values.min(), values.max()
        fits = [t for t in _NARROWER[values.dtype.kind] if np.iinfo(t).min <= low]
        fits = [t for t in fits if high <= np.iinfo(t).max]
        if not fits:
            return values.tolist()
        values = values.astype(fits[0])
    short = TYPED.get(values.dtype.name)
    if short is None:
        return values.tolist()
    data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<"))
    spec = {"dtype": short, "bdata": base64.b64encode(data.data).decode("ascii")}
    if values.ndim > 1:
        spec["shape"] = ", ".join(map(str, values.shape))
    return spec


_CONTAINERS = (dict, list, tuple, np.ndarray)


def _plain(value: Any, key: str = "") -> Any:
    """`value` with its numpy arrays as typed arrays (or lists: `typed_array`); dicts are
    copied, the figure itself is left as it is. An array in a list is written as a list,
    as plotly.py does. `Labels` are written as they are."""
    if isinstance(value, Labels):
        return value
    if isinstance(value, dict):
        return {k: _plain(v, k) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist() if key in _AS_LISTS else typed_array(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, _CONTAINERS) for v in value):
        return [v.tolist() if isinstance(v, np.ndarray) else _plain(v) for v in value]
    return value


def _json_default(value: object) -> object:
    """What orjson cannot write itself: numpy scalars and arrays (an array inside
    a list of lists)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def to_json(fig: Figure) -> str:
    """The figure as the compact JSON the app sends to the browser: numpy arrays as Plotly's
    typed arrays (`typed_array`), numpy scalars as numbers, NaN and ±inf outside a typed
    array as null, and "<", ">", "/" escaped, as plotly.py's `to_json` writes them. Written
    by orjson (as plotly.py does when it is installed): the json module took 2-3 ms of a
    new sentence on the tokens page, orjson a tenth of it."""
    text = orjson.dumps(_plain(fig), default=_json_default, option=orjson.OPT_NON_STR_KEYS)
    for char, escaped in _HTML_SAFE:
        if char.encode() in text:
            text = text.replace(char.encode(), escaped.encode())
    return text.decode()
