"""Translation: accuracy by sentence length, the curve that shows the RNN's bottleneck."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from viz._common import apply_layout, escape

LINE_COLOURS = ("#C2185B", "#2f6db5", "#2e7d32", "#6a1b9a")  # one per model, in order


def accuracy_by_length(
    lengths: Sequence[int],
    series: Mapping[str, Sequence[float | None]],
    title: str = "exact match by number of clauses",
    x_title: str = "clauses in the sentence",
    y_title: str = "exact match",
) -> go.Figure:
    """One line per model: its accuracy (0..1; None where not measured) at each length.

    Hover reads "lstm, 8 clauses: 1.2%"; the y axis is a percentage from 0 to 100."""
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        if len(values) != len(lengths):
            raise ValueError(f"{name}: {len(values)} values for {len(lengths)} lengths")
        fig.add_trace(
            go.Scatter(
                x=list(lengths),
                y=[None if v is None else float(v) for v in values],
                mode="lines+markers",
                name=escape(name),
                line={"color": LINE_COLOURS[i % len(LINE_COLOURS)], "width": 3},
                marker={"size": 9},
                hovertemplate=f"{escape(name)}, %{{x}} clauses: %{{y:.1%}}<extra></extra>",
            )
        )
    apply_layout(
        fig,
        title,
        380,
        xaxis={"title": {"text": x_title}, "tickmode": "array", "tickvals": list(lengths)},
        yaxis={"title": {"text": y_title}, "tickformat": ".0%", "range": [-0.02, 1.05]},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig
