"""The reference solutions of the lab's seven exercises, in the order of the lecture.

The notebook never imports this file: it is the teacher's answer key and what the checker
compares a student's functions with (lab/checks.py). Every function is plain torch; a
function that builds on another calls it by its exercise name, so lab/mistakes.py can
swap one part for a buggy one (`lab.mistakes.assemble`). Shapes: T queries, S keys,
D model width, H heads, Dh = D / H, V vocabulary; params in the layout of lab/weights.py.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """softmax(Q K^T / sqrt(Dh)) V: q [..., T, Dh], k and v [..., S, Dh], mask bool
    broadcastable to [..., T, S] (True: the query may look at the key).
    Returns the output [..., T, Dh] and the weights [..., T, S]."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [..., T, S]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # before the softmax
    weights = torch.softmax(scores, dim=-1)  # each row (one query) sums to 1
    return weights @ v, weights


def causal_mask(T: int) -> Tensor:
    """[T, T] bool, True on and below the diagonal: query i may look at keys 0..i."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))


def sinusoidal_encoding(T: int, D: int) -> Tensor:
    """[T, D] float: PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(same)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]  # [T, 1]
    two_i = torch.arange(0, D, 2, dtype=torch.float64)[None, :]  # [1, D/2]
    angle = pos / 10000 ** (two_i / D)  # [T, D/2]
    pe = torch.zeros(T, D, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)  # even dimensions
    pe[:, 1::2] = torch.cos(angle)  # odd dimensions
    return pe.float()


def multi_head_attention(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    """x [T, D] -> [T, D]: H heads in parallel, each on its Dh columns of W_Q, W_K, W_V;
    the heads' outputs concatenated, then W_O."""
    T, D = x.shape
    H = params["n_heads"]

    def split(y: Tensor) -> Tensor:  # [T, D] -> [H, T, Dh]
        return y.reshape(T, H, D // H).transpose(0, 1)

    q = split(x @ params["W_Q"] + params["b_Q"])
    k = split(x @ params["W_K"] + params["b_K"])
    v = split(x @ params["W_V"] + params["b_V"])
    z, _ = attention(q, k, v, mask)  # [H, T, Dh]
    concat = z.transpose(0, 1).reshape(T, D)  # [T, H * Dh]
    return concat @ params["W_O"] + params["b_O"]


def layer(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    """One post-norm layer, x [T, D] -> [T, D]: attention, add & norm, MLP, add & norm."""
    D = x.shape[-1]
    x = F.layer_norm(
        x + multi_head_attention(x, params, mask), (D,), params["norm1_weight"],
        params["norm1_bias"],
    )  # fmt: skip
    mlp = F.gelu(x @ params["W_1"] + params["b_1"]) @ params["W_2"] + params["b_2"]
    return F.layer_norm(x + mlp, (D,), params["norm2_weight"], params["norm2_bias"])


def encoder(ids: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    """Token ids [T] -> logits [T, V]: embed (scaled by sqrt(D)), add positions, the layers,
    then the tied unembedding. mask=None: every token sees every token (the mlm); the clm
    passes the causal mask."""
    embed = params["embed"]  # [V, D]
    T, D = len(ids), embed.shape[1]
    x = embed[ids] * math.sqrt(D) + sinusoidal_encoding(T, D)  # [T, D]
    for p in params["layers"]:
        x = layer(x, p, mask)
    return x @ embed.T + params["unembed_bias"]  # [T, V]


def generate(prompt_ids: Tensor, params: dict, n: int) -> Tensor:
    """Greedy decoding with the clm: n times, run the decoder on the ids so far (causal
    mask) and append the most likely next token. Returns the prompt and the n new ids."""
    ids = prompt_ids
    for _ in range(n):
        logits = encoder(ids, params, causal_mask(len(ids)))  # [T, V]
        ids = torch.cat([ids, logits[-1].argmax().reshape(1)])
    return ids
