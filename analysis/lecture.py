"""The arithmetic of the lecture's steps (plain numpy): a soft dictionary lookup and how
much each sublayer changes the tokens' vectors (what each head does: analysis/heads.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tokens import softmax_rows
from model.trace import Trace


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
