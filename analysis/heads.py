"""Every head of every layer in one number each, for models too big to look at head by head
(30 layers x 9 heads), and the pages of a long list (layers, heads) a view can show."""

from __future__ import annotations

import numpy as np

SUMMARIES = {  # name -> what it measures, for menus and captions
    "spread": "how spread each head's attention is: the entropy of a row, in bits, averaged "
    "over the queries (0: every query looks at one token)",
    "distance": "how far each head looks: |query - key| weighted by attention, averaged over "
    "the queries, in tokens",
    "first token": "how much attention goes to the first token (a common 'resting place'), "
    "averaged over the queries",
    "itself": "how much attention each token gives itself, averaged over the queries",
}


def head_summary(stack: np.ndarray, what: str = "spread") -> np.ndarray:
    """[L, H] one number per head of the attention stack [L, H, T, S] (see SUMMARIES)."""
    a = np.asarray(stack, dtype=np.float64)
    if what == "spread":
        with np.errstate(divide="ignore", invalid="ignore"):
            bits = np.where(a > 0, -a * np.log2(a), 0.0)
        return bits.sum(-1).mean(-1)
    if what == "distance":
        t, s = a.shape[-2:]
        gap = np.abs(np.arange(t)[:, None] - np.arange(s)[None, :])
        return (a * gap).sum(-1).mean(-1)
    if what == "first token":
        return a[..., 0].mean(-1)
    if what == "itself":
        n = min(a.shape[-2:])
        return np.diagonal(a[..., :n, :n], axis1=-2, axis2=-1).mean(-1)
    raise ValueError(f"unknown summary {what!r}; known: {', '.join(SUMMARIES)}")


def pages(n: int, size: int) -> list[tuple[int, int]]:
    """[start, end) ranges of at most `size` covering 0..n: (0, 6), (6, 12), ..."""
    return [(i, min(i + size, n)) for i in range(0, n, max(1, size))]
