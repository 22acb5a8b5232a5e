"""The arithmetic of the lecture's steps (plain numpy): a soft dictionary lookup, what each
head does, and how much each sublayer changes the tokens' vectors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tokens import softmax_rows
from model.trace import Trace

ROLES = {  # name -> what it measures, per head, averaged over the queries
    "previous token": "the weight on the token just before",
    "itself": "the weight on the query's own token",
    "first token": "the weight on the first token ([BOS]), a common resting place",
    "spread": "how spread the weights are: entropy over the most it could be (0 to 1)",
}


@dataclass(frozen=True)
class SoftLookup:
    """Attention as a soft dictionary lookup: every key scored, softmax, a blend of values."""

    scores: np.ndarray  # [K] q·k / sqrt(d)
    weights: np.ndarray  # [K] softmax of the scores
    output: np.ndarray  # [D] the weighted blend of the values


def soft_lookup(query: np.ndarray, keys: np.ndarray, values: np.ndarray) -> SoftLookup:
    """One query [D] against keys [K, D]: scaled dot products, softmax, blend of values."""
    scores = keys @ query / np.sqrt(query.shape[-1])
    weights = softmax_rows(scores[None])[0]
    return SoftLookup(scores, weights, weights @ values)


def head_roles(stack: np.ndarray, causal: bool) -> dict[str, np.ndarray]:
    """For every head of an attention stack [L, H, T, T]: one [L, H] array per ROLES entry.
    In a decoder query i can spread over i + 1 keys, in an encoder over all T."""
    a = np.asarray(stack, dtype=np.float64)
    t = a.shape[-1]
    prev = np.diagonal(a, offset=-1, axis1=-2, axis2=-1).sum(-1) / max(t - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        bits = np.where(a > 0, -a * np.log(a), 0.0).sum(-1)  # [L, H, T]
    most = np.log(np.arange(1, t + 1) if causal else np.full(t, t))
    spread = np.where(most > 0, bits / np.where(most > 0, most, 1), 0.0)[..., 1:].mean(-1)
    return {
        "previous token": prev,
        "itself": np.diagonal(a, axis1=-2, axis2=-1).mean(-1),
        "first token": a[..., 0].mean(-1),
        "spread": spread,
    }


def sublayer_change(t: Trace) -> tuple[np.ndarray, list[str]]:
    """[T, 2L] how much each sublayer adds to each token's vector, relative to the vector it
    is added to: |attn_out| / |resid_pre| and |mlp_out| / |resid_mid|, layer by layer."""
    cols, names = [], []
    for n, layer in enumerate(t.layers, 1):
        for added, base, name in ((layer.attn_out, layer.resid_pre, "attention"),
                                  (layer.mlp_out, layer.resid_mid, "MLP")):  # fmt: skip
            size = np.linalg.norm(added, axis=-1) / np.maximum(np.linalg.norm(base, axis=-1), 1e-8)
            cols.append(size)
            names.append(f"L{n} {name}")
    return np.stack(cols, axis=1), names
