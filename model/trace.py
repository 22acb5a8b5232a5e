"""The Trace: what one forward pass did, as numpy arrays, for one input.

This is the contract between the models and the app (docs/ARCHITECTURE.md). T tokens (or
patches), D model width, H heads of Dh dimensions, S keys, V vocabulary size. Activations
carry TransformerLens's names (resid_pre, attn_out, resid_mid, mlp_out, resid_post, q, k, v,
z). Only numpy lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from model.options import CLEAN, RunOptions


@dataclass
class LayerTrace:
    """One layer for one input: its attention sublayer and the residual stream around it.

    For a self-attention layer S = T. In `Trace.cross_layers` (decoder -> encoder) the queries
    come from the decoder and S is the number of source tokens; there resid_pre is the
    stream entering cross-attention (the self-attention layer's resid_mid) and resid_mid the
    stream after it; mlp_post, mlp_out and resid_post are the layer's, as in `Trace.layers`.

    The MLP: mlp_out = mlp_post @ W_out + b_out, with `Model.mlp_weights(layer)`; M is its
    hidden width (d_mlp). A knocked-out MLP (`ablate_mlp`) keeps its mlp_post (the neurons
    fired) and adds mlp_out = 0.
    """

    resid_pre: np.ndarray  # [T, D] the residual stream entering the sublayer
    attn_input: np.ndarray  # [T, D] X, what Q was computed from (= resid_pre in post-norm)
    q: np.ndarray | None  # [H, T, Dh] queries (None where a model hides them)
    k: np.ndarray | None  # [H, S, Dh] keys
    v: np.ndarray | None  # [H, S, Dh] values
    scores: np.ndarray | None  # [H, T, S] Q K^T / sqrt(Dh), -inf where masked
    attention: np.ndarray  # [H, T, S] softmax of the scores; every row sums to 1
    z: np.ndarray | None  # [H, T, Dh] each head's output: attention @ V
    attn_out: np.ndarray | None  # [T, D] heads concatenated, then W_O: what attention adds
    resid_mid: np.ndarray | None  # [T, D] after attention's add & norm
    mlp_out: np.ndarray | None  # [T, D] what the MLP adds
    resid_post: np.ndarray  # [T, D] the residual stream leaving the layer
    mlp_post: np.ndarray | None = None  # [T, M] the MLP's hidden neurons after the
    # nonlinearity (GELU; a gated MLP's input of its down projection); None in traces saved
    # before it was recorded

    @property
    def n_heads(self) -> int:
        return self.attention.shape[0]


@dataclass
class Trace:
    """Tokens, embeddings, positions, every layer and head, and the logits.

    For a Vision Transformer the tokens are "[CLS]" and the image's patches ("patch 0,0"
    is the top-left one) and `image` holds the input image.

    A recurrent model (model/lstm.py) has no attention (`layers` and `cross_layers` are
    empty); `states` holds its hidden state after each step (on a translator's trace the
    decoder's, on its `.encoder` the encoder's) and `context` the one vector the decoder
    starts from: the encoder's final hidden state."""

    tokens: list[str]  # what a person reads: "[BOS]", "cat", "##s", "␣Paris", "<0xEB>", "[MASK]"
    ids: np.ndarray  # [T] token ids
    offsets: list[tuple[int, int]]  # [T] character span of each token in the text
    embeddings: np.ndarray  # [T, D] token embeddings, before positions are added
    positional: np.ndarray  # [T, D] what was added for positions (zeros when off)
    layers: list[LayerTrace]  # self-attention layers (the decoder's, for translation)
    logits: np.ndarray  # [T, V] ([T, 0] for an encoder without an output head)
    causal: bool  # True for a decoder: attention is zero above the diagonal
    truncated: bool  # True when the text was longer than the context and was cut
    n_input_tokens: int  # tokens the text had before truncation
    options: RunOptions = CLEAN  # how the pass ran: positions, heads and MLPs knocked out, a
    # patch
    device: str = "cpu"  # where the pass ran
    seconds: float = 0.0  # wall time of the forward pass
    cross_layers: list[LayerTrace] = field(default_factory=list)  # decoder -> encoder
    encoder: Trace | None = None  # the encoder's own trace, for an encoder-decoder
    states: np.ndarray | None = None  # [T, D] a recurrent model's hidden state after each step
    context: np.ndarray | None = None  # [D] the context vector (the encoder's final hidden state)
    image: np.ndarray | None = None  # the input image, as the model read it ([8, 8], 0-16 scale)
    raw_tokens: list[str] = field(default_factory=list)  # [T] the tokenizer's own: "ĠParis"
    fragment_of: list[str] = field(default_factory=list)  # [T] the character a token holds
    # only part of ("나" for "<0xEB>"), else ""; both default to the plain case

    def __post_init__(self) -> None:
        if not self.raw_tokens:
            self.raw_tokens = list(self.tokens)
        if not self.fragment_of:
            self.fragment_of = [""] * len(self.tokens)

    @property
    def positions(self) -> bool:
        """False when positional encodings were switched off."""
        return self.options.positions

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def n_heads(self) -> int:
        return self.layers[0].n_heads if self.layers else 0

    def residual_stream(self) -> np.ndarray:
        """[L + 1, T, D]: the input to layer 1 (resid_pre), then each layer's resid_post."""
        return np.stack([self.layers[0].resid_pre] + [layer.resid_post for layer in self.layers])

    def attention_stack(self) -> np.ndarray:
        """[L, H, T, S]: every layer's and head's attention weights."""
        return np.stack([layer.attention for layer in self.layers])


