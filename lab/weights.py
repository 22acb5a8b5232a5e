"""The shipped models' weights as the lab's exercises read them: plain dicts of tensors.

    p = lab.params("mlm")            # the whole model
    p = lab.params("mlm", layer=0)   # one layer, the same dict as p["layers"][0]

Every matrix is laid out for row vectors, x @ W + b, as on the slides (Q = X W_Q):

    one layer (D = 128 model width, H = 4 heads, Dh = D / H = 32, M = 512 MLP width)
      W_Q, W_K, W_V   [D, D]   columns h * Dh ... (h + 1) * Dh - 1 belong to head h
      b_Q, b_K, b_V   [D]
      W_O             [D, D]   mixes the concatenated heads (rows h * Dh + j)
      b_O             [D]
      norm1_weight, norm1_bias   [D]   the LayerNorm of the add & norm after attention
      W_1 [D, M], b_1 [M], W_2 [M, D], b_2 [D]   the MLP: GELU(x W_1 + b_1) W_2 + b_2
      norm2_weight, norm2_bias   [D]   the LayerNorm of the add & norm after the MLP
      n_heads         int      H
    the whole model
      embed           [V, D]   token embedding table (also the unembedding: it is tied)
      unembed_bias    [V]      logits = h @ embed.T + unembed_bias
      layers          list of the layer dicts above, first layer first
      n_heads         int

Each call returns fresh copies, so a student's code cannot change the shipped model.
"""

from __future__ import annotations

import gzip
import random
from functools import lru_cache
from typing import Any

import torch

import model
from i18n import _
from model.lm import TransformerLM

LAB_MODELS = ("mlm", "clm")  # the encoder (BERT-style) and the decoder (GPT-style)

Params = dict[str, Any]


@lru_cache(maxsize=4)
def shipped(name: str) -> TransformerLM:
    """A shipped language model on the CPU, loaded once per process; checked to be the
    Transformer the lab builds: post-norm, sinusoidal positions, tied embeddings."""
    m = model.load(name, device="cpu")
    if not isinstance(m, TransformerLM):
        raise ValueError(f"{name} is a {m.kind} model; the lab reads the mlm or the clm")
    cfg = m.cfg
    if (cfg.norm, cfg.positional, cfg.tie_embeddings) != ("post", "sinusoidal", True):
        raise ValueError(
            f"{name} has norm={cfg.norm}, positional={cfg.positional}, "
            f"tie_embeddings={cfg.tie_embeddings}: the lab builds post-norm, sinusoidal, tied"
        )
    return m


def _as_w(linear: torch.nn.Linear) -> torch.Tensor:
    """A Linear's weight [out, in] as the [in, out] matrix of x @ W."""
    return linear.weight.detach().T.contiguous().clone()


def _copy(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone()


def _layer(block: torch.nn.Module, n_heads: int) -> Params:
    mha, mlp = block.self_attn, block.mlp
    return {
        "W_Q": _as_w(mha.w_q), "b_Q": _copy(mha.w_q.bias),
        "W_K": _as_w(mha.w_k), "b_K": _copy(mha.w_k.bias),
        "W_V": _as_w(mha.w_v), "b_V": _copy(mha.w_v.bias),
        "W_O": _as_w(mha.w_o), "b_O": _copy(mha.w_o.bias),
        "norm1_weight": _copy(block.norm1.weight), "norm1_bias": _copy(block.norm1.bias),
        "W_1": _as_w(mlp.up), "b_1": _copy(mlp.up.bias),
        "W_2": _as_w(mlp.down), "b_2": _copy(mlp.down.bias),
        "norm2_weight": _copy(block.norm2.weight), "norm2_bias": _copy(block.norm2.bias),
        "n_heads": n_heads,
    }  # fmt: skip


def params(name: str = "mlm", layer: int | None = None) -> Params:
    """The weights of the shipped `name` ("mlm" or "clm") in the lab's layout (see the
    module's docstring); with `layer`, only that layer's (0 = the first)."""
    if name not in LAB_MODELS:
        raise ValueError(_("the lab reads the mlm or the clm, not {name}", name=repr(name)))
    m = shipped(name)
    stack, heads = m.module.stack, m.cfg.n_heads
    if layer is not None:
        if not 0 <= layer < len(stack.layers):
            raise IndexError(_("{name} has layers 0..{last}, not {layer}", name=name,
                               last=len(stack.layers) - 1, layer=layer))
        return _layer(stack.layers[layer], heads)
    return {
        "embed": _copy(stack.embed.weight),
        "unembed_bias": _copy(m.module.unembed.bias),
        "layers": [_layer(block, heads) for block in stack.layers],
        "n_heads": heads,
    }


def encode(name: str, text: str) -> torch.Tensor:
    """A text as the shipped `name` reads it: [BOS] text [EOS] for the mlm, [BOS] text for
    the clm, as a 1-D tensor of token ids."""
    return torch.tensor(shipped(name).encode(text).ids)


def decode(name: str, ids: torch.Tensor | list[int]) -> str:
    """Token ids back to text (special tokens dropped)."""
    return shipped(name).decode([int(i) for i in ids])


def tokens(name: str, ids: torch.Tensor | list[int]) -> list[str]:
    """The token of each id ("[BOS]", "the", "##s")."""
    return shipped(name).tokens_of([int(i) for i in ids])


TEST_SPLIT = model.MODELS_DIR.parent / "data" / "test.txt.gz"
MAX_WORDS = 14  # the checker's sentences: short enough to read in a figure


@lru_cache(maxsize=1)
def sentences() -> tuple[str, ...]:
    """The test split's sentences of 3 to MAX_WORDS words (assets/data/test.txt.gz): what
    the checker draws from, never seen in training."""
    with gzip.open(TEST_SPLIT, "rt", encoding="utf-8") as f:
        lines = (line.strip() for line in f)
        return tuple(s for s in lines if 3 <= len(s.split()) <= MAX_WORDS)


def random_sentence(rng: random.Random) -> str:
    """One sentence of the test split, drawn with `rng`."""
    return rng.choice(sentences())


@lru_cache(maxsize=4)
def shared(name: str) -> Params:
    """`params(name)` made once and shared: for code that only reads it (the reference and
    the mistakes in lab/spot.py), never for a student's function."""
    return params(name)
