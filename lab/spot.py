"""Spot the bug: each classic mistake run on a shipped model with a visitor's sentence.

    spots = spot_the_bug("The cat sat on the mat.", model="clm", layer=0)
    for s in spots:
        s.mistake.title, s.mistake.diff     # "no 1/√Dh", "- scores = ...\\n+ scores = ..."
        s.weights, s.reference              # [H, T, T]: the attention with the bug, and without
        s.effects()                         # what the bug does to the numbers, in words

The reference solutions run with the one mistake swapped in (lab.mistakes.assemble) and
an attention that records its weights on the way: nothing is patched, so a server may run
this for many visitors at once. The clm's pass is one step of `generate` (so the causal
mask and its mistakes apply); the mlm's is `encoder`. Pure torch and numpy: no Streamlit.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from i18n import _
from lab import solutions
from lab.mistakes import MISTAKES, Mistake, assemble
from lab.weights import shared, shipped

# The bugs the class guesses between by default (issue 27): four pictures that differ.
SPOT = ("no_scale", "mask_after_softmax", "wrong_axis", "no_positions")


@dataclass
class Spot:
    """One mistake's attention beside the model's, for one sentence and layer."""

    mistake: Mistake
    tokens: list[str]
    layer: int
    weights: np.ndarray  # [H, T, T] with the bug
    reference: np.ndarray  # [H, T, T] the model's own
    causal: bool  # a decoder's attention (the clm's): no weight may lie on later tokens

    @property
    def row_sums(self) -> np.ndarray:
        """[H, T] each query's weights added up: 1 for a softmax over the keys."""
        return self.weights.sum(-1)

    @property
    def future(self) -> float:
        """The most weight any query puts on later tokens (0 in a decoder)."""
        later = np.triu(np.ones(self.weights.shape[-2:], dtype=bool), k=1)
        return float((np.nan_to_num(self.weights) * later).sum(-1).max(initial=0.0))

    @staticmethod
    def _peak(weights: np.ndarray, causal: bool) -> float:
        rows = weights[:, 1:] if causal else weights  # a decoder's first query has one key
        with warnings.catch_warnings():  # rows of NaN (every key masked) are left out
            warnings.simplefilter("ignore", RuntimeWarning)
            peak = float(np.nanmean(np.nanmax(rows, axis=-1))) if rows.size else 1.0
        return 1.0 if np.isnan(peak) else peak

    @property
    def top(self) -> float:
        """A query's largest weight, on average: near 1 when the softmax saturates."""
        return self._peak(self.weights, self.causal)

    @property
    def changed(self) -> float:
        """The largest change of a weight from the model's (NaN counts as a change of 1)."""
        return float(np.nan_to_num(np.abs(self.weights - self.reference), nan=1.0).max())

    def effects(self) -> list[str]:
        """What the bug does to the numbers, in words (computed, never hard-coded), in the
        current language."""
        out = []
        sums = self.row_sums
        if np.isnan(sums).any():
            out.append(_("some rows are NaN: every key of those queries was masked"))
        elif np.abs(sums - 1).max() > 1e-3:
            out.append(_("rows no longer sum to 1: from {low} to {high}",
                         low=format(np.nanmin(sums), ".2f"),
                         high=format(np.nanmax(sums), ".2f")))  # fmt: skip
        if self.causal and self.future > 1e-6:
            out.append(_("the future leaks: up to {share} of a query's weight lies on later "
                         "tokens", share=format(self.future, ".2f")))  # fmt: skip
        top, model_top = self.top, self._peak(self.reference, self.causal)
        if top > model_top + 0.05:
            out.append(_("the weights saturate: a query's largest weight is {top} on average "
                         "(the model's {model})", top=format(top, ".2f"),
                         model=format(model_top, ".2f")))  # fmt: skip
        if not out:
            out.append(_("the weights change by up to {change}", change=format(self.changed, ".2f"))
                       if self.changed > 1e-4
                       else _("this layer's attention does not change"))  # fmt: skip
        return out


class _Enough(Exception):
    """Raised inside a pass once the layer asked for has been recorded: nothing after it
    (the later layers, the unembedding) changes that layer's attention."""


def _recording(attend: Callable, store: list[Tensor], upto: int | None) -> Callable:
    def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
        out, weights = attend(q, k, v, mask)
        store.append(weights)
        if upto is not None and len(store) > upto:
            raise _Enough
        return out, weights

    return attention


def attention_with(mistake: Mistake | None, ids: Tensor, model: str,
                   upto: int | None = None) -> list[np.ndarray]:  # fmt: skip
    """Every layer's attention [H, T, T] of the shipped `model` on `ids`, with `mistake`
    (None: the reference) swapped in; with `upto`, the layers up to that one only (the pass
    stops there: 5-6x faster for the first layer of the clm)."""
    store: list[Tensor] = []
    swap = {} if mistake is None else {mistake.exercise: mistake.fn}
    inner = swap.get("attention", solutions.attention)
    swap["attention"] = _recording(inner, store, upto)
    with torch.no_grad(), contextlib.suppress(_Enough):
        if shipped(model).causal:
            assemble("generate", swap)(ids, shared(model), 1)  # one step: one pass
        else:
            assemble("encoder", swap)(ids, shared(model))
    return [w.numpy() for w in store]


def spot_the_bug(
    text: str, model: str = "clm", layer: int = 0, mistakes: Sequence[str] = SPOT
) -> list[Spot]:
    """Each named mistake run on the shipped `model` ("clm" or "mlm") with `text`: its
    attention at `layer` beside the model's. The mask's mistakes show on the clm only."""
    m = shipped(model)
    if not 0 <= layer < m.cfg.n_layers:
        raise IndexError(_("{name} has layers 0..{last}, not {layer}", name=model,
                           last=m.cfg.n_layers - 1, layer=layer))
    enc = m.encode(text)
    ids = torch.tensor(enc.ids)
    reference = attention_with(None, ids, model, layer)[layer]
    return [
        Spot(MISTAKES[name], enc.tokens, layer,
             attention_with(MISTAKES[name], ids, model, layer)[layer], reference, m.causal)
        for name in mistakes
    ]  # fmt: skip
