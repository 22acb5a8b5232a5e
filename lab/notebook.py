"""The student's notebook, lab/transformer_lab.ipynb, written from this file, and its
Korean twin lab/transformer_lab.ko.ipynb (the same cells; the explanations in Korean and
the checks speaking Korean; the code as it is).

`python -m lab notebook` writes it as shipped (each exercise's body raises
NotImplementedError); `--solutions` fills in the reference solutions (the teacher's
copy, and what the tests run); `--lang ko` writes the Korean one. Each exercise is three
cells: the idea (markdown), the function to write (tagged "exercise"), and its check
(tagged "check").
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from i18n import DEFAULT, N_, _, using
from lab import solutions

HERE = Path(__file__).resolve().parent
SHIPPED = HERE / "transformer_lab.ipynb"
NOTEBOOKS = {"en": SHIPPED, "ko": HERE / "transformer_lab.ko.ipynb"}  # one per language

INTRO = N_("""\
# Build the Transformer yourself

The lecture's last slide: the Transformer implemented in Python. You write its seven pieces
in the lecture's order, and each one is checked against the models Transformer Glassbox
ships: the **mlm** (an encoder, BERT-style: it fills in `[MASK]`) and the **clm** (a
decoder, GPT-style: it writes the next token). Both are post-norm Transformers with
sinusoidal positions: 4 layers, D = 128, H = 4 heads of Dh = 32, a vocabulary of V = 8000.

Each exercise has the idea, a cell with a function to write (its body raises
`NotImplementedError` until you replace it) and a check cell. A check runs your function
on new random inputs and on random test sentences through the shipped models, every time,
compares at float32 tolerance (atol 1e-4, rtol 1e-3), and says what is wrong: it knows the
classic mistakes. Keep the names and signatures; plain torch only (no `nn.MultiheadAttention`).
From a terminal, `python -m lab check lab/transformer_lab.ipynb` checks all seven.

Shapes: T queries (tokens), S keys, D model width, H heads, Dh = D / H, V vocabulary.""")

SETUP = """\
# Setup: find this repository (so that `import lab` works), then torch.
import sys
from pathlib import Path

root = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "lab" / "checks.py").is_file())
if str(root) not in sys.path:
    sys.path.insert(0, str(root))

import math

import torch
import torch.nn.functional as F
from torch import Tensor

import lab"""

# (exercise, the idea in markdown, the stub's signature line and docstring); the ideas are
# marked for translation: the app's Lab page shows them in the visitor's language (_()),
# and the Korean notebook has them in Korean.
EXERCISES = [
    ("attention", N_("""\
## 1. Scaled dot-product attention

Attention is a soft dictionary lookup: a query is scored against every key, the softmax
turns its scores into weights that sum to 1, and the output is the weighted blend of the
values. The scores are divided by √Dh so that they do not grow with the vectors' width.

$$\\text{Attention}(Q, K, V) = \\text{softmax}\\left(\\frac{Q K^\\top}{\\sqrt{D_h}}\\right) V$$

- `q` is `[..., T, Dh]`, `k` and `v` are `[..., S, Dh]`: S keys, which need not be T (in
  cross-attention they come from another sentence); `...` are batch dimensions (heads).
- scores and weights are `[..., T, S]`, one row per query; the output is `[..., T, Dh]`.
- `mask` (optional) is bool, broadcastable to `[..., T, S]`, **True where a query may look
  at a key**. Where it is False the score becomes -∞ *before* the softmax: exp(-∞) = 0, so
  a masked key gets weight exactly 0 and the other weights still sum to 1.

Return `(out, weights)`. Handy: `k.transpose(-2, -1)`, `torch.softmax(x, dim=-1)`,
`scores.masked_fill(condition, value)`."""),
     'def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):\n'
     '    """softmax(q k^T / sqrt(Dh)) v -> (out [..., T, Dh], weights [..., T, S])."""'),
    ("causal_mask", N_("""\
## 2. The causal mask

A decoder (GPT) learns to predict every next token at once, so token i must not see the
tokens after it: its scores get -∞ above the diagonal. Here you build the bool mask that
says who may look: `mask[i, j]` is True when key j is at or before query i (j ≤ i).

- `causal_mask(T)` is `[T, T]`, dtype `torch.bool`, True on and below the diagonal.

Handy: `torch.ones(T, T, dtype=torch.bool)`, `torch.tril`."""),
     'def causal_mask(T: int) -> Tensor:\n'
     '    """[T, T] bool, True on and below the diagonal: query i may look at keys 0..i."""'),
    ("sinusoidal_encoding", N_("""\
