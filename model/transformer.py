"""The Transformer from scratch, in the order of the lecture.

1. token embedding            -> `Embedding` (nn.Embedding)
2. positional encoding        -> `sinusoidal_encoding` (model/encoding.py), learned positions
3. scaled dot-product attention -> `attention(q, k, v, mask)`
4. multi-head attention       -> `MultiHeadAttention` (W_Q, W_K, W_V per head, then W_O)
5. the layer                  -> `Layer`: attention, add & norm, MLP, add & norm
6. stacks                     -> `Stack`: an encoder (bidirectional) or a decoder (causal)
7. the models                 -> `LanguageModel` (encoder-only BERT-style or decoder-only
                                 GPT-style) and `EncoderDecoder` (cross-attention)

Every forward pass can `record` what happened inside (q, k, v, scores, attention, outputs,
the MLP's hidden neurons) as `LayerRecord`s. Recording only keeps references to tensors
the pass computes anyway, so the fast path and the traced path run exactly the same code.
A pass may also be given `Edits` (model.RunOptions as tensors, model/interventions.py):
heads knocked out where the heads are joined before W_O, MLPs knocked out where their
output joins the stream, single neurons knocked out before W_out, activations patched into
the stream. No module keeps state
between calls: one model may serve many browser tabs at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.encoding import causal_mask, sinusoidal_encoding


@dataclass
class Config:
    """Hyper-parameters; stored inside every checkpoint so loading needs nothing else."""

    kind: str = "encoder"  # "encoder" (BERT-style) | "decoder" (GPT-style) | "encoder-decoder"
    vocab_size: int = 4096  # V: size of the tokenizer's vocabulary
    d_model: int = 128  # D: width of every token vector (the residual stream)
    n_heads: int = 4  # H: attention heads per layer; each head has Dh = D / H dimensions
    n_layers: int = 4  # layers in the stack (the encoder's, for an encoder-decoder)
    n_decoder_layers: int = 4  # decoder layers, used only by an encoder-decoder
    d_mlp: int = 512  # hidden width of each layer's MLP (4 x D as in the paper)
    max_len: int = 256  # context: the longest sequence, in tokens, the model reads
    positional: str = "sinusoidal"  # "sinusoidal" (paper) | "learned" | "none"
    norm: str = "post"  # "post": add & norm after each sublayer (paper, lecture) | "pre"
    dropout: float = 0.1  # dropout during training only
    pad_id: int = 0  # the [PAD] token: never attended to
    tie_embeddings: bool = True  # the output projection reuses the token embedding table

    @property
    def d_head(self) -> int:
        """Dh: the width of one head's query, key and value vectors."""
        return self.d_model // self.n_heads


# ---------------------------------------------------------------------------------------
# 2. Positional encoding: sinusoidal_encoding(T, D) (the paper's sines and cosines) and
#    binary_encoding(T) live in model/encoding.py as plain numpy, so the app shows exactly
#    what is added here. Learned positions are a parameter of the Stack below.
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# 3. Scaled dot-product attention
# ---------------------------------------------------------------------------------------


def attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """softmax(Q K^T / sqrt(Dh)) V.

    q: (..., T, Dh) queries; k, v: (..., S, Dh) keys and values; mask: bool, broadcastable
    to (..., T, S), True where a query may look at a key. Returns the output (..., T, Dh),
    the attention weights (..., T, S) whose rows sum to 1, and the scores (..., T, S)
    before the softmax (-inf where masked).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights, scores


def causal_mask_tensor(t: int, device: torch.device | str | None = None) -> Tensor:
    """(T, T) bool, True where query i may look at key j (j <= i): `causal_mask` as a tensor."""
    return torch.from_numpy(causal_mask(t)).to(device)


# ---------------------------------------------------------------------------------------
# What a forward pass can record
# ---------------------------------------------------------------------------------------


@dataclass
class AttentionRecord:
    """One attention sublayer. Shapes (B, H, T, *) ; S = number of keys."""

    attn_input: Tensor  # (B, T, D) what the queries come from (normed first in pre-norm)
    q: Tensor  # (B, H, T, Dh) queries  = X W_Q, split into heads
    k: Tensor  # (B, H, S, Dh) keys     = X W_K
    v: Tensor  # (B, H, S, Dh) values   = X W_V
    scores: Tensor  # (B, H, T, S) Q K^T / sqrt(Dh), -inf where masked
    attention: Tensor  # (B, H, T, S) softmax of the scores
    z: Tensor  # (B, H, T, Dh) each head's output: attention @ V
    attn_out: Tensor  # (B, T, D) heads concatenated, then W_O

    @property
    def added(self) -> Tensor:
        """What the sublayer adds to the residual stream."""
        return self.attn_out


@dataclass
class MLPRecord:
    """One MLP sublayer: mlp_out = mlp_post W_out + b_out, mlp_post = GELU(X W_in + b_in)."""

    mlp_post: Tensor  # (B, T, M) the hidden neurons, after the nonlinearity
    mlp_out: Tensor  # (B, T, D) what the MLP adds (0 where it is knocked out)

    @property
    def added(self) -> Tensor:
        """What the sublayer adds to the residual stream."""
        return self.mlp_out


@dataclass
class LayerRecord:
    """One layer as the residual stream passes through it (TransformerLens names).

    post-norm: resid_mid = LayerNorm(resid_pre + attn_out), resid_post = LayerNorm(resid_mid
    + mlp_out); pre-norm: the same without the LayerNorm around the sums (it is applied to
    each sublayer's input instead). A decoder layer of an encoder-decoder has a second
    attention sublayer between the two: resid_mid -> cross_attn -> resid_cross -> MLP.
    """

    resid_pre: Tensor  # (B, T, D) the residual stream entering the layer
    self_attn: AttentionRecord  # its attn_out is what self-attention adds
    resid_mid: Tensor  # (B, T, D) after self-attention's add & norm
    cross_attn: AttentionRecord | None  # decoder layers of an encoder-decoder only
    resid_cross: Tensor | None  # (B, T, D) after cross-attention's add & norm
    mlp_post: Tensor  # (B, T, M) the MLP's hidden neurons, after GELU
    mlp_out: Tensor  # (B, T, D) what the MLP adds
    resid_post: Tensor  # (B, T, D) the residual stream leaving the layer


@dataclass
class Record:
    """Everything one forward pass recorded, still as tensors."""

    embed: Tensor  # (B, T, D) token embeddings, before positions are added
    pos_embed: Tensor  # (B, T, D) what was added for positions (zeros when off)
    layers: list[LayerRecord]
    encoder: Record | None = None  # the encoder's record, for an encoder-decoder


# ---------------------------------------------------------------------------------------
# What a forward pass can change: model.RunOptions as tensors, per sentence of the batch
# ---------------------------------------------------------------------------------------


@dataclass
class Edits:
    """What one (batched) pass through a stack changes; built by model/interventions.py.

    Row b of the batch may knock out other heads, or patch another position, than row a:
    one batched pass then runs many experiments on the same sentence."""

    positions: bool = True  # False: nothing added for positions
    knocked: dict[int, Tensor] = field(default_factory=dict)  # layer -> (B, H) bool: heads
    # whose z is replaced before W_O
    knocked_cross: dict[int, Tensor] = field(default_factory=dict)  # the same, cross-attention
    knocked_mlp: dict[int, Tensor] = field(default_factory=dict)  # layer -> (B,) bool: rows
    # whose MLP output (mlp_out) is replaced
    knocked_neurons: dict[int, Tensor] = field(default_factory=dict)  # layer -> (B, M) bool:
    # hidden neurons whose mlp_post is replaced before W_out
    mean: bool = False  # replace z (mlp_out, mlp_post) by its mean over the positions, not 0
    patches: dict[tuple[str, int], tuple[Tensor, Tensor]] = field(default_factory=dict)
    # (site, layer) -> (where (B, T) bool, values (B or 1, T, D)): resid_pre, attn_out, mlp_out
    embed: Tensor | None = None  # (B, T, D) token embeddings given instead of looked up

    def patched(self, site: str, layer: int, x: Tensor) -> Tensor:
        """x (B, T, D) with the patch at (site, layer), if any, written in."""
        if (site, layer) not in self.patches:
            return x
        where, values = self.patches[site, layer]
        return torch.where(where[:, :, None], values.to(x.dtype), x)


CLEAN_EDITS = Edits()


def knock_out(z: Tensor, knocked: Tensor | None, mean: bool) -> Tensor:
    """z (B, H, T, Dh) with the knocked-out heads ((B, H) bool) replaced: by 0, or by the
    head's mean over the positions (mean-ablation)."""
    if knocked is None:
        return z
    out = z.mean(dim=2, keepdim=True).expand_as(z) if mean else torch.zeros_like(z)
    return torch.where(knocked[:, :, None, None], out, z)


def knock_out_mlp(mlp_out: Tensor, knocked: Tensor | None, mean: bool) -> Tensor:
    """mlp_out (B, T, D) replaced in the knocked-out rows ((B,) bool): by 0, or by its mean
    over the positions."""
    if knocked is None:
        return mlp_out
    out = torch.zeros_like(mlp_out)
    if mean:
        out = mlp_out.mean(dim=1, keepdim=True).expand_as(mlp_out)
    return torch.where(knocked[:, None, None], out, mlp_out)


def knock_out_neurons(mlp_post: Tensor, knocked: Tensor | None, mean: bool) -> Tensor:
    """mlp_post (B, T, M) with the knocked-out neurons ((B, M) bool) replaced: by 0, or by
    the neuron's mean over the positions."""
    if knocked is None:
        return mlp_post
    out = mlp_post.mean(dim=1, keepdim=True).expand_as(mlp_post) if mean else 0.0
    return torch.where(knocked[:, None, :], out, mlp_post)


# ---------------------------------------------------------------------------------------
# 4. Multi-head attention
# ---------------------------------------------------------------------------------------


class MultiHeadAttention(nn.Module):
    """H heads in parallel, each with its own slice of W_Q, W_K, W_V; concat; then W_O."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.n_heads, self.d_head = cfg.n_heads, cfg.d_head
        self.w_q = nn.Linear(cfg.d_model, cfg.d_model)  # H blocks of (D, Dh), side by side
        self.w_k = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_v = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_o = nn.Linear(cfg.d_model, cfg.d_model)  # mixes the concatenated heads

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, T, D) -> (B, H, T, Dh)."""
        b, t, _ = x.shape
        return x.view(b, t, self.n_heads, self.d_head).transpose(1, 2)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        mask: Tensor | None,
        knocked: Tensor | None = None,
        mean: bool = False,
    ) -> AttentionRecord:
        """Queries from x (B, T, D); keys and values from memory (B, S, D). `knocked`
        (B, H) bool: heads whose output z is replaced (by 0, or its mean) before W_O."""
        q = self.split_heads(self.w_q(x))  # (B, H, T, Dh)
        k = self.split_heads(self.w_k(memory))  # (B, H, S, Dh)
        v = self.split_heads(self.w_v(memory))  # (B, H, S, Dh)
        z, weights, scores = attention(q, k, v, mask)  # (B, H, T, Dh), (B, H, T, S) x 2
        z = knock_out(z, knocked, mean)  # the heads are joined below: this is where they go
        concat = z.transpose(1, 2).reshape(x.size(0), x.size(1), -1)  # (B, T, H * Dh)
        return AttentionRecord(x, q, k, v, scores, weights, z, self.w_o(concat))  # (B, T, D)


