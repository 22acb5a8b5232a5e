"""Similarities between vectors, and a 2-D picture of them (plain numpy)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis.tokens import word_positions
from i18n import _
from model.tokenizer import SPECIAL_TOKENS
from model.trace import Trace


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """[N, N] cosine similarity between the rows of x [N, D]."""
    x = np.asarray(x, dtype=np.float64)
    unit = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-8)
    return unit @ unit.T


def cosine_to_first(vectors: np.ndarray) -> np.ndarray:
    """[S] cosine of each row of `vectors` [S, D] with its first row."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-8)
    return unit @ unit[0]


def shared_word_cosines(a: Trace, b: Trace) -> dict[str, float]:
    """For each word in both sentences (first occurrence): the cosine between its vectors
    after the last layer in `a` and in `b`."""
    out: dict[str, float] = {}
    for i, tok in enumerate(a.tokens):
        if tok in SPECIAL_TOKENS or tok in out or tok not in b.tokens:
            continue
        j = b.tokens.index(tok)
        pair = np.stack([a.layers[-1].resid_post[i], b.layers[-1].resid_post[j]])
        out[tok] = float(cosine_matrix(pair)[0, 1])
    return out


def shared_words(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int]]:
    """Each word (not a special token) in both token lists, once, in `a`'s order, with its
    first position in `a` and in `b`."""
    out: dict[str, tuple[str, int, int]] = {}
    for i, tok in enumerate(a):
        if tok not in SPECIAL_TOKENS and tok not in out and tok in b:
            out[tok] = (tok, i, list(b).index(tok))
    return list(out.values())


def cosines_by_stage(a: Trace, b: Trace, i: int, j: int) -> np.ndarray:
    """[L+1] the cosine between token i of `a` and token j of `b`, at the input (embedding
    + position) and after each layer: how far context has pulled the two apart."""
    va, vb = a.residual_stream()[:, i, :], b.residual_stream()[:, j, :]
    ua = va / np.maximum(np.linalg.norm(va, axis=-1, keepdims=True), 1e-8)
    ub = vb / np.maximum(np.linalg.norm(vb, axis=-1, keepdims=True), 1e-8)
    return (ua * ub).sum(axis=-1)


def word_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int]]:
    """Each word of `a` (not a special token) with the same occurrence of it in `b`: the
    k-th "the" of A with the k-th "the" of B, as (word, position in A, position in B), in
    A's order. Words keyed by position, so a repeated word gets a pair per occurrence."""
    seen: dict[str, int] = {}
    pairs = []
    for i, tok in enumerate(a):
        if tok in SPECIAL_TOKENS:
            continue
        k = seen[tok] = seen.get(tok, -1) + 1
        in_b = [j for j, other in enumerate(b) if other == tok]
        if k < len(in_b):
            pairs.append((tok, i, in_b[k]))
    return pairs


def order_table(with_positions: Sequence[Trace], without: Sequence[Trace]) -> list[dict]:
    """Rows for the "word order" table: each word of sentence A paired with the same
    occurrence in sentence B (`word_pairs`: both "the" of "the dog bit the man"), with the
    cosine of its last-layer vectors across the two, with and without positions."""

    def cosine(pair: Sequence[Trace], i: int, j: int) -> float:
        a, b = pair
        vectors = np.stack([a.layers[-1].resid_post[i], b.layers[-1].resid_post[j]])
        return round(float(cosine_matrix(vectors)[0, 1]), 4)

    return [
        {
            "word": word,
            "position in A": i,
            "position in B": j,
            "cosine with positions": cosine(with_positions, i, j),
            "cosine without positions": cosine(without, i, j),
        }
        for word, i, j in word_pairs(with_positions[0].tokens, with_positions[1].tokens)
    ]


def pca_2d(X: np.ndarray) -> np.ndarray:
    """Project the rows of X [N, D] onto their first two principal components -> [N, 2].

    Plain numpy: centre the rows, take the SVD, keep two directions. Each direction's sign
    is fixed so that its largest component is positive, so the picture does not flip from
    run to run. Missing directions (N < 3 or D < 2) come back as zeros.
    """
    data = np.asarray(X, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError(f"X must be 2-D [N, D], not {data.shape}")
    n = data.shape[0]
    points = np.zeros((n, 2))
    if n == 0:
        return points
    centred = data - data.mean(axis=0)
    *_us, vt = np.linalg.svd(centred, full_matrices=False)
    for k in range(min(2, vt.shape[0])):
        direction = vt[k]
        if direction[np.argmax(np.abs(direction))] < 0:
            direction = -direction
        points[:, k] = centred @ direction
    return points


def neighbour_map(
    trace: Trace, pos: int, near: list[tuple[str, float]], near_vectors: np.ndarray
) -> tuple[np.ndarray, list[str], list[str]]:
    """Points, labels and groups for viz.embedding_map: the sentence's words, the selected
    token and its nearest vocabulary tokens, projected together onto 2-D by PCA."""
    words = [i for i in word_positions(trace.tokens) if i != pos]
    vectors = np.vstack([trace.embeddings[words], trace.embeddings[[pos]], near_vectors])
    token = trace.tokens[pos]
    labels = [trace.tokens[i] for i in words] + [token] + [w for w, _c in near]
    groups = [_("sentence")] * len(words) + [_("selected: {token}", token=token)]
    groups += [_("nearest to {token} in the vocabulary", token=token)] * len(near)
    return pca_2d(vectors), labels, groups
