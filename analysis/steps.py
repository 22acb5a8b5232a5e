"""One attention head recomputed step by step from X and the learned weights (numpy), to
set beside what the model computed itself."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tokens import softmax_rows
from model.encoding import additive_mask, causal_mask
from model.trace import Trace


@dataclass
@dataclass
class AttentionSteps:
    """One head's attention, recomputed step by step from the layer's input X and the
    learned weights, next to what the model itself computed."""

    x: np.ndarray  # [T, D] X, the layer's input
    w_q: np.ndarray  # [D, Dh] this head's W_Q (x @ W + b)
    w_k: np.ndarray
    w_v: np.ndarray
    q: np.ndarray  # [T, Dh] Q = X W_Q + b_Q
    k: np.ndarray
    v: np.ndarray
    qk: np.ndarray  # [T, T] Q K^T
    scaled: np.ndarray  # [T, T] Q K^T / sqrt(Dh)
    mask: np.ndarray  # [T, T] 0 where allowed, -inf where masked
    masked: np.ndarray  # [T, T] scaled + mask
    weights: np.ndarray  # [T, T] softmax, rows sum to 1
    z: np.ndarray  # [T, Dh] weights @ V, this head's output
    concat: np.ndarray  # [T, D] every head's Z side by side
    w_o: np.ndarray  # [D, D]
    output: np.ndarray  # [T, D] concat @ W_O + b_O
    d_head: int
    max_error: float  # largest |recomputed - model's own| over Q, K, V, weights, Z, output


def attention_steps(
    trace: Trace, weights: dict[str, np.ndarray], layer: int, head: int
) -> AttentionSteps:
    """Recompute head `head` of layer `layer` from X and W (see AttentionSteps)."""
    lay = trace.layers[layer]
    x = lay.attn_input.astype(np.float64)
    w = {name: np.asarray(weights[name], dtype=np.float64) for name in weights}
    q = x @ w["w_q"][head] + w["b_q"][head]
    k = x @ w["w_k"][head] + w["b_k"][head]
    v = x @ w["w_v"][head] + w["b_v"][head]
    d_head = q.shape[-1]
    qk = q @ k.T
    scaled = qk / np.sqrt(d_head)
    n = x.shape[0]
    mask = additive_mask(causal_mask(n) if trace.causal else np.ones((n, n), dtype=bool))
    masked = scaled + mask
    attn = softmax_rows(masked)
    z = attn @ v
    concat = np.concatenate(list(lay.z), axis=-1).astype(np.float64)  # heads side by side
    output = concat @ w["w_o"] + w["b_o"]
    errors = [
        np.abs(q - lay.q[head]).max(),
        np.abs(k - lay.k[head]).max(),
        np.abs(v - lay.v[head]).max(),
        np.abs(attn - lay.attention[head]).max(),
        np.abs(z - lay.z[head]).max(),
    ]
    if lay.attn_out is not None:
        errors.append(np.abs(output - lay.attn_out).max())
    return AttentionSteps(
        x,
        w["w_q"][head],
        w["w_k"][head],
        w["w_v"][head],
        q,
        k,
        v,
        qk,
        scaled,
        mask,
        masked,
        attn,
        z,
        concat,
        w["w_o"],
        output,
        d_head,
        float(max(errors)),
    )