## 3. Positional encoding

Attention treats its input as a set: "the dog bit the man" and "the man bit the dog" give
every word the same weights. So a position vector is added to each token's embedding, a
sine and a cosine per pair of dimensions, with wavelengths from 2π to 10000 · 2π:

$$PE_{pos,\\,2i} = \\sin\\left(\\frac{pos}{10000^{2i/D}}\\right), \\qquad
PE_{pos,\\,2i+1} = \\cos\\left(\\frac{pos}{10000^{2i/D}}\\right)$$

- positions 0 … T-1, D even; the result is `[T, D]`, float32: sin on the even dimensions
  (0, 2, 4, …), cos on the odd ones (1, 3, 5, …).

Handy: `torch.arange(0, D, 2)`, slicing `pe[:, 0::2]` and `pe[:, 1::2]`."""),
     'def sinusoidal_encoding(T: int, D: int) -> Tensor:\n'
     '    """[T, D] float32: sin(pos / 10000^(2i/D)) on even dimensions, cos on odd ones."""'),
    ("multi_head_attention", N_("""\
## 4. Multi-head attention

H heads attend in parallel, each in its own Dh = D / H dimensions, with its own slices of
the learned projections; their outputs are concatenated and mixed by W_O:

$$\\text{head}_h = \\text{Attention}(X W_Q^h, X W_K^h, X W_V^h), \\qquad
\\text{MultiHead}(X) = \\text{Concat}(\\text{head}_1, \\dots, \\text{head}_H)\\, W_O$$

`params` is one layer of the mlm, `lab.params("mlm", layer=0)` (the cell below shows it):
`W_Q`, `W_K`, `W_V`, `W_O` are `[D, D]` for row vectors, `q = x @ W_Q + b_Q`, and head h
owns columns h·Dh … (h+1)·Dh − 1 of q; `params["n_heads"]` is H.

- `x` is `[T, D]`; project it, split `[T, D]` → `[T, H, Dh]` → transpose to `[H, T, Dh]`,
  attend (your `attention`: H is a batch dimension, the mask `[T, T]` broadcasts),
  transpose back and reshape to `[T, D]`, then `@ W_O + b_O`. The result is `[T, D]`."""),
     'def multi_head_attention(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:\n'
     '    """x [T, D] -> [T, D]: H heads in parallel, concatenated, then W_O."""'),
    ("layer", N_("""\
## 5. The Transformer layer

Attention, add & norm, MLP, add & norm. The residual connection (x + …) lets each sublayer
add to the token's vector instead of replacing it; the shipped models are **post-norm**, as
in the paper: the LayerNorm comes after the addition.

$$x \\leftarrow \\text{LayerNorm}_1(x + \\text{MultiHead}(x)), \\qquad
x \\leftarrow \\text{LayerNorm}_2(x + \\text{MLP}(x)), \\qquad
\\text{MLP}(x) = \\text{GELU}(x W_1 + b_1)\\, W_2 + b_2$$

LayerNorm over the last dimension: (x − mean) / √(var + 1e-5) · weight + bias, the
variance divided by D; or `F.layer_norm(x, (D,), weight, bias)`. Its weights are
`norm1_weight`, `norm1_bias`, `norm2_weight`, `norm2_bias` `[D]`; the MLP's `W_1` `[D, 512]`,
`b_1`, `W_2` `[512, D]`, `b_2`; the GELU is `F.gelu`. `x` `[T, D]` → `[T, D]`."""),
     'def layer(x: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:\n'
     '    """One post-norm layer, x [T, D] -> [T, D]: attention, add & norm, MLP, add & norm."""'),
    ("encoder", N_("""\
## 6. The encoder: the whole mlm

BERT-style: every token sees every token. From token ids to a score for every word of the
vocabulary at every position:

1. embeddings: rows of `params["embed"]` `[V, D]`, **multiplied by √D** (the table is shared
   with the output, so its rows are small);
2. plus your positional encoding;
3. the layers, `params["layers"]` (a list of the layer dicts of exercise 4);
4. logits `[T, V]` = x @ `embed`ᵀ + `unembed_bias`: the unembedding is the same table.

`ids` is a 1-D tensor of token ids, e.g. `lab.encode("mlm", "I [MASK] across the river.")`
([BOS] … [EOS]). Keep the `mask` argument and pass it to every layer: the clm is the same
stack with a causal mask (exercise 7)."""),
     'def encoder(ids: Tensor, params: dict, mask: Tensor | None = None) -> Tensor:\n'
     '    """Token ids [T] -> logits [T, V]: embed * sqrt(D) + positions, the layers, unembed."""'),
    ("generate", N_("""\
