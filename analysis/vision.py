"""A Vision Transformer's numbers, as pictures need them (plain numpy)."""

from __future__ import annotations

import numpy as np


def attention_rollout(stack: np.ndarray) -> np.ndarray:
    """[T, T] how much each token's final vector draws on each input token, through every
    layer: the heads averaged, the residual connection counted as attention to itself
    (A + I, rows renormalised), the layers multiplied (Abnar and Zuidema's rollout).
    stack: [L, H, T, T] every layer's attention."""
    stack = np.asarray(stack, dtype=np.float64)
    n = stack.shape[-1]
    rollout = np.eye(n)
    for layer in stack:
        a = layer.mean(axis=0) + np.eye(n)
        rollout = (a / a.sum(axis=-1, keepdims=True)) @ rollout
    return rollout


def as_grid(values: np.ndarray, grid: int) -> np.ndarray:
    """[grid, grid]: one number per patch (in reading order) laid out as the image's grid."""
    values = np.asarray(values, dtype=np.float64)
    if values.size != grid * grid:
        raise ValueError(f"{values.size} values for a {grid}x{grid} grid of patches")
    return values.reshape(grid, grid)


def patches(image: np.ndarray, patch: int) -> np.ndarray:
    """[N, patch, patch]: the image cut into square patches, in reading order."""
    h, w = image.shape
    g_r, g_c = h // patch, w // patch
    tiles = image[: g_r * patch, : g_c * patch].reshape(g_r, patch, g_c, patch)
    return tiles.transpose(0, 2, 1, 3).reshape(g_r * g_c, patch, patch)


def layout_similarity(cosine: np.ndarray, grid: int) -> tuple[float, float]:
    """Does a [grid², grid²] similarity between patch positions follow the image's layout?
    The mean over pairs of neighbouring positions (one step apart) and over pairs three or
    more steps apart (Manhattan distance on the grid)."""
    rows, cols = np.divmod(np.arange(grid * grid), grid)
    steps = np.abs(rows[:, None] - rows[None, :]) + np.abs(cols[:, None] - cols[None, :])
    cosine = np.asarray(cosine, dtype=np.float64)
    return float(cosine[steps == 1].mean()), float(cosine[steps >= 3].mean())
