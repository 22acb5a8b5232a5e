"""Watching a model learn: curves of the scores as it trains (one line per series), and a
toy model's answer for one sequence beside the right one, each position marked right or
wrong."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from i18n import _
from viz._common import Figure, apply_layout, escape, escape_all, token_axis

LINE_COLOURS = ("#2f6db5", "#C2185B", "#2e7d32", "#6a1b9a")  # one per series, in order
RIGHT, WRONG, GIVEN = "#c8e6c9", "#ffcdd2", "#eeeeee"  # cell colours of the answer strip


def learning_curve(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    title: str,
    y_title: str,
    x_title: str | None = None,
    percent: bool = False,
    log_y: bool = False,
    mark: float | None = None,
) -> Figure:
    """One line per series, each given as (x values, y values): a score as training goes
    on. `percent`: y is a share, shown 0-100%; `log_y`: a log axis (a loss); `mark`: a
    dashed vertical line at that x (the step a snapshot shows). The x axis reads
    "training step" unless `x_title` says otherwise."""
    traces = []
    for i, (name, (xs, ys)) in enumerate(series.items()):
        if len(xs) != len(ys):
            raise ValueError(f"{name}: {len(xs)} x values for {len(ys)} y values")
        label = escape(name)
        traces.append({
            "type": "scatter", "x": [float(x) for x in xs], "y": [float(y) for y in ys],
            "mode": "lines", "name": label,
            "line": {"color": LINE_COLOURS[i % len(LINE_COLOURS)], "width": 3},
            "hovertemplate": f"{label}, %{{x}}: %{{y:{'.1%' if percent else '.3g'}}}"
            "<extra></extra>",
        })  # fmt: skip
    x_title = _("training step") if x_title is None else x_title
    y_axis: dict = {"title": {"text": escape(y_title)}}
    if percent:
        y_axis |= {"tickformat": ".0%", "range": [-0.02, 1.05]}
    if log_y:
        y_axis["type"] = "log"
    extra: dict = {}
    if mark is not None:  # a vertical line across the plot (Plotly's add_vline)
        extra["shapes"] = [{
            "type": "line", "x0": float(mark), "x1": float(mark), "xref": "x",
            "y0": 0, "y1": 1, "yref": "y domain",
            "line": {"dash": "dash", "color": "#555", "width": 2},
        }]  # fmt: skip
    return apply_layout(
        {"data": traces}, title, 300, **extra, xaxis={"title": {"text": escape(x_title)}},
        yaxis=y_axis, legend={"orientation": "h", "y": -0.3}, showlegend=len(series) > 1,
    )  # fmt: skip


def toy_answer(
    inputs: Sequence[object], output: Sequence[object], right: Sequence[object], title: str
) -> Figure:
    """Three rows, a column per position: the input, the model's answer (green where right,
    red where wrong, with a ✓ or ✗) and the right answer."""
    n = len(inputs)
    if not len(output) == len(right) == n:
        raise ValueError(f"{n} inputs, {len(output)} outputs, {len(right)} right answers")
    ok = [str(o) == str(r) for o, r in zip(output, right, strict=True)]
    said = [f"{o} {'✓' if good else '✗'}" for o, good in zip(output, ok, strict=True)]
    text = [escape_all(inputs), escape_all(said), escape_all(right)]
    z = np.array([[0.5] * n, [1.0 if good else 0.0 for good in ok], [0.5] * n])
    scale = [[0.0, WRONG], [0.49, WRONG], [0.5, GIVEN], [0.51, RIGHT], [1.0, RIGHT]]
    hover = np.array(
        [[_("input")] * n, [_("right") if g else _("wrong") for g in ok], [_("answer")] * n]
    )
    trace = {
        "type": "heatmap", "z": z, "x": list(range(n)), "y": [0, 1, 2], "zmin": 0, "zmax": 1,
        "colorscale": scale, "showscale": False, "text": text, "texttemplate": "%{text}",
        "textfont": {"size": 16}, "xgap": 3, "ygap": 3, "customdata": hover,
        "hovertemplate": _("position %{x}: %{text} (%{customdata})<extra></extra>"),
    }  # fmt: skip
    axis = token_axis([str(i) for i in range(n)], _("position"))
    axis["tickangle"] = 0
    rows = [_("input"), _("model: {right}/{n} right", right=sum(ok), n=n), _("right answer")]
    return apply_layout(
        {"data": [trace]}, title, 230, xaxis=axis,
        yaxis={"tickmode": "array", "tickvals": [0, 1, 2], "ticktext": rows,
               "autorange": "reversed", "showgrid": False},
    )  # fmt: skip


def _strip(
    columns: Sequence[str], x_title: str, rows: list[tuple[str, Sequence[str]]],
    marks: Sequence[bool], title: str,
) -> Figure:  # fmt: skip
    """Rows of cells, a column each: the first row's cells green where `marks` says right,
    red where wrong (with a ✓ or ✗); the other rows grey."""
    n = len(columns)
    if len(marks) != n or any(len(cells) != n for _label, cells in rows):
        raise ValueError(f"{n} columns; rows of {[len(c) for _l, c in rows]}, {len(marks)} marks")
    first = [f"{c} {'✓' if m else '✗'}" for c, m in zip(rows[0][1], marks, strict=True)]
    text = [escape_all(first), *[escape_all(cells) for _label, cells in rows[1:]]]
    z = np.array([[float(m) for m in marks]] + [[0.5] * n] * (len(rows) - 1))
    scale = [[0.0, WRONG], [0.49, WRONG], [0.5, GIVEN], [0.51, RIGHT], [1.0, RIGHT]]
    trace = {
        "type": "heatmap", "z": z, "x": list(range(n)), "y": list(range(len(rows))), "zmin": 0,
        "zmax": 1, "colorscale": scale, "showscale": False, "text": text,
        "texttemplate": "%{text}", "textfont": {"size": 16}, "xgap": 3, "ygap": 3,
        "hoverinfo": "skip",
    }  # fmt: skip
    axis = token_axis(list(columns), x_title)
    axis["tickangle"] = 0
    return apply_layout(
        {"data": [trace]}, title, 120 + 55 * len(rows), xaxis=axis,
        yaxis={"tickmode": "array", "tickvals": list(range(len(rows))),
               "ticktext": escape_all([label for label, _cells in rows]),
               "autorange": "reversed", "showgrid": False},
    )  # fmt: skip


def translation_answer(output: Sequence[str], right: Sequence[str], title: str) -> Figure:
    """A translation token by token above the right one, each token marked right or wrong
    at its place (a missing or an extra token is wrong)."""
    n = max(len(output), len(right), 1)
    said, answer = [*output, *[""] * (n - len(output))], [*right, *[""] * (n - len(right))]
    marks = [a == b != "" for a, b in zip(said, answer, strict=True)]
    return _strip([str(i + 1) for i in range(n)], _("token"),
                  [(_("model: {right}/{n} right", right=sum(marks), n=len(right)), said),
                   (_("right answer"), answer)], marks, title)  # fmt: skip


def alignment_match(
    written: Sequence[str], live: Sequence[str], shipped: Sequence[str], title: str
) -> Figure:
    """For each Korean word written (a column), the English token the live model reads
    most, marked right where the shipped translator reads the same one, above the shipped
    translator's."""
    marks = [a == b for a, b in zip(live, shipped, strict=True)]
    return _strip(list(written), _("Korean word written"),
                  [(_("this run: {alike}/{n} alike", alike=sum(marks), n=len(marks)), live),
                   (_("shipped translator"), shipped)], marks, title)  # fmt: skip
