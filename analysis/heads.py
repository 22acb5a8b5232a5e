"""Every head of every layer in one number each, for models too big to look at head by head
(30 layers x 9 heads), and the pages of a long list (layers, heads) a view can show."""

from __future__ import annotations

import numpy as np

from i18n import N_

SUMMARIES = {  # name -> what it measures, for menus and captions (both shown with _())
    N_("spread"): N_("how spread each head's attention is: the entropy of a row, in bits, "
                     "averaged over the queries (0: every query looks at one token)"),
    N_("distance"): N_("how far each head looks: |query - key| weighted by attention, "
                       "averaged over the queries, in tokens"),
    N_("first token"): N_("how much attention goes to the first token (a common 'resting "
                          "place'), averaged over the queries"),
    N_("itself"): N_("how much attention each token gives itself, averaged over the queries"),
}  # fmt: skip


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



ROLES = {  # name -> what it measures, per head, averaged over the queries
    "previous token": "the weight on the token just before",
    "itself": "the weight on the query's own token",
    "first token": "the weight on the first token ([BOS]), a common resting place",
    "spread": "how spread the weights are: entropy over the most it could be (0 to 1)",
}


def head_roles(stack: np.ndarray, causal: bool) -> dict[str, np.ndarray]:
    """For every head of an attention stack [L, H, T, T]: one [L, H] array per ROLES entry.
    "spread" is head_summary's entropy over the most a query could spread: in a decoder
    query i over i + 1 keys, in an encoder over all T (the first query left out)."""
    a = np.asarray(stack, dtype=np.float64)
    t = a.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        nats = np.where(a > 0, -a * np.log(a), 0.0).sum(-1)  # [L, H, T]
    most = np.log(np.arange(1, t + 1) if causal else np.full(t, t))
    spread = np.where(most > 0, nats / np.where(most > 0, most, 1), 0.0)[..., 1:].mean(-1)
    return {
        "previous token": np.diagonal(a, offset=-1, axis1=-2, axis2=-1).sum(-1) / max(t - 1, 1),
        "itself": head_summary(a, "itself"),
        "first token": head_summary(a, "first token"),
        "spread": spread,
    }


def pages(n: int, size: int) -> list[tuple[int, int]]:
    """[start, end) ranges of at most `size` covering 0..n: (0, 6), (6, 12), ..."""
    return [(i, min(i + size, n)) for i in range(0, n, max(1, size))]
