"""How the two language models learn from a sentence (plain numpy): GPT's targets are the
inputs shifted by one, at every position at once; BERT hides 15% of the tokens, 80% behind
[MASK], 10% behind a random token, 10% left as they are (drawn by model.masking, the one
definition training uses too)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from analysis.tokens import prediction_probs
from model.masking import AS_MASK, AS_RANDOM, HOW, MASK_SHARE, bert_masking

__all__ = ["AS_MASK", "AS_RANDOM", "MASK_SHARE", "MaskDraw", "ShiftedTargets", "draw_masking",
           "shifted_targets"]  # fmt: skip


@dataclass(frozen=True)
class ShiftedTargets:
    """A decoder's training view of one sentence: at position i it reads inputs[0..i] and
    must predict targets[i] = the token at i + 1."""

    inputs: list[str]
    targets: list[str]
    predicted: list[str]  # the model's most likely next token at each position
    p_target: np.ndarray  # [T-1] the probability it gives the true next token
    loss: float  # the mean cross-entropy over the positions: what training lowers

    @property
    def hits(self) -> int:
        """Positions where the model's first guess is the true next token."""
        return sum(p == t for p, t in zip(self.predicted, self.targets, strict=True))


def shifted_targets(
    tokens: Sequence[str], logits: np.ndarray, vocab: Sequence[str], special_ids: Iterable[int]
) -> ShiftedTargets:
    """Inputs tokens[:-1], targets tokens[1:], and what the model predicts at each position
    from its logits [T, V] (special tokens left out, as the causal page ranks them)."""
    ids = {tok: i for i, tok in enumerate(vocab)}
    probs = prediction_probs(np.asarray(logits)[:-1], special_ids)
    targets = list(tokens[1:])
    target_ids = [ids.get(tok, -1) for tok in targets]
    p = np.array([probs[i, j] if j >= 0 else 0.0 for i, j in enumerate(target_ids)])
    predicted = [vocab[int(j)] for j in probs.argmax(axis=1)]
    loss = float(-np.log(np.clip(p, 1e-12, None)).mean()) if len(p) else 0.0
    return ShiftedTargets(list(tokens[:-1]), targets, predicted, p, loss)


@dataclass(frozen=True)
class MaskDraw:
    """One position BERT's training chose: what it held and what the model reads there."""

    position: int
    original: int  # the token id that must be predicted
    shown: int  # the id the model reads: [MASK], a random token, or the original
    how: str  # "[MASK]", "random token" or "unchanged"


def draw_masking(
    ids: Sequence[int], positions: Sequence[int], mask_id: int, vocab_size: int,
    special_ids: Iterable[int], seed: int,
) -> list[MaskDraw]:  # fmt: skip
    """BERT's masking drawn at random, as training draws it (model.masking): 15% of
    `positions` (at least one) are chosen; each becomes [MASK] with probability 0.8, a
    random non-special token with 0.1, or stays."""
    row = np.asarray(ids, dtype=np.int64)[None, :]
    maskable = np.zeros(row.shape, dtype=bool)
    maskable[0, list(positions)] = True
    specials = set(special_ids)
    ordinary = np.array([i for i in range(vocab_size) if i not in specials])
    drawn = bert_masking(row, maskable, mask_id, ordinary, np.random.default_rng(seed))
    return [MaskDraw(int(pos), int(row[0, pos]), int(drawn.inputs[0, pos]),
                     HOW[int(drawn.how[0, pos])])
            for pos in np.flatnonzero(drawn.chosen[0])]  # fmt: skip
