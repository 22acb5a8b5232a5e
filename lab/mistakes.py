"""The classic mistakes of the lab, each a buggy version of one reference solution.

Each `Mistake` is a pure torch function with its exercise's signature, a one-line
description, the hint the checker gives, and its one-line diff (the line as in
lab/solutions.py and the line with the bug). The checker names a student's mistake by
finding the buggy version whose output equals the student's; the app's "Spot the bug"
runs them on the real model (lab/spot.py). No Streamlit here.

A mistake in one part also shows in the parts built on it (a wrong attention makes a
wrong layer): `variant(mistake, "layer")` is the reference layer with that one part
swapped, assembled by `assemble` without patching anything (safe while other threads
run the same functions).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from i18n import N_
from lab import solutions
from lab.solutions import (
    attention,
    causal_mask,
    encoder,
    generate,
    layer,
    multi_head_attention,
    sinusoidal_encoding,
)

# Which exercises each one calls by name (the notebook's order).
DEPENDS: dict[str, tuple[str, ...]] = {
    "attention": (),
    "causal_mask": (),
    "sinusoidal_encoding": (),
    "multi_head_attention": ("attention",),
    "layer": ("multi_head_attention",),
    "encoder": ("sinusoidal_encoding", "layer"),
    "generate": ("encoder", "causal_mask"),
}
EXERCISES = tuple(DEPENDS)


@dataclass(frozen=True)
class Mistake:
    """One classic mistake in one exercise."""

    name: str  # "no_scale"
    exercise: str  # the exercise it belongs to: "attention"
    title: str  # one line: "no 1/√Dh" (English; shown with i18n._)
    hint: str  # what the checker tells a student who made it (English; shown with i18n._)
    right: str  # the line as in lab/solutions.py
    wrong: str  # the same line with the bug
    fn: Callable  # the buggy function, the exercise's signature

    @property
    def diff(self) -> str:
        """The one-line diff: the right line, then the wrong one."""
        return f"- {self.right}\n+ {self.wrong}"


# ---------------------------------------------------------------------------------------
# Building a variant: the reference with one part swapped
# ---------------------------------------------------------------------------------------


def rebind(fn: Callable, **parts: Callable) -> Callable:
    """A copy of `fn` in which the global names in `parts` mean other functions; `fn`
    itself is untouched."""
    if not parts:
        return fn
    copy = types.FunctionType(
        fn.__code__, {**fn.__globals__, **parts}, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__, copy.__doc__ = fn.__kwdefaults__, fn.__doc__
    return copy


def assemble(exercise: str, swap: dict[str, Callable]) -> Callable:
    """The reference `exercise` with the parts in `swap` (exercise name -> function) used
    wherever they are called, at any depth. A swapped function that delegates to the
    reference of its own exercise gets the reference assembled with the other swaps."""
    parts = {dep: assemble(dep, swap) for dep in DEPENDS[exercise]}
    reference = rebind(getattr(solutions, exercise), **parts)
    if exercise not in swap:
        return reference
    return rebind(swap[exercise], **parts, **{exercise: reference})


def variant(mistake: Mistake, exercise: str | None = None) -> Callable:
    """`exercise` (default: the mistake's own) with the mistake inside."""
    return assemble(exercise or mistake.exercise, {mistake.exercise: mistake.fn})


def uses(exercise: str) -> list[str]:
    """The exercises `exercise` is built on, itself first, then what it calls, depth first."""
    out = [exercise]
    for dep in DEPENDS[exercise]:
        out += [e for e in uses(dep) if e not in out]
    return out


def mistakes_in(exercise: str) -> list[Mistake]:
    """Every mistake that can show in `exercise`: its own first, then those of its parts."""
    return [m for part in uses(exercise) for m in MISTAKES.values() if m.exercise == part]


# ---------------------------------------------------------------------------------------
# 1. attention
# ---------------------------------------------------------------------------------------


def no_scale(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def wrong_axis(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    return weights @ v, weights


def mask_after_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def mask_inverted(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    return attention(q, k, v, None if mask is None else ~mask)


# ---------------------------------------------------------------------------------------
# 2. the causal mask
# ---------------------------------------------------------------------------------------


def upper_triangle(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool))


def no_diagonal(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def causal_inverted(T: int) -> Tensor:
    return ~causal_mask(T)


# ---------------------------------------------------------------------------------------
# 3. the sinusoidal encoding
# ---------------------------------------------------------------------------------------


def with_base(T: int, D: int, base: float) -> Tensor:
    """The sinusoidal encoding with another base than 10000 (float64 inside)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    angle = pos / base ** (torch.arange(0, D, 2, dtype=torch.float64)[None, :] / D)
    pe = torch.zeros(T, D, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe.float()


def sin_cos_swapped(T: int, D: int) -> Tensor:
    return sinusoidal_encoding(T, D).reshape(T, D // 2, 2).flip(-1).reshape(T, D)


def halves(T: int, D: int) -> Tensor:
    pe = sinusoidal_encoding(T, D)
    return torch.cat([pe[:, 0::2], pe[:, 1::2]], dim=1)


def exponent_i(T: int, D: int) -> Tensor:
    return with_base(T, D, 100.0)  # 10000^(i/D) = 100^(2i/D)


def wrong_base(T: int, D: int) -> Tensor:
    return with_base(T, D, 1000.0)


def positions_from_1(T: int, D: int) -> Tensor:
    return sinusoidal_encoding(T + 1, D)[1:]


# ---------------------------------------------------------------------------------------
# 4. multi-head attention
# ---------------------------------------------------------------------------------------


def split_without_transpose(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    T, D = x.shape
    H = params["n_heads"]

    def split(y: Tensor) -> Tensor:
        return y.reshape(H, T, D // H)

    q = split(x @ params["W_Q"] + params["b_Q"])
    k = split(x @ params["W_K"] + params["b_K"])
    v = split(x @ params["W_V"] + params["b_V"])
    z, _ = attention(q, k, v, mask)
    return z.transpose(0, 1).reshape(T, D) @ params["W_O"] + params["b_O"]


def merge_without_transpose(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    T, D = x.shape
    H = params["n_heads"]

    def split(y: Tensor) -> Tensor:
        return y.reshape(T, H, D // H).transpose(0, 1)

    q = split(x @ params["W_Q"] + params["b_Q"])
    k = split(x @ params["W_K"] + params["b_K"])
    v = split(x @ params["W_V"] + params["b_V"])
    z, _ = attention(q, k, v, mask)
    return z.reshape(T, D) @ params["W_O"] + params["b_O"]


def no_w_o(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    D = x.shape[-1]
    return multi_head_attention(x, {**params, "W_O": torch.eye(D), "b_O": torch.zeros(D)}, mask)


def no_biases(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    zero = torch.zeros(x.shape[-1])
    return multi_head_attention(x, {**params, "b_Q": zero, "b_K": zero, "b_V": zero}, mask)


def mask_ignored(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    return multi_head_attention(x, params, None)


# ---------------------------------------------------------------------------------------
# 5. the layer
# ---------------------------------------------------------------------------------------


def _mlp(x: Tensor, params: dict, act: Callable = F.gelu) -> Tensor:
    return act(x @ params["W_1"] + params["b_1"]) @ params["W_2"] + params["b_2"]


def _norm(x: Tensor, params: dict, which: int) -> Tensor:
    return F.layer_norm(
        x, (x.shape[-1],), params[f"norm{which}_weight"], params[f"norm{which}_bias"]
    )


def no_residual(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    x = _norm(multi_head_attention(x, params, mask), params, 1)
    return _norm(_mlp(x, params), params, 2)


def pre_norm(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    x = x + multi_head_attention(_norm(x, params, 1), params, mask)
    return x + _mlp(_norm(x, params, 2), params)


def relu(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    x = _norm(x + multi_head_attention(x, params, mask), params, 1)
    return _norm(x + _mlp(x, params, torch.relu), params, 2)


def unbiased_norm(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    def norm(y: Tensor, which: int) -> Tensor:
        mean, var = y.mean(-1, keepdim=True), y.var(-1, keepdim=True)  # unbiased: / (D - 1)
        y = (y - mean) / torch.sqrt(var + 1e-5)
        return y * params[f"norm{which}_weight"] + params[f"norm{which}_bias"]

    x = norm(x + multi_head_attention(x, params, mask), 1)
    return norm(x + _mlp(x, params), 2)


# ---------------------------------------------------------------------------------------
# 6. the encoder
# ---------------------------------------------------------------------------------------


def no_positions(ids: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    return rebind(encoder, sinusoidal_encoding=lambda T, D: torch.zeros(T, D))(ids, params, mask)


def no_embed_scale(ids: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    embed = params["embed"]
    x = embed[ids] + sinusoidal_encoding(len(ids), embed.shape[1])
    for p in params["layers"]:
        x = layer(x, p, mask)
    return x @ embed.T + params["unembed_bias"]


def no_unembed_bias(ids: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:
    return encoder(ids, {**params, "unembed_bias": torch.zeros(())}, mask)


# ---------------------------------------------------------------------------------------
# 7. generation
# ---------------------------------------------------------------------------------------


def no_causal_mask(prompt_ids: Tensor, params: dict, n: int) -> Tensor:
    return rebind(generate, causal_mask=lambda T: None)(prompt_ids, params, n)


def first_position(prompt_ids: Tensor, params: dict, n: int) -> Tensor:
    ids = prompt_ids
    for _ in range(n):
        logits = encoder(ids, params, causal_mask(len(ids)))
        ids = torch.cat([ids, logits[0].argmax().reshape(1)])
    return ids


# ---------------------------------------------------------------------------------------
# The catalogue, in the lecture's order
# ---------------------------------------------------------------------------------------

_SCORES = "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])"
_MASK = 'scores = scores.masked_fill(~mask, float("-inf"))'
_SPLIT = "return y.reshape(T, H, D // H).transpose(0, 1)"
_NORM1 = "x = F.layer_norm(x + multi_head_attention(x, params, mask), ...)"
_EMBED = "x = embed[ids] * math.sqrt(D) + sinusoidal_encoding(T, D)"
_GREEDY = "ids = torch.cat([ids, logits[-1].argmax().reshape(1)])"

_CATALOGUE = [
    ("no_scale", "attention", N_("no 1/√Dh"),
     N_("divide the scores by √Dh (Dh = q.shape[-1]) before the softmax: without it the "
        "scores grow with Dh and the softmax saturates on one key"),
     _SCORES, "scores = q @ k.transpose(-2, -1)", no_scale),
    ("wrong_axis", "attention", N_("softmax over the wrong axis"),
     N_("take the softmax over the keys, the last axis (dim=-1): each query's row of weights "
        "must sum to 1, not each key's column"),
     "weights = torch.softmax(scores, dim=-1)", "weights = torch.softmax(scores, dim=-2)",
     wrong_axis),
    ("mask_after_softmax", "attention", N_("the mask applied after the softmax"),
     N_("the mask must be applied before the softmax (scores set to -inf where the mask is "
        "False), so that the weights left sum to 1"),
     _MASK, "weights = weights.masked_fill(~mask, 0.0)  # after the softmax",
     mask_after_softmax),
    ("mask_inverted", "attention", N_("the mask inverted"),
     N_("the mask is True where a query MAY look at a key: fill the scores where it is False "
        "(masked_fill(~mask, -inf)), not where it is True"),
     _MASK, 'scores = scores.masked_fill(mask, float("-inf"))', mask_inverted),
    ("upper_triangle", "causal_mask", N_("the upper triangle instead of the lower"),
     N_("True goes on and below the diagonal (torch.tril): query i may look at keys 0..i, "
        "the past, never at the future"),
     "return torch.tril(torch.ones(T, T, dtype=torch.bool))",
     "return torch.triu(torch.ones(T, T, dtype=torch.bool))", upper_triangle),
    ("no_diagonal", "causal_mask", N_("the diagonal left out"),
     N_("keep the diagonal: query i may look at keys 0..i, itself included"),
     "return torch.tril(torch.ones(T, T, dtype=torch.bool))",
     "return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)", no_diagonal),
    ("causal_inverted", "causal_mask", N_("the causal mask inverted"),
     N_("True means 'may look': the mask is True on and below the diagonal and False above it"),
     "return torch.tril(torch.ones(T, T, dtype=torch.bool))",
     "return ~torch.tril(torch.ones(T, T, dtype=torch.bool))", causal_inverted),
    ("sin_cos_swapped", "sinusoidal_encoding", N_("sin and cos swapped"),
     N_("sin goes on the even dimensions (0, 2, 4, ...) and cos on the odd ones (1, 3, 5, ...)"),
     "pe[:, 0::2] = torch.sin(angle)", "pe[:, 0::2] = torch.cos(angle)", sin_cos_swapped),
    ("halves", "sinusoidal_encoding", N_("sin and cos in halves, not interleaved"),
     N_("interleave them: sin on the even dimensions, cos on the odd ones (pe[:, 0::2] and "
        "pe[:, 1::2]), not sin in the first half and cos in the second"),
     "pe[:, 0::2] = torch.sin(angle)", "pe[:, : D // 2] = torch.sin(angle)", halves),
    ("exponent_i", "sinusoidal_encoding", N_("the exponent i/D instead of 2i/D"),
     N_("the exponent is 2i/D where 2i is the even dimension (0, 2, 4, ...): "
        "torch.arange(0, D, 2) / D, not torch.arange(D // 2) / D"),
     "two_i = torch.arange(0, D, 2)[None, :]", "two_i = torch.arange(D // 2)[None, :]",
     exponent_i),
    ("wrong_base", "sinusoidal_encoding", N_("a wrong base"),
     N_("the frequencies are 1 / 10000^(2i/D): the shipped models use the base 10000"),
     "angle = pos / 10000 ** (two_i / D)", "angle = pos / 1000 ** (two_i / D)", wrong_base),
    ("positions_from_1", "sinusoidal_encoding", N_("positions counted from 1"),
     N_("positions start at 0: the first token's encoding is sin 0 = 0 and cos 0 = 1"),
     "pos = torch.arange(T)[:, None]", "pos = torch.arange(1, T + 1)[:, None]",
     positions_from_1),
    ("split_without_transpose", "multi_head_attention", N_("heads split without the transpose"),
     N_("split the heads with reshape(T, H, Dh) and then transpose(0, 1) to [H, T, Dh]: "
        "reshape(H, T, Dh) alone mixes the tokens of different heads"),
     _SPLIT, "return y.reshape(H, T, D // H)", split_without_transpose),
    ("merge_without_transpose", "multi_head_attention", N_("heads merged without the transpose"),
     N_("put the heads back with z.transpose(0, 1).reshape(T, D): reshape(T, D) alone on "
        "[H, T, Dh] mixes the tokens of different heads"),
     "concat = z.transpose(0, 1).reshape(T, D)", "concat = z.reshape(T, D)",
     merge_without_transpose),
    ("no_w_o", "multi_head_attention", N_("W_O forgotten"),
     N_("the concatenated heads go through the output projection at the end: "
        "concat @ W_O + b_O"),
     'return concat @ params["W_O"] + params["b_O"]', "return concat", no_w_o),
    ("no_biases", "multi_head_attention", N_("the biases forgotten"),
     N_("the projections have biases: q = x @ W_Q + b_Q (and b_K, b_V)"),
     'q = split(x @ params["W_Q"] + params["b_Q"])', 'q = split(x @ params["W_Q"])',
     no_biases),
    ("mask_ignored", "multi_head_attention", N_("the mask not passed on"),
     N_("pass the mask on to the heads: attention(q, k, v, mask)"),
     "z, _ = attention(q, k, v, mask)", "z, _ = attention(q, k, v)", mask_ignored),
    ("no_residual", "layer", N_("the residual forgotten"),
     N_("add each sublayer's input back before its norm (the residual connection): "
        "x = norm(x + sublayer(x)), not norm(sublayer(x))"),
     _NORM1, "x = F.layer_norm(multi_head_attention(x, params, mask), ...)", no_residual),
    ("pre_norm", "layer", N_("the norm before instead of after"),
     N_("the shipped models are post-norm, as in the paper and the lecture: "
        "x = norm(x + sublayer(x)), not x = x + sublayer(norm(x))"),
     _NORM1, "x = x + multi_head_attention(F.layer_norm(x, ...), params, mask)", pre_norm),
    ("relu", "layer", N_("ReLU instead of GELU"),
     N_("the shipped MLP uses GELU (F.gelu), not the paper's ReLU"),
     "mlp = F.gelu(x @ W_1 + b_1) @ W_2 + b_2", "mlp = torch.relu(x @ W_1 + b_1) @ W_2 + b_2",
     relu),
    ("unbiased_norm", "layer", N_("the norm's variance divided by D - 1"),
     N_("LayerNorm divides the variance by D, not D - 1: var(unbiased=False), or F.layer_norm "
        "(eps 1e-5)"),
     "var = x.var(-1, keepdim=True, unbiased=False)", "var = x.var(-1, keepdim=True)",
     unbiased_norm),
    ("no_positions", "encoder", N_("no positional encoding"),
     N_("add the positional encoding to the embeddings: without it attention sees the "
        "sentence as a set of words, in no order"),
     _EMBED, "x = embed[ids] * math.sqrt(D)", no_positions),
    ("no_embed_scale", "encoder", N_("the embeddings not scaled by √D"),
     N_("the shipped models multiply the embeddings by √D before adding the positions "
        "(the table is tied with the unembedding, so its rows are small)"),
     _EMBED, "x = embed[ids] + sinusoidal_encoding(T, D)", no_embed_scale),
    ("no_unembed_bias", "encoder", N_("the unembedding's bias forgotten"),
     N_("add the unembedding's bias: logits = x @ embed.T + unembed_bias"),
     'return x @ embed.T + params["unembed_bias"]', "return x @ embed.T", no_unembed_bias),
    ("no_causal_mask", "generate", N_("no causal mask in the decoder"),
     N_("the clm is a decoder: run it with causal_mask(len(ids)), so that no token sees the "
        "ones after it, as in training"),
     "logits = encoder(ids, params, causal_mask(len(ids)))",
     "logits = encoder(ids, params)", no_causal_mask),
    ("first_position", "generate", N_("the first position's logits"),
     N_("the next token is predicted at the last position: logits[-1].argmax()"),
     _GREEDY, "ids = torch.cat([ids, logits[0].argmax().reshape(1)])", first_position),
]  # fmt: skip

MISTAKES: dict[str, Mistake] = {row[0]: Mistake(*row) for row in _CATALOGUE}
