"""What the from-scratch text Transformers share: tokens in, a Trace out.

`TextModel` turns text into ids ([BOS] text [EOS]) and back; `Translator` adds greedy
translation; `TextTransformer` holds a trained module (model/transformer.py), its config,
tokenizer and device, and turns a forward pass's Record into the numpy Trace of the
contract. model/lm.py (the language models), model/seq2seq.py (the encoder-decoder) and
model/lstm.py (the LSTM translator) build on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch
from tokenizers import Tokenizer
from torch import Tensor, nn

from model.checkpoint import load_checkpoint
from model.contract import Candidates, Model, Translation
from model.options import RunOptions
from model.tokenizer import (
    SPECIAL_TOKENS,
    UNK_ID,
    Encoded,
    Reading,
    encode_text,
    reading_of,
    show,
    show_token,
)
from model.trace import LayerTrace, Trace
from model.transformer import MLP, Config, LayerRecord, Record

T = TypeVar("T")


def to_numpy(x: Tensor) -> np.ndarray:
    return x.detach().float().cpu().numpy()


def layer_trace(layer: LayerRecord, i: int = 0, cross: bool = False) -> LayerTrace:
    """Sentence i of a batch, one attention sublayer (self, or cross when `cross`), as numpy."""
    attn = layer.cross_attn if cross else layer.self_attn
    resid_pre, resid_mid = (
        (layer.resid_mid, layer.resid_cross) if cross else (layer.resid_pre, layer.resid_mid)
    )
    return LayerTrace(
        resid_pre=to_numpy(resid_pre[i]),
        attn_input=to_numpy(attn.attn_input[i]),
        q=to_numpy(attn.q[i]),
        k=to_numpy(attn.k[i]),
        v=to_numpy(attn.v[i]),
        scores=to_numpy(attn.scores[i]),
        attention=to_numpy(attn.attention[i]),
        z=to_numpy(attn.z[i]),
        attn_out=to_numpy(attn.attn_out[i]),
        resid_mid=to_numpy(resid_mid[i]),
        mlp_out=to_numpy(layer.mlp_out[i]),
        resid_post=to_numpy(layer.resid_post[i]),
        mlp_post=to_numpy(layer.mlp_post[i]),
    )


def mlp_weights_of(mlp: MLP) -> dict[str, np.ndarray]:
    """W_in [D, M], b_in [M], W_out [M, D], b_out [D] of one of our MLPs, for x @ W + b:
    mlp_post = GELU(X @ W_in + b_in), mlp_out = mlp_post @ W_out + b_out."""
    return {
        "w_in": to_numpy(mlp.up.weight).T,
        "b_in": to_numpy(mlp.up.bias),
        "w_out": to_numpy(mlp.down.weight).T,
        "b_out": to_numpy(mlp.down.bias),
    }


def encoded(m: Model, inputs: str | Sequence[int]) -> Encoded:
    """What a trace reads: a text, encoded, or token ids as they are (a list, tuple or array)."""
    if isinstance(inputs, str):
        return m.encode(inputs)
    if not isinstance(inputs, list | tuple | np.ndarray):
        raise TypeError(f"text must be a str (or token ids), not {type(inputs).__name__}")
    return m.encoded_ids(list(inputs))


def timed(run: Callable[[], T], device: str) -> tuple[T, float]:
    """`run()` and its wall time in seconds (waiting for the GPU to finish): the forward pass
    time the sidebar shows."""
    start = time.perf_counter()
    out = run()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


class TextModel(Model):
    """What every model that reads text shares: the tokenizer, [BOS] text [EOS], token ids
    back to text. Subclasses set tokenizer, max_len, device, name and kind."""

    tokenizer: Tokenizer

    def encode(self, text: str, eos: bool = True) -> Encoded:
        """[BOS] text [EOS] (or [BOS] text when `eos` is False), cut to the context."""
        return encode_text(self.tokenizer, self.reading, text, self.max_len, eos)

    def encoded_ids(self, ids: list[int]) -> Encoded:
        """Token ids as they are (a prompt plus generated tokens, a sentence with [MASK]s),
        keeping the last `max_len`."""
        ids = [int(i) for i in ids]
        if not ids:
            raise ValueError("no token ids to trace")
        kept = ids[-self.max_len :]
        shown = show(self.reading, self._raw(kept))
        return Encoded.of(kept, shown, [(0, 0)] * len(kept), len(kept) < len(ids), len(ids))

    @cached_property
    def reading(self) -> Reading:
        """How the tokenizer's strings stand for text (model.tokenizer.reading_of)."""
        return reading_of(self.tokenizer)

    def _raw(self, ids: list[int]) -> list[str]:
        return [self.tokenizer.id_to_token(int(i)) or f"<{i}>" for i in ids]

    def tokens_of(self, ids: list[int]) -> list[str]:
        """Token ids as a person reads them, one by one."""
        return [show_token(self.reading, tok) for tok in self._raw(ids)]

    def decode(self, ids: list[int]) -> str:
        """Token ids back to text (special tokens dropped)."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def vocabulary(self) -> list[str]:
        return self.tokens_of(list(range(self.tokenizer.get_vocab_size())))

    def special_ids(self) -> dict[str, int]:
        return {t: self.tokenizer.token_to_id(t) for t in SPECIAL_TOKENS}


class Translator(TextModel):
    """A text model whose `trace(text)` decodes a translation greedily (the decoder's
    tokens after [BOS]) and keeps the source's trace in `.encoder`."""

    def translate(
        self, text: str, ablate: Iterable | None = None, ablate_mlp: Iterable | None = None,
        ablate_neurons: Iterable | None = None,
    ) -> Translation:  # fmt: skip
        """The greedy translation, its tokens and probabilities, and the source words that
        are not in the vocabulary; `ablate`, `ablate_mlp`, `ablate_neurons`: heads, MLPs and
        neurons knocked out (see `trace`)."""
        t = self.trace(text, ablate=ablate, ablate_mlp=ablate_mlp, ablate_neurons=ablate_neurons)
        return self.translation_in(t, text)

    def translation_in(self, t: Trace, text: str) -> Translation:
        """The translation that `trace(text)` holds (its target tokens, each one's probability
        under the logits of the step that picked it), so a page that shows both pays for
        one greedy decoding."""
        ids = [int(i) for i in t.ids[1:]]  # after [BOS]; [EOS] is not part of the text
        logits = t.logits[: len(ids)].astype(np.float64)
        logits[:, [i for n, i in self.special_ids().items() if n != "[EOS]"]] = -np.inf
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        src = t.encoder if t.encoder is not None else t
        unknown = [text[a:b] for i, (a, b) in zip(src.ids, src.offsets, strict=True)
                   if i == UNK_ID]  # fmt: skip
        picked = [float(probs[k, i]) for k, i in enumerate(ids)]
        return Translation(text, self.decode(ids), self.tokens_of(ids), picked, unknown)


