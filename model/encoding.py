"""Positions and masks as plain numpy arrays: what the Transformer adds and masks, in the form
the app shows them. No torch here, so the figures and the analysis can use the very same
definitions as the model (model/transformer.py turns them into tensors).
"""

from __future__ import annotations

import numpy as np


def sinusoidal_encoding(n_positions: int, d_model: int, per_position: int = 1) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(pos / 10000^(2i/D)).

    At positions 0..n_positions-1, or, with `per_position` k > 1, also in between: k rows
    per position ((n_positions - 1) * k + 1 rows, row r at position r / k), to draw the
    continuous waves the integer positions sample.
    """
    steps = max(n_positions - 1, 0) * per_position + 1 if n_positions else 0
    pos = (np.arange(steps, dtype=np.float64) / per_position)[:, None]  # (T, 1)
    n_positions = steps
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # (1, D/2)
    angle = pos / np.power(10000.0, two_i / d_model)  # (T, D/2)
    pe = np.zeros((n_positions, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe.astype(np.float32)


def binary_encoding(n_positions: int, n_bits: int | None = None) -> np.ndarray:
    """Each position written in binary: column j is bit j (j = 0 flips fastest)."""
    n_bits = n_bits or max(1, int(n_positions - 1).bit_length())
    pos = np.arange(n_positions)[:, None]  # (T, 1)
    return ((pos >> np.arange(n_bits)[None, :]) & 1).astype(np.float32)  # (T, bits)


def causal_mask(t: int) -> np.ndarray:
    """[T, T] bool: query i may look at keys 0..i only (True on and below the diagonal)."""
    return np.tri(t, dtype=bool)


def additive_mask(allowed: np.ndarray) -> np.ndarray:
    """The mask M added to the scores: 0 where a query may look at a key, -inf where not."""
    return np.where(allowed, 0.0, -np.inf)