# ---------------------------------------------------------------------------------------
# 5. The layer: attention, add & norm, MLP, add & norm
# ---------------------------------------------------------------------------------------


class MLP(nn.Module):
    """Position-wise feed-forward network: Linear (W_in), GELU, Linear (W_out). Each token
    on its own: M hidden neurons read the token's vector and write back to the stream."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.up = nn.Linear(cfg.d_model, cfg.d_mlp)  # W_in, b_in
        self.down = nn.Linear(cfg.d_mlp, cfg.d_model)  # W_out, b_out

    def forward(
        self, x: Tensor, knocked: Tensor | None = None, mean: bool = False,
        neurons: Tensor | None = None,
    ) -> MLPRecord:  # fmt: skip
        """x (B, T, D) -> the hidden neurons and what the MLP adds. `knocked` (B,) bool:
        rows whose output is replaced (by 0, or its mean) before it joins the stream;
        `neurons` (B, M) bool: hidden neurons replaced (by 0, or their mean) before W_out."""
        mlp_post = knock_out_neurons(F.gelu(self.up(x)), neurons, mean)  # (B, T, M)
        mlp_out = knock_out_mlp(self.down(mlp_post), knocked, mean)  # (B, T, D)
        return MLPRecord(mlp_post, mlp_out)


class Layer(nn.Module):
    """One Transformer layer. With `cross=True` it also attends to an encoder's output."""

    def __init__(self, cfg: Config, cross: bool = False) -> None:
        super().__init__()
        self.pre_norm = cfg.norm == "pre"
        self.self_attn = MultiHeadAttention(cfg)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.cross_attn = MultiHeadAttention(cfg) if cross else None
        self.norm_cross = nn.LayerNorm(cfg.d_model) if cross else None
        self.mlp = MLP(cfg)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def add_and_norm(self, x: Tensor, sublayer, norm: nn.LayerNorm):
        """Residual connection around a sublayer; norm after (post) or before (pre).
        Returns the new residual stream and the sublayer's record (its `added` is what joins
        the stream)."""
        out = sublayer(norm(x) if self.pre_norm else x)
        added = self.drop(out.added)
        return (x + added if self.pre_norm else norm(x + added)), out

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None,
        memory: Tensor | None = None,
        memory_mask: Tensor | None = None,
        edits: Edits = CLEAN_EDITS,
        i: int = 0,
    ) -> LayerRecord:
        """Layer `i` of its stack on x (B, T, D), with `edits`' changes for that layer."""
        resid_pre = x = edits.patched("resid_pre", i, x)

        def self_attention(h: Tensor) -> AttentionRecord:
            rec = self.self_attn(h, h, mask, edits.knocked.get(i), edits.mean)
            return replace(rec, attn_out=edits.patched("attn_out", i, rec.attn_out))

        resid_mid, self_rec = self.add_and_norm(x, self_attention, self.norm1)
        x, cross_rec, resid_cross = resid_mid, None, None
        if self.cross_attn is not None:  # Q from the decoder, K and V from the encoder
            x, cross_rec = self.add_and_norm(
                x,
                lambda h: self.cross_attn(h, memory, memory_mask, edits.knocked_cross.get(i),
                                          edits.mean),
                self.norm_cross,
            )  # fmt: skip
            resid_cross = x

        def mlp(h: Tensor) -> MLPRecord:
            rec = self.mlp(h, edits.knocked_mlp.get(i), edits.mean, edits.knocked_neurons.get(i))
            return replace(rec, mlp_out=edits.patched("mlp_out", i, rec.mlp_out))

        resid_post, mlp_rec = self.add_and_norm(x, mlp, self.norm2)
        return LayerRecord(resid_pre, self_rec, resid_mid, cross_rec, resid_cross,
                           mlp_rec.mlp_post, mlp_rec.mlp_out, resid_post)  # fmt: skip