class TextTransformer(TextModel):
    """A trained text Transformer ready for the app: tokenize, run, trace."""

    def __init__(
        self, module: nn.Module, cfg: Config, tokenizer: Tokenizer, device: str, name: str
    ) -> None:
        self.module, self.cfg, self.tokenizer = module, cfg, tokenizer
        self.device, self.name, self.kind = str(device), name, cfg.kind
        self.max_len, self.positional = cfg.max_len, cfg.positional
        self._specials = [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS]

    @classmethod
    def from_folder(cls, folder: str | Path, name: str, device: str) -> TextTransformer:
        """The checkpoint in `folder` (safetensors + config.json + tokenizer.json)."""
        module, cfg, tokenizer = load_checkpoint(folder, device)
        return cls(module, cfg, tokenizer, device, name)

    # -- from a Record to a Trace ----------------------------------------------------------

    def make_trace(
        self,
        enc: Encoded,
        record: Record,
        logits: Tensor | None,
        causal: bool,
        options: RunOptions,
        seconds: float,
    ) -> Trace:
        """Sentence 0 of a forward pass's record as the numpy Trace of the contract."""
        return Trace(
            tokens=enc.tokens,
            ids=np.array(enc.ids),
            offsets=enc.offsets,
            embeddings=to_numpy(record.embed[0]),
            positional=to_numpy(record.pos_embed[0]),
            layers=[layer_trace(layer) for layer in record.layers],
            logits=to_numpy(logits[0]) if logits is not None else np.zeros((len(enc.ids), 0)),
            causal=causal,
            truncated=enc.truncated,
            n_input_tokens=enc.n_input_tokens,
            options=options,
            device=self.device,
            seconds=seconds,
            raw_tokens=enc.raw_tokens,
            fragment_of=enc.fragment_of,
            cross_layers=[layer_trace(layer, cross=True) for layer in record.layers]
            if record.layers and record.layers[0].cross_attn is not None
            else [],
        )

    def heads(self) -> dict[str, tuple[int, int]]:
        """One stack of (layers, heads a layer)."""
        return {"": (self.cfg.n_layers, self.cfg.n_heads)}

    def ids_of(self, inputs: str | Sequence[int]) -> list[int]:
        """A text's ids (as `trace` reads it), or token ids as they are."""
        return encoded(self, inputs).ids

    def read_stream(self, record: Record, at: Sequence[int] | None) -> np.ndarray:
        """The logit lens on a record: [L + 1, T (or len(at)), V] log-probabilities of the
        stream entering layer 0, then leaving each layer, through the model's output head."""
        streams = [record.layers[0].resid_pre] + [layer.resid_post for layer in record.layers]
        stream = torch.cat(streams)  # (L + 1, T, D), sentence 0 of each
        if at is not None:
            stream = stream[:, list(at)]
        with torch.inference_mode():
            return to_numpy(torch.log_softmax(self.module.read_out(stream).float(), dim=-1))

    # -- predictions -----------------------------------------------------------------------

    def ranked(self, probs: Tensor, k: int) -> Candidates:
        """The k most probable tokens (those with a probability above 0), most likely first."""
        top = torch.topk(probs, min(k, probs.numel()))
        names = self.tokens_of(top.indices.tolist())
        return [(t, float(p)) for t, p in zip(names, top.values, strict=True) if p > 0]

    def without_specials(self, logits: Tensor, keep: tuple[int, ...] = ()) -> Tensor:
        """Logits with the special tokens (except `keep`) set to -inf: never predicted."""
        drop = torch.tensor([i for i in self._specials if i not in keep], device=logits.device)
        return logits.index_fill(-1, drop, float("-inf"))

    # -- weights, for the views -------------------------------------------------------------

    def stack(self) -> nn.Module:
        """The stack that holds the embedding and the self-attention layers a Trace shows."""
        return self.module.stack

    def embedding_matrix(self) -> np.ndarray:
        """[V, D] the token embedding table."""
        return to_numpy(self.stack().embed.weight)

    def nearest_tokens(self, token_id: int, k: int = 8) -> Candidates:
        """The k vocabulary tokens whose embeddings have the highest cosine to this one."""
        table = self.stack().embed.weight.detach()
        unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-8)
        cos = self.without_specials(unit @ unit[token_id])
        cos[token_id] = float("-inf")
        top = torch.topk(cos, k)
        names = self.tokens_of(top.indices.tolist())
        return [(t, float(c)) for t, c in zip(names, top.values, strict=True)]

    def attention_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V as [H, D, Dh] (and biases [H, Dh]); W_O as [D, D]: x @ W + b."""
        mha = self.stack().layers[layer].self_attn
        h, dh = self.cfg.n_heads, self.cfg.d_head
        out: dict[str, np.ndarray] = {}
        for name in ("q", "k", "v"):
            lin = getattr(mha, f"w_{name}")
            w = to_numpy(lin.weight).T  # (D, D): columns are h * Dh + j
            out[f"w_{name}"] = w.reshape(w.shape[0], h, dh).transpose(1, 0, 2)
            out[f"b_{name}"] = to_numpy(lin.bias).reshape(h, dh)
        out["w_o"] = to_numpy(mha.w_o.weight).T
        out["b_o"] = to_numpy(mha.w_o.bias)
        return out

    def unembedding(self) -> np.ndarray:
        """[D, V] W_U: logits = h @ W_U + b_U (tied: the embedding table, transposed)."""
        return to_numpy(self.module.unembed.weight).T

    @torch.inference_mode()
    def read_out(self, vectors: np.ndarray) -> np.ndarray:
        """[N, V] log-probabilities of vectors [N, D] through the final norm and W_U."""
        x = torch.as_tensor(np.asarray(vectors, dtype=np.float32), device=self.device)
        return to_numpy(torch.log_softmax(self.module.read_out(x).float(), dim=-1))

    def mlp_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_in [D, M], b_in [M], W_out [M, D], b_out [D] of a layer's MLP (of the stack a
        Trace's `layers` show): mlp_out = mlp_post @ W_out + b_out."""
        return mlp_weights_of(self.stack().layers[layer].mlp)

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.module.parameters())
