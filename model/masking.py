"""BERT's masking (slide 44), written once, in plain numpy: training draws it for a batch
(training/train.py) and the Masked page for one sentence (analysis/training.py).

Of the tokens that may be chosen, 15% (at least one per sentence) are chosen to be
predicted; each chosen token becomes [MASK] with probability 0.8, a random ordinary token
with 0.1, and stays as it is with 0.1. The loss counts only the chosen positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MASK_SHARE = 0.15  # of the tokens, chosen to be predicted
AS_MASK, AS_RANDOM = 0.8, 0.1  # of those: [MASK], a random token; the rest stay unchanged
KEPT, MASKED, RANDOM, UNCHANGED = 0, 1, 2, 3  # what happened at a position (`Masking.how`)
HOW = {MASKED: "[MASK]", RANDOM: "random token", UNCHANGED: "unchanged"}


@dataclass(frozen=True)
class Masking:
    """A batch as BERT's training sees it."""

    inputs: np.ndarray  # (B, T) what the model reads
    chosen: np.ndarray  # (B, T) bool: the positions it must predict (the original token)
    how: np.ndarray  # (B, T) KEPT where not chosen, else MASKED, RANDOM or UNCHANGED


def bert_masking(
    ids: np.ndarray,
    maskable: np.ndarray,
    mask_id: int,
    ordinary: np.ndarray,
    rng: np.random.Generator,
) -> Masking:
    """Draw BERT's masking for `ids` (B, T): round(15%) of each row's `maskable` (B, T bool)
    positions, at least one where a row has any; `ordinary` are the ids a random token is
    drawn from (the vocabulary without its special tokens)."""
    ids, maskable = np.atleast_2d(ids), np.atleast_2d(maskable)
    n = maskable.sum(axis=1)
    k = np.where(n > 0, np.maximum(1, np.rint(MASK_SHARE * n)), 0)  # chosen per row
    noise = np.where(maskable, rng.random(ids.shape), np.inf)  # a random order of each row
    rank = noise.argsort(axis=1).argsort(axis=1)
    chosen = rank < k[:, None]
    roll = rng.random(ids.shape)
    how = np.select(
        [~chosen, roll < AS_MASK, roll < AS_MASK + AS_RANDOM], [KEPT, MASKED, RANDOM], UNCHANGED
    )
    random_ids = np.asarray(ordinary)[rng.integers(len(ordinary), size=ids.shape)]
    inputs = np.where(how == MASKED, mask_id, np.where(how == RANDOM, random_ids, ids))
    return Masking(inputs.astype(ids.dtype), chosen, how)
