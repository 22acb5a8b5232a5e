"""The Trace: what one forward pass did, as numpy arrays, for one sentence.

This is the contract between the model and the app (see DESIGN.md). T tokens, D model
width, H heads of Dh dimensions, V vocabulary size. Only numpy lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class LayerTrace:
    """One layer's attention and output for one sentence (S = number of keys)."""

    input: np.ndarray  # [T, D] the residual stream entering the layer (resid_pre)
    attn_input: np.ndarray  # [T, D] X, what Q, K, V were computed from (= input in post-norm)
    q: np.ndarray | None  # [H, T, Dh] queries (None where an adapter hides them)
    k: np.ndarray | None  # [H, S, Dh] keys
    v: np.ndarray | None  # [H, S, Dh] values
    scores: np.ndarray | None  # [H, T, S] Q K^T / sqrt(Dh), -inf where masked
    attention: np.ndarray  # [H, T, S] softmax of the scores; every row sums to 1
    z: np.ndarray | None  # [H, T, Dh] each head's output: attention @ V
    attn_output: np.ndarray | None  # [T, D] heads concatenated, then W_O
    output: np.ndarray  # [T, D] the residual stream after the layer (resid_post)

    @property
    def n_heads(self) -> int:
        return self.attention.shape[0]


@dataclass
class Trace:
    """Tokens, embeddings, positions, every layer and head, and the logits."""

    tokens: list[str]  # what a person should see: "[BOS]", "cat", "##s", "[MASK]"
    ids: np.ndarray  # [T] token ids
    offsets: list[tuple[int, int]]  # [T] character span of each token in the text
    embeddings: np.ndarray  # [T, D] token embeddings, before positions are added
    positional: np.ndarray  # [T, D] what was added for positions (zeros when off)
    layers: list[LayerTrace]  # self-attention layers (the decoder's, for translation)
    logits: np.ndarray  # [T, V]
    causal: bool  # True for a decoder: attention is zero above the diagonal
    truncated: bool  # True when the text was longer than the context and was cut
    n_input_tokens: int  # tokens the text had before truncation
    positions: bool = True  # False when positional encodings were switched off
    device: str = "cpu"  # where the pass ran
    seconds: float = 0.0  # wall time of the forward pass
    cross_layers: list[LayerTrace] = field(default_factory=list)  # decoder -> encoder
    encoder: Trace | None = None  # the encoder's own trace, for an encoder-decoder

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def n_heads(self) -> int:
        return self.layers[0].n_heads if self.layers else 0

    def residual_stream(self) -> np.ndarray:
        """[L + 1, T, D]: the input to layer 1, then each layer's output."""
        return np.stack([self.layers[0].input] + [layer.output for layer in self.layers])

    def attention_stack(self) -> np.ndarray:
        """[L, H, T, T]: every layer's and head's attention weights."""
        return np.stack([layer.attention for layer in self.layers])
