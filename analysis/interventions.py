"""The arithmetic of the experiments (issue 29), in plain numpy: what knocking each head out
did to a prediction, every layer's guess read by the logit lens, the share of a logit
difference that patching restores, and how attention and attribution agree.

Inputs are the log-probabilities the model's batched passes return ([runs, positions, V])
and the arrays of a Trace; outputs are arrays, numbers and small dataclasses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

Head = tuple[str, int, int]  # (stack, layer, head), as model.RunOptions keeps them


def single_heads(stacks: dict[str, tuple[int, int]], layers: Iterable[int] | None = None
                 ) -> list[Head]:  # fmt: skip
    """Every head of every stack ({"": (4, 4)}), layer by layer; `layers`: only those."""
    keep = None if layers is None else set(layers)
    return [(stack, layer, head) for stack, (n_layers, n_heads) in stacks.items()
            for layer in range(n_layers) if keep is None or layer in keep
            for head in range(n_heads)]  # fmt: skip


def score(log_probs: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """[runs]: the summed log-probability of tokens[p] at position p, for each run
    (log_probs [runs, P, V]; one position: the guess's log-probability)."""
    picked = log_probs[:, np.arange(len(tokens)), np.asarray(tokens)]  # [runs, P]
    return picked.sum(axis=1)


def effect_grid(heads: Sequence[Head], effects: np.ndarray,
                stacks: dict[str, tuple[int, int]]) -> tuple[np.ndarray, list[str]]:  # fmt: skip
    """The change each single head's knockout made, as a [rows, H] grid with one row per
    (stack, layer) ("layer 1", or "encoder layer 1"); NaN where not computed yet."""
    rows = [(stack, layer) for stack, (n, _) in stacks.items() for layer in range(n)]
    width = max(h for _, h in stacks.values())
    grid = np.full((len(rows), width), np.nan)
    index = {row: i for i, row in enumerate(rows)}
    for (stack, layer, head), value in zip(heads, effects, strict=True):
        grid[index[stack, layer], head] = value
    labels = [f"{stack + ' ' if stack else ''}layer {layer + 1}" for stack, layer in rows]
    return grid, labels


def head_name(head: Head) -> str:
    """"L2H3", or "cross L1H4" for an encoder-decoder's head."""
    stack, layer, h = head
    return f"{stack + ' ' if stack else ''}L{layer + 1}H{h + 1}"


def ranked_heads(
    heads: Sequence[Head], effects: np.ndarray, n: int = 3
) -> list[tuple[Head, float]]:
    """The n heads whose knockout lowered the score most, with their effect (most negative
    first)."""
    order = np.argsort(effects, kind="stable")[:n]
    return [(heads[i], float(effects[i])) for i in order]


# --- the logit lens ---------------------------------------------------------------------------


@dataclass
class LayerGuesses:
    """Every layer's guess at one position: the top tokens of each readout and the rank of
    the final guess in each (1 = first)."""

    top: list[list[tuple[int, float]]]  # per readout: (token id, probability), best first
    final: int  # the token id the last readout puts first
    ranks: np.ndarray  # [L + 1] its rank in each readout
    first_from: int  # the first readout from which it stays first (0 = the input stream)


def layer_guesses(lens: np.ndarray, never: Iterable[int] = (), k: int = 3) -> LayerGuesses:
    """The logit lens at one position ([L + 1, V] log-probabilities) read out: top-k per
    readout and the final guess's rank, with the tokens in `never` (specials) left out."""
    lp = np.asarray(lens, dtype=np.float64).copy()
    drop = [i for i in never if 0 <= i < lp.shape[1]]
    lp[:, drop] = -np.inf
    final = int(np.argmax(lp[-1]))
    ranks = 1 + (lp > lp[:, [final]]).sum(axis=1)
    first_from = len(ranks) - 1
    while first_from > 0 and ranks[first_from - 1] == 1:
        first_from -= 1
    top = [[(int(i), float(np.exp(row[i]))) for i in np.argsort(-row, kind="stable")[:k]]
           for row in lp]  # fmt: skip
    return LayerGuesses(top, final, ranks, first_from)


# --- activation patching ----------------------------------------------------------------------


def first_guess(lp: np.ndarray, never: Iterable[int] = ()) -> int:
    """The most likely token of [V] log-probabilities, the tokens in `never` left out."""
    x = np.asarray(lp, float).copy()
    x[[i for i in never if 0 <= i < x.shape[0]]] = -np.inf
    return int(np.argmax(x))


def two_guesses(lp_a: np.ndarray, lp_b: np.ndarray, never: Iterable[int] = ()
                ) -> tuple[int, int]:  # fmt: skip
    """The guess of A and the guess of B at one position ([V] log-probabilities each): each
    one's first guess; when both guess the same token, each one's most likely other token
    that it finds likelier than the other sentence does (the river's "shore", the cash's
    "atm")."""
    a, b = np.asarray(lp_a, float).copy(), np.asarray(lp_b, float).copy()
    drop = [i for i in never if 0 <= i < a.shape[0]]
    a[drop] = b[drop] = -np.inf
    ga, gb = int(np.argmax(a)), int(np.argmax(b))
    if ga != gb:
        return ga, gb

    def own(x: np.ndarray, y: np.ndarray) -> int:
        return next((int(i) for i in np.argsort(-x, kind="stable") if i != ga and x[i] > y[i]), ga)

    return own(a, b), own(b, a)


def restored(patched: np.ndarray, a: float, b: float) -> np.ndarray:
    """The share of the logit difference that patching restores: 0 where the patched run
    is B's, 1 where it is A's ((patched - b) / (a - b); NaN when A and B agree)."""
    gap = a - b
    if abs(gap) < 1e-9:
        return np.full_like(np.asarray(patched, float), np.nan)
    return (np.asarray(patched, float) - b) / gap


# --- attention beside attribution -------------------------------------------------------------


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share theirs), for Spearman's correlation."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x), dtype=float)
    for value in np.unique(x):
        same = x == value
        ranks[same] = ranks[same].mean()
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of two lists (NaN for fewer than 3 values or a constant)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(_ranks(x), _ranks(y))[0, 1])


def agreement(attention: np.ndarray, scores: np.ndarray, words: Sequence[int]) -> float:
    """How far one query's attention ([T]) and an attribution's sizes (|scores| [T]) rank
    the same words first: Spearman's correlation over `words`."""
    rows = list(words)
    return spearman(np.asarray(attention)[rows], np.abs(np.asarray(scores))[rows])
