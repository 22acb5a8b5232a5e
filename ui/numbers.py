"""The arithmetic the pages show, in plain numpy (no Streamlit): similarities, the
step-by-step attention of one head, and which tokens to mask by default."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model import Trace
from viz import pca_2d

SPECIALS = {"[PAD]", "[UNK]", "[BOS]", "[EOS]", "[MASK]"}


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
        if tok in SPECIALS or tok in out or tok not in b.tokens:
            continue
        j = b.tokens.index(tok)
        pair = np.stack([a.layers[-1].output[i], b.layers[-1].output[j]])
        out[tok] = float(cosine_matrix(pair)[0, 1])
    return out


def order_table(with_positions: Sequence[Trace], without: Sequence[Trace]) -> list[dict]:
    """Rows for the "word order" table: each word shared by sentences A and B, with the
    cosine of its last-layer vectors across the two, with and without positions."""
    on, off = shared_word_cosines(*with_positions), shared_word_cosines(*without)
    return [
        {
            "token": token,
            "cosine with positions": round(on[token], 4),
            "cosine without positions": round(off[token], 4),
        }
        for token in on
    ]


def neighbour_map(
    trace: Trace, pos: int, near: list[tuple[str, float]], near_vectors: np.ndarray
) -> tuple[np.ndarray, list[str], list[str]]:
    """Points, labels and groups for viz.embedding_map: the sentence's words, the selected
    token and its nearest vocabulary tokens, projected together onto 2-D by PCA."""
    words = [i for i in word_positions(trace.tokens) if i != pos]
    vectors = np.vstack([trace.embeddings[words], trace.embeddings[[pos]], near_vectors])
    token = trace.tokens[pos]
    labels = [trace.tokens[i] for i in words] + [token] + [w for w, _ in near]
    groups = ["sentence"] * len(words) + [f"selected: {token}"]
    groups += [f"nearest to {token} in the vocabulary"] * len(near)
    return pca_2d(vectors), labels, groups


def stage_names(n_layers: int) -> list[str]:
    """ "token embedding + position" (the input to layer 1), then "after layer 1", ..."""
    return ["input (embedding + position)"] + [f"after layer {i}" for i in range(1, n_layers + 1)]


def word_positions(tokens: Sequence[str]) -> list[int]:
    """Positions of the tokens that are not special ([BOS], [EOS], ...)."""
    return [i for i, tok in enumerate(tokens) if tok not in SPECIALS]


def default_token(tokens: Sequence[str], prefer: Sequence[str] = ("bank",)) -> int:
    """The token a page starts on: a preferred word ("bank"), else the last word."""
    words = word_positions(tokens)
    for word in prefer:
        hits = [i for i in words if tokens[i] == word]
        if hits:
            return hits[-1]
    alpha = [i for i in words if any(ch.isalpha() for ch in tokens[i])]
    return (alpha or words or [0])[-1]


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax that treats -inf as weight 0."""
    top = np.max(np.where(np.isfinite(scores), scores, -np.inf), axis=-1, keepdims=True)
    e = np.exp(scores - top)
    return e / e.sum(axis=-1, keepdims=True)


def prediction_probs(logits: np.ndarray, special_ids) -> np.ndarray:
    """Softmax over the vocabulary [N, V] with the special tokens left out, as the ranked
    predictions of the model (fill_mask) compute it."""
    z = np.array(logits, dtype=np.float64)
    z[:, list(special_ids)] = -np.inf
    return softmax_rows(z)


def sampling(
    temperature: float, top_k: int, top_p: float
) -> tuple[float, int | None, float | None]:
    """The sliders' values as next_distribution's arguments: top-k 0 and top-p 1 mean off."""
    return (
        round(float(temperature), 4),
        int(top_k) if top_k and top_k > 0 else None,
        round(float(top_p), 4) if top_p is not None and top_p < 1 else None,
    )


def sample(probs: np.ndarray, seed: int, step: int) -> int:
    """Draw one token id from `probs`; the same (seed, step) always draws the same way, so
    the same seed and settings give the same text, one click at a time."""
    rng = np.random.default_rng([int(seed), int(step)])
    p = np.asarray(probs, dtype=np.float64)
    return int(rng.choice(len(p), p=p / p.sum()))


@dataclass
class AttentionSteps:
    """One head's attention, recomputed step by step from the layer's input X and the
    learned weights, next to what the model itself computed."""

    x: np.ndarray  # [T, D] X, the layer's input
    w_q: np.ndarray  # [D, Dh] this head's W_Q (x @ W + b)
    w_k: np.ndarray
    w_v: np.ndarray
    q: np.ndarray  # [T, Dh] Q = X W_Q + b_Q
    k: np.ndarray
    v: np.ndarray
    qk: np.ndarray  # [T, T] Q K^T
    scaled: np.ndarray  # [T, T] Q K^T / sqrt(Dh)
    mask: np.ndarray  # [T, T] 0 where allowed, -inf where masked
    masked: np.ndarray  # [T, T] scaled + mask
    weights: np.ndarray  # [T, T] softmax, rows sum to 1
    z: np.ndarray  # [T, Dh] weights @ V, this head's output
    concat: np.ndarray  # [T, D] every head's Z side by side
    w_o: np.ndarray  # [D, D]
    output: np.ndarray  # [T, D] concat @ W_O + b_O
    d_head: int
    max_error: float  # largest |recomputed - model's own| over Q, K, V, weights, Z, output


def attention_steps(trace: Trace, weights: dict[str, np.ndarray], layer: int, head: int):
    """Recompute head `head` of layer `layer` from X and W (see AttentionSteps)."""
    lay = trace.layers[layer]
    x = lay.attn_input.astype(np.float64)
    w = {name: np.asarray(weights[name], dtype=np.float64) for name in weights}
    q = x @ w["w_q"][head] + w["b_q"][head]
    k = x @ w["w_k"][head] + w["b_k"][head]
    v = x @ w["w_v"][head] + w["b_v"][head]
    d_head = q.shape[-1]
    qk = q @ k.T
    scaled = qk / np.sqrt(d_head)
    n = x.shape[0]
    mask = np.zeros((n, n))
    if trace.causal:
        mask[np.triu_indices(n, 1)] = -np.inf
    masked = scaled + mask
    attn = softmax_rows(masked)
    z = attn @ v
    heads = lay.z if lay.z is not None else None
    concat = np.concatenate(list(heads), axis=-1).astype(np.float64) if heads is not None else z
    output = concat @ w["w_o"] + w["b_o"]
    errors = [
        np.abs(q - lay.q[head]).max(),
        np.abs(k - lay.k[head]).max(),
        np.abs(v - lay.v[head]).max(),
        np.abs(attn - lay.attention[head]).max(),
        np.abs(z - lay.z[head]).max(),
    ]
    if lay.attn_output is not None:
        errors.append(np.abs(output - lay.attn_output).max())
    return AttentionSteps(
        x,
        w["w_q"][head],
        w["w_k"][head],
        w["w_v"][head],
        q,
        k,
        v,
        qk,
        scaled,
        mask,
        masked,
        attn,
        z,
        concat,
        w["w_o"],
        output,
        d_head,
        float(max(errors)),
    )