## 7. Generation: the clm writes

GPT is the same stack with the causal mask. It writes one token at a time: run it on the
ids so far (your `encoder` with `causal_mask(len(ids))` and `params = lab.params("clm")`),
take the **last** position's logits, append the most likely token (greedy decoding:
`argmax`), and repeat n times.

- `prompt_ids` is 1-D, starting with [BOS]: `lab.encode("clm", "the dog")`;
- return the prompt followed by the n new ids, `[T0 + n]`, as integer ids
  (`torch.cat`; `lab.decode("clm", ids)` turns them back into text)."""),
     'def generate(prompt_ids: Tensor, params: dict, n: int) -> Tensor:\n'
     '    """Greedy decoding with the clm: the prompt followed by n new token ids."""'),
]  # fmt: skip

PARAMS_CELL = """\
# The weights of one layer of the mlm, as multi_head_attention and layer get them.
p = lab.params("mlm", layer=0)
{name: tuple(value.shape) if isinstance(value, Tensor) else value for name, value in p.items()}"""

TRY_IT = N_("""\
## Try it

Your own Transformer on the shipped weights: the mlm fills in a `[MASK]`, the clm goes on
from a prompt. Change the sentences.""")
# What the setup cell starts with in a notebook of another language: the checker's
# messages and hints in that language (i18n.language reads it at each call).
SPEAKS = 'import os\n\nos.environ["GLASSBOX_LANG"] = "{lang}"  # the checks speak {name}\n\n'
NAMES = {"ko": "Korean"}

TRY_CELL = """\
try:
    ids = lab.encode("mlm", "I swam across the [MASK] to get to the other bank.")
    at = lab.tokens("mlm", ids).index("[MASK]")
    guesses = encoder(ids, lab.params("mlm"))[at].topk(5).indices
    print("the mlm's guesses for [MASK]:", lab.tokens("mlm", guesses))
    ids = generate(lab.encode("clm", "the dog"), lab.params("clm"), 10)
    print("the clm goes on:", lab.decode("clm", ids))
except NotImplementedError:
    print("not written yet: write encoder and generate first")"""


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def _cell(kind: str, cell_id: str, text: str, tags: tuple[str, ...] = ()) -> dict:
    cell: dict = {"cell_type": kind, "id": cell_id, "metadata": {}, "source": _lines(text)}
    if tags:
        cell["metadata"]["tags"] = list(tags)
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def stub(name: str, head: str) -> str:
    """The cell to write in: the signature and docstring, a body that raises."""
    return f"{head}\n    raise NotImplementedError  # your code here"


def solution(name: str) -> str:
    """The reference solution's source, as a cell."""
    return inspect.getsource(getattr(solutions, name)).rstrip("\n")


def setup(lang: str = DEFAULT) -> str:
    """The setup cell; in another language it sets the checks' language first."""
    if lang == DEFAULT:
        return SETUP
    return SPEAKS.format(lang=lang, name=NAMES[lang]) + SETUP


def build(solutions: bool = False, lang: str = DEFAULT) -> dict:
    """The notebook as JSON (nbformat 4.5): as shipped, or with the solutions filled in;
    its explanations in `lang`."""
    with using(lang):
        cells = [_cell("markdown", "intro", _(INTRO)),
                 _cell("code", "setup", setup(lang), ("setup",))]  # fmt: skip
        for name, idea, head in EXERCISES:
            if name == "multi_head_attention":
                cells.append(_cell("code", "params", PARAMS_CELL))
            body = solution(name) if solutions else stub(name, head)
            cells += [
                _cell("markdown", f"{name}-idea", _(idea)),
                _cell("code", f"{name}-write", body, ("exercise",)),
                _cell("code", f"{name}-check", f'lab.check("{name}", {name})', ("check",)),
            ]
        cells += [_cell("markdown", "try-it", _(TRY_IT)),
                  _cell("code", "try", TRY_CELL, ("check",))]  # fmt: skip
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                           "name": "python3"},
            "language_info": {"name": "python"},
        },  # fmt: skip
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def text(solutions: bool = False, lang: str = DEFAULT) -> str:
    """The notebook file's text (what `write` writes)."""
    return json.dumps(build(solutions, lang), indent=1, ensure_ascii=False) + "\n"


def write(path: str | Path | None = None, solutions: bool = False, lang: str = DEFAULT) -> Path:
    """Write the notebook to `path` (by default the shipped one of `lang`)."""
    path = Path(path) if path is not None else NOTEBOOKS[lang]
    path.write_text(text(solutions, lang), encoding="utf-8")
    return path
