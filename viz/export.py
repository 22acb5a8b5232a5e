"""Plain-text exports of what a figure shows, for download buttons on the pages."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy.typing as npt

from viz._common import as_array, check_length

# A cell starting with one of these is run as a formula by spreadsheet programs.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _safe_label(label: object) -> str:
    """A label as CSV text that a spreadsheet will not run as a formula.

    Labels are user text (tokens); one that starts like a formula ("=cmd", "+1") gets a
    leading apostrophe. A lone "-" or "+" token stays as it is.
    """
    text = str(label)
    if len(text) > 1 and text.startswith(_FORMULA_START):
        return "'" + text
    if text.startswith(("=", "@")):
        return "'" + text
    return text


def matrix_to_csv(
    values: npt.ArrayLike,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    raw: Sequence[str] | None = None,
) -> str:
    """A matrix [R, C] as CSV text: a header row of column labels, then one row per label.

    Columns are "0", "1", ... when `col_labels` is None. With `raw` (each row's token as the
    tokenizer writes it), a "raw token" column follows the labels. Quoting is left to the
    csv module; numbers keep 6 significant digits, masked scores read "-inf".
    """
    matrix = as_array(values, 2, "values")
    rows, cols = matrix.shape
    check_length(row_labels, rows, "row_labels")
    header = [str(j) for j in range(cols)] if col_labels is None else list(col_labels)
    check_length(header, cols, "col_labels")
    notes = [[]] * rows if raw is None else [[_safe_label(r)] for r in raw]
    check_length(notes, rows, "raw")

    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    first = [""] if raw is None else ["", "raw token"]
    writer.writerow([*first, *(_safe_label(label) for label in header)])
    for label, note, row in zip(row_labels, notes, matrix, strict=True):
        writer.writerow([_safe_label(label), *note, *(format(float(v), ".6g") for v in row)])
    return buffer.getvalue()
