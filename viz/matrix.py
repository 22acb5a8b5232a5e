"""A generic labelled heatmap: embeddings (tokens x dimensions), Q/K/V, weight matrices,
attention scores and the numbers of a step-by-step calculation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import (
    MASKED_COLOUR,
    Figure,
    apply_layout,
    as_array,
    check_length,
    escape,
    figure_height,
    heatmap_trace,
    number_axis,
    token_axis,
)


def matrix_heatmap(
    values: npt.ArrayLike,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    title: str = "",
    signed: bool = True,
    x_title: str | None = None,
    y_title: str | None = None,
    hover_fmt: str = ".3f",
    text_auto: bool | None = None,
) -> Figure:
    """Heatmap of a matrix [R, C]: one row per label, top-down.

    Columns are labelled by `col_labels`, or are dimension numbers 0..C-1 when it is None.
    `signed` uses a red/blue scale centred at 0, otherwise a light-to-dark blue scale.
    Cells show their numbers when `text_auto` is True, or by default where they fit
    (viz._common.cell_font). Masked scores (-inf) are drawn as dark cells and shown as "-∞".
    The axes read "dimension" and "token" unless `x_title` and `y_title` say otherwise.
    """
    matrix = as_array(values, 2, "values")
    rows, cols = matrix.shape
    check_length(row_labels, rows, "row_labels")
    x_title = _("dimension") if x_title is None else x_title
    y_title = _("token") if y_title is None else y_title
    if col_labels is not None:
        check_length(col_labels, cols, "col_labels")
        x_axis = token_axis(col_labels, x_title)
        hover_cols = list(col_labels)
        col_part = "%{customdata[1]} (%{x})"
    else:
        x_axis = number_axis(x_title)
        hover_cols = [str(j) for j in range(cols)]
        col_part = f"{escape(x_title)} %{{x}}" if x_title else _("column %{x}")

    trace = heatmap_trace(
        matrix,
        row_labels,
        hover_cols,
        hovertemplate=(
            "%{customdata[0]} (%{y}), " + col_part + ": %{customdata[2]}<extra></extra>"
        ),
        signed=signed,
        hover_fmt=hover_fmt,
        text_auto=text_auto,
    )
    extra: dict = {}
    if not np.isfinite(matrix).all():
        extra["plot_bgcolor"] = MASKED_COLOUR
    return apply_layout(
        {"data": [trace]},
        title,
        figure_height(rows),
        xaxis=x_axis,
        yaxis=token_axis(row_labels, y_title, vertical=True),
        **extra,
    )
