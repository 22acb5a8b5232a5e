"""Translation: accuracy by sentence length, the curve that shows the RNN's bottleneck."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from i18n import _
from viz._common import Figure, apply_layout, escape

LINE_COLOURS = ("#C2185B", "#2f6db5", "#2e7d32", "#6a1b9a")  # one per model, in order


def accuracy_by_length(
    lengths: Sequence[int],
    series: Mapping[str, Sequence[float | None]],
    title: str | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
) -> Figure:
    """One line per model: its accuracy (0..1; None where not measured) at each length.

    Hover reads "lstm, 8 clauses: 1.2%"; the y axis is a percentage from 0 to 100. Titled
    "exact match by number of clauses", its axes "clauses in the sentence" and "exact
    match", unless `title`, `x_title` and `y_title` say otherwise."""
    traces = []
    for i, (name, values) in enumerate(series.items()):
        if len(values) != len(lengths):
            raise ValueError(f"{name}: {len(values)} values for {len(lengths)} lengths")
        traces.append(
            {
                "type": "scatter",
                "x": list(lengths),
                "y": [None if v is None else float(v) for v in values],
                "mode": "lines+markers",
                "name": escape(name),
                "line": {"color": LINE_COLOURS[i % len(LINE_COLOURS)], "width": 3},
                "marker": {"size": 9},
                "hovertemplate": _(
                    "{name}, %{{x}} clauses: %{{y:.1%}}<extra></extra>", name=escape(name)
                ),
            }
        )
    x_title = _("clauses in the sentence") if x_title is None else x_title
    y_title = _("exact match") if y_title is None else y_title
    return apply_layout(
        {"data": traces},
        _("exact match by number of clauses") if title is None else title,
        380,
        xaxis={"title": {"text": x_title}, "tickmode": "array", "tickvals": list(lengths)},
        yaxis={"title": {"text": y_title}, "tickformat": ".0%", "range": [-0.02, 1.05]},
        legend={"orientation": "h", "y": -0.25},
    )