# --- Saved traces (numpy .npz, no pickle) ---------------------------------------------------

_ARRAYS = ("ids", "embeddings", "positional", "logits", "states", "context", "image")
_TOKENS = ("tokens", "raw_tokens", "fragment_of")  # strings, one per token
_FLAGS = ("causal", "truncated", "n_input_tokens", "device", "seconds")


EXTRA = "extra_"  # the prefix of arrays stored beside a trace (`save_npz(extras=...)`)


def save_npz(
    trace: Trace, path: str | Path, extras: dict[str, np.ndarray] | None = None, **meta: str
) -> None:
    """Write `trace` (string metadata, and `extras`: arrays computed from the same model) to
    a compressed .npz that `load_npz` reads back without pickle. An encoder-decoder's trace
    (with `.encoder`) is not supported."""
    if trace.encoder is not None or trace.cross_layers:
        raise ValueError("save_npz: traces with an encoder or cross-attention are not supported")
    if not trace.options.clean:
        raise ValueError("save_npz: only a run without ablation or patching is saved")
    out: dict[str, np.ndarray] = {f"meta_{k}": np.asarray(v) for k, v in meta.items()}
    out.update({f"{EXTRA}{k}": np.asarray(v) for k, v in (extras or {}).items()})
    for name in _TOKENS:
        out[name] = np.asarray(getattr(trace, name), dtype=str)
    out["offsets"] = np.asarray(trace.offsets, dtype=np.int64).reshape(-1, 2)
    for name in _ARRAYS:
        if getattr(trace, name) is not None:
            out[name] = np.asarray(getattr(trace, name))
    for name in _FLAGS:
        out[name] = np.asarray(getattr(trace, name))
    out["positions"] = np.asarray(trace.positions)
    out["n_layers"] = np.asarray(len(trace.layers))
    for i, layer in enumerate(trace.layers):
        for name, value in vars(layer).items():
            if value is not None:
                out[f"layer{i}_{name}"] = np.asarray(value)
    np.savez_compressed(path, **out)


def load_npz(path: str | Path) -> tuple[Trace, dict[str, str]]:
    """The trace `save_npz` wrote, and its metadata (`load_extras` reads its extras)."""
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files if not k.startswith(EXTRA)}
    layers = [
        LayerTrace(**{name: data.get(f"layer{i}_{name}") for name in LayerTrace.__annotations__})
        for i in range(int(data["n_layers"]))
    ]
    flags = {name: data[name].item() for name in _FLAGS}
    trace = Trace(
        **{name: [str(t) for t in data[name]] for name in _TOKENS if name in data},
        offsets=[(int(a), int(b)) for a, b in data["offsets"]],
        layers=layers,
        **{name: data.get(name) for name in _ARRAYS},
        **flags,
        options=RunOptions(positions=bool(data["positions"].item())),
    )
    meta = {k.removeprefix("meta_"): str(v) for k, v in data.items() if k.startswith("meta_")}
    return trace, meta


def load_extras(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays `save_npz` stored beside the trace (`extras`), by name."""
    with np.load(path, allow_pickle=False) as f:
        return {k.removeprefix(EXTRA): f[k] for k in f.files if k.startswith(EXTRA)}