# ---------------------------------------------------------------------------------------
# 6. Stacks: embeddings + positions, then N layers
# ---------------------------------------------------------------------------------------


class Stack(nn.Module):
    """Token embedding + positional encoding, then a stack of layers.

    causal=False: an encoder (every token sees every token).
    causal=True: a decoder (token i sees tokens 0..i); cross=True adds cross-attention.
    """

    def __init__(self, cfg: Config, n_layers: int, causal: bool, cross: bool = False) -> None:
        super().__init__()
        self.cfg, self.causal = cfg, causal
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        # Tied (the paper, BERT, GPT-2): the table is also the output projection, so its rows
        # start small (std 1/sqrt(D)) and are scaled by sqrt(D) on the way in, to the
        # sinusoids' scale. Untied: rows start at that scale.
        self.embed_scale = math.sqrt(cfg.d_model) if cfg.tie_embeddings else 1.0
        nn.init.normal_(self.embed.weight, std=1.0 / self.embed_scale)
        if cfg.positional == "learned":
            self.pos_embed = nn.Parameter(torch.randn(cfg.max_len, cfg.d_model) * 0.5)
        else:  # fixed: sinusoidal, or zeros when positions are off
            pe = sinusoidal_encoding(cfg.max_len, cfg.d_model)
            if cfg.positional == "none":
                pe = np.zeros_like(pe)
            self.register_buffer("pos_embed", torch.from_numpy(pe), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.layers = nn.ModuleList(Layer(cfg, cross) for _ in range(n_layers))
        self.final_norm = nn.LayerNorm(cfg.d_model) if cfg.norm == "pre" else nn.Identity()

    def forward(
        self,
        ids: Tensor,
        edits: Edits = CLEAN_EDITS,
        memory: Tensor | None = None,
        memory_ids: Tensor | None = None,
    ) -> tuple[Tensor, Record]:
        """ids (B, T) -> final hidden states (B, T, D) and the record of the pass."""
        b, t = ids.shape
        if t > self.cfg.max_len:
            raise ValueError(f"{t} tokens exceed the context of {self.cfg.max_len}")
        keys_ok = (ids != self.cfg.pad_id)[:, None, None, :]  # (B, 1, 1, T): no [PAD] keys
        mask = keys_ok & causal_mask_tensor(t, ids.device) if self.causal else keys_ok
        memory_mask = None
        if memory_ids is not None:
            memory_mask = (memory_ids != self.cfg.pad_id)[:, None, None, :]  # (B, 1, 1, S)

        embed = self.embed(ids) * self.embed_scale if edits.embed is None else edits.embed
        pos = self.pos_embed[:t].expand(b, t, -1)  # (B, T, D)
        if not edits.positions:
            pos = torch.zeros_like(pos)
        x = self.drop(embed + pos)
        layers = []
        for i, layer in enumerate(self.layers):
            rec = layer(x, mask, memory, memory_mask, edits, i)
            layers.append(rec)
            x = rec.resid_post
        return self.final_norm(x), Record(embed, pos, layers)


# ---------------------------------------------------------------------------------------
# 7. The models
# ---------------------------------------------------------------------------------------


class LanguageModel(nn.Module):
    """Encoder-only (BERT-style, masked LM) or decoder-only (GPT-style, causal LM)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        if cfg.kind not in ("encoder", "decoder"):
            raise ValueError(f"LanguageModel needs kind 'encoder' or 'decoder', not {cfg.kind}")
        self.cfg = cfg
        self.stack = Stack(cfg, cfg.n_layers, causal=cfg.kind == "decoder")
        self.unembed = nn.Linear(cfg.d_model, cfg.vocab_size)  # hidden state -> logits
        if cfg.tie_embeddings:  # one table: token -> vector on the way in, back on the way out
            self.unembed.weight = self.stack.embed.weight

    def forward(self, ids: Tensor, edits: Edits = CLEAN_EDITS) -> tuple[Tensor, Record]:
        """ids (B, T) -> logits (B, T, V) and the record of the pass."""
        h, record = self.stack(ids, edits)
        return self.unembed(h), record

    def read_out(self, stream: Tensor) -> Tensor:
        """The output head on any residual stream (B, T, D) -> logits: the logit lens."""
        return self.unembed(self.stack.final_norm(stream))


class EncoderDecoder(nn.Module):
    """Encoder reads the source; decoder writes the target with cross-attention to it."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.encoder = Stack(cfg, cfg.n_layers, causal=False)
        self.decoder = Stack(cfg, cfg.n_decoder_layers, causal=True, cross=True)
        self.decoder.embed = self.encoder.embed  # one shared vocabulary and embedding
        self.unembed = nn.Linear(cfg.d_model, cfg.vocab_size)
        if cfg.tie_embeddings:
            self.unembed.weight = self.encoder.embed.weight

    def forward(
        self,
        src_ids: Tensor,
        tgt_ids: Tensor,
        edits: Edits = CLEAN_EDITS,
        encoder_edits: Edits = CLEAN_EDITS,
    ) -> tuple[Tensor, Record]:
        """src (B, S), tgt (B, T) -> logits (B, T, V); record.encoder holds the encoder's.
        `edits` change the decoder (its self- and cross-attention), `encoder_edits` the
        encoder."""
        memory, enc_record = self.encoder(src_ids, encoder_edits)
        h, record = self.decoder(tgt_ids, edits, memory=memory, memory_ids=src_ids)
        record.encoder = enc_record
        return self.unembed(h), record

    def read_out(self, stream: Tensor) -> Tensor:
        """The output head on the decoder's residual stream (B, T, D) -> logits."""
        return self.unembed(self.decoder.final_norm(stream))


def build(cfg: Config) -> nn.Module:
    """The model a config describes."""
    return EncoderDecoder(cfg) if cfg.kind == "encoder-decoder" else LanguageModel(cfg)
