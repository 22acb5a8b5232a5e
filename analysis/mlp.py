"""Inside the MLP (issue 57), in plain numpy: a layer's hidden neurons at one token
(`mlp_post`), the ones that fire most, what each pushes up and down through the
unembedding (its direct logit effect), and which layer's MLP, knocked out, costs a
prediction most.

Inputs are a Trace's arrays, `Model.mlp_weights(l)["w_out"]` [M, D], `Model.unembedding()`
[D, V] and the log-probabilities of batched passes ([runs, positions, V]).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np


def top_neurons(activations: np.ndarray, k: int = 5) -> list[tuple[int, float]]:
    """The k neurons of one token's mlp_post row [M] that fire most (the highest
    activations, ties by index), as (neuron, activation), highest first."""
    acts = np.asarray(activations, dtype=np.float64).reshape(-1)
    order = np.argsort(-acts, kind="stable")[: max(0, k)]
    return [(int(n), float(acts[n])) for n in order]


def direct_logit_effect(w_out: np.ndarray, unembedding: np.ndarray,
                        neurons: Sequence[int]) -> np.ndarray:  # fmt: skip
    """[len(neurons), V]: each neuron's output row through the unembedding, w_out[n] @ W_U:
    what one unit of its activation adds to each token's logit, straight to the output (the
    norms and later layers in between ignored)."""
    rows = np.asarray(w_out, dtype=np.float64)[list(neurons)]
    return rows @ np.asarray(unembedding, dtype=np.float64)


@dataclass
class Pushes:
    """What one neuron's direct logit effect pushes: token ids with their logit change per
    unit of activation, most first."""

    up: list[tuple[int, float]]
    down: list[tuple[int, float]]


def pushes(effect: np.ndarray, k: int = 5, never: Iterable[int] = ()) -> Pushes:
    """The k tokens a direct logit effect [V] raises most and the k it lowers most, the
    tokens in `never` (specials) left out."""
    x = np.asarray(effect, dtype=np.float64).reshape(-1)
    keep = np.ones(x.shape[0], bool)
    keep[[i for i in never if 0 <= i < x.shape[0]]] = False
    ids = np.flatnonzero(keep)
    order = ids[np.argsort(-x[ids], kind="stable")]
    up = [(int(i), float(x[i])) for i in order[:k]]
    down = [(int(i), float(x[i])) for i in order[::-1][:k]]
    return Pushes(up, down)


def mlp_effects(log_probs: np.ndarray, tokens: Sequence[int]) -> tuple[np.ndarray, float]:
    """Each layer's MLP knocked out alone: the change in the summed log-probability of
    tokens[p] at position p ([L] values), and the clean score. `log_probs` [1 + L, P, V]:
    the clean run first, then layer 0's MLP out, layer 1's, ..."""
    picked = np.asarray(log_probs)[:, np.arange(len(tokens)), np.asarray(tokens)].sum(axis=1)
    return picked[1:] - picked[0], float(picked[0])


def most_harmful(effects: np.ndarray) -> int:
    """The layer whose MLP, knocked out, lowers the score most (the first, on a tie)."""
    return int(np.argmin(np.asarray(effects, dtype=np.float64)))
