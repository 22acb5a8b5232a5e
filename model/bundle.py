"""A Bundle: a trained model, its tokenizer and its device, with what the app asks of it.

bundle = load("mlm")                       # or "clm", or a checkpoint folder
t = bundle.trace("The cat sat on the mat.")
bundle.fill_mask("I [MASK] across the river.", k=5)
bundle.next_token("Once upon a", k=5)
bundle.generate("the dog", max_new_tokens=10, seed=0)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from torch import Tensor, nn

from model.checkpoint import load_checkpoint
from model.tokenizer import BOS_ID, EOS_ID, MASK_ID, PAD_ID, SPECIAL_TOKENS
from model.trace import LayerTrace, Trace
from model.transformer import AttentionRecord, Config, LayerRecord, Record

MODELS_DIR = Path(__file__).resolve().parent.parent / "assets" / "models"
SHIPPED = ("mlm", "clm")

Candidates = list[tuple[str, float]]  # (token, probability), most likely first


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """None or "auto": CUDA when available, else the CPU. "cuda" without CUDA: an error."""
    if device is None or str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("CUDA was asked for, but no CUDA GPU is available here; use 'cpu'.")
    return device


@dataclass
class Encoded:
    """A text as the model reads it."""

    ids: list[int]  # with [BOS] (and [EOS] for an encoder) around the text's tokens
    tokens: list[str]
    offsets: list[tuple[int, int]]  # character span of each token; (0, 0) for specials
    truncated: bool
    n_input_tokens: int  # the text's tokens before truncation, specials included


@dataclass
class Generation:
    """The result of `Bundle.generate`."""

    prompt: str
    tokens: list[str]  # the new tokens, as displayed
    ids: list[int]  # the new tokens' ids
    probs: list[float]  # the probability each new token had when it was picked
    text: str  # prompt and continuation, decoded


def _to_numpy(x: Tensor) -> np.ndarray:
    return x.detach().float().cpu().numpy()


def _layer_trace(layer: LayerRecord, attn: AttentionRecord, i: int = 0) -> LayerTrace:
    """Sentence i of a batch, one attention sublayer, as numpy."""
    return LayerTrace(
        input=_to_numpy(layer.input[i]),
        attn_input=_to_numpy(attn.x[i]),
        q=_to_numpy(attn.q[i]),
        k=_to_numpy(attn.k[i]),
        v=_to_numpy(attn.v[i]),
        scores=_to_numpy(attn.scores[i]),
        attention=_to_numpy(attn.attention[i]),
        z=_to_numpy(attn.z[i]),
        attn_output=_to_numpy(attn.output[i]),
        output=_to_numpy(layer.output[i]),
    )


def filter_logits(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> Tensor:
    """Probabilities after temperature, top-k and top-p (nucleus) filtering. logits: (V,)."""
    if temperature <= 0:  # greedy: all the mass on the most likely token
        probs = torch.zeros_like(logits)
        probs[logits.argmax()] = 1.0
        return probs
    logits = logits / temperature
    if top_k is not None and 0 < top_k < logits.numel():
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if top_p is not None and 0 < top_p < 1:
        sorted_p, order = probs.sort(descending=True)
        keep = sorted_p.cumsum(0) - sorted_p < top_p  # smallest set whose mass reaches p
        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
        probs = probs / probs.sum()
    return probs


class Bundle:
    """A model ready for the app: tokenize, run, trace, predict."""

    def __init__(
        self, model: nn.Module, cfg: Config, tokenizer: Tokenizer, device: torch.device, name: str
    ) -> None:
        self.model, self.cfg, self.tokenizer, self.device, self.name = (
            model,
            cfg,
            tokenizer,
            device,
            name,
        )
        self.causal = cfg.kind == "decoder"
        self._special = torch.tensor(
            [self.tokenizer.token_to_id(t) for t in SPECIAL_TOKENS], device=device
        )

    # -- tokens ---------------------------------------------------------------------------

    def encode(self, text: str) -> Encoded:
        """[BOS] text [EOS] (an encoder) or [BOS] text (a decoder), cut to the context."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        if not text.strip():
            raise ValueError("The text is empty: type a sentence.")
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        room = self.cfg.max_len - (1 if self.causal else 2)
        ids, offsets = enc.ids[:room], [tuple(o) for o in enc.offsets[:room]]
        n_input = len(enc.ids) + (1 if self.causal else 2)
        ids, offsets = [BOS_ID, *ids], [(0, 0), *offsets]
        if not self.causal:
            ids, offsets = [*ids, EOS_ID], [*offsets, (len(text), len(text))]
        tokens = [self.tokenizer.id_to_token(i) for i in ids]
        return Encoded(ids, tokens, offsets, len(enc.ids) > room, n_input)

    def decode(self, ids: list[int]) -> str:
        """Token ids back to text (special tokens dropped)."""
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def batch(self, texts: list[str]) -> Tensor:
        """Several texts as one right-padded (B, T) tensor of ids."""
        rows = [self.encode(t).ids for t in texts]
        width = max(len(r) for r in rows)
        padded = [r + [PAD_ID] * (width - len(r)) for r in rows]
        return torch.tensor(padded, device=self.device)

    # -- forward passes --------------------------------------------------------------------

    @torch.inference_mode()
    def forward(self, ids: Tensor, positions: bool = True) -> tuple[Tensor, Record]:
        """The model on (B, T) ids: logits (B, T, V) and the record."""
        return self.model(ids.to(self.device), positions=positions)

    def logits(self, text: str, positions: bool = True) -> np.ndarray:
        """The fast path: logits [T, V] for one text, nothing else kept."""
        ids = torch.tensor([self.encode(text).ids], device=self.device)
        return _to_numpy(self.forward(ids, positions)[0][0])

    def trace(self, text: str, positions: bool = True) -> Trace:
        """One text through the model, everything inside kept (see Trace)."""
        return self._trace(self.encode(text), positions)

    def trace_ids(self, ids: list[int], positions: bool = True) -> Trace:
        """Like `trace`, for token ids as they are (e.g. a prompt plus generated tokens, or a
        sentence with some tokens replaced by [MASK]); keeps the last `max_len` ids."""
        ids = [int(i) for i in ids]
        if not ids:
            raise ValueError("no token ids to trace")
        kept = ids[-self.cfg.max_len :]
        tokens = [self.tokenizer.id_to_token(i) for i in kept]
        enc = Encoded(kept, tokens, [(0, 0)] * len(kept), len(kept) < len(ids), len(ids))
        return self._trace(enc, positions)

    def _trace(self, enc: Encoded, positions: bool) -> Trace:
        ids = torch.tensor([enc.ids], device=self.device)
        start = time.perf_counter()
        logits, record = self.forward(ids, positions)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        return Trace(
            tokens=enc.tokens,
            ids=np.array(enc.ids),
            offsets=enc.offsets,
            embeddings=_to_numpy(record.embed[0]),
            positional=_to_numpy(record.pos_embed[0]),
            layers=[_layer_trace(layer, layer.self_attn) for layer in record.layers],
            logits=_to_numpy(logits[0]),
            causal=self.causal,
            truncated=enc.truncated,
            n_input_tokens=enc.n_input_tokens,
            positions=positions,
            device=str(self.device),
            seconds=seconds,
        )

    # -- predictions -----------------------------------------------------------------------

    def _ranked(self, probs: Tensor, k: int) -> Candidates:
        top = torch.topk(probs, min(k, probs.numel()))
        return [
            (self.tokenizer.id_to_token(int(i)), float(p))
            for p, i in zip(top.values, top.indices, strict=True)
            if p > 0
        ]

    def _no_specials(self, logits: Tensor) -> Tensor:
        return logits.index_fill(-1, self._special, float("-inf"))

    def fill_mask(self, text: str, k: int = 5) -> list[Candidates]:
        """One ranked (token, prob) list per [MASK] in the text, in order."""
        if self.causal:
            raise ValueError("fill_mask needs a masked (BERT-style) model such as 'mlm'")
        return self.fill_mask_ids(self.encode(text).ids, k)

    def fill_mask_ids(self, ids: list[int], k: int = 5) -> list[Candidates]:
        """`fill_mask` for token ids in which some ids are already MASK_ID."""
        if self.causal:
            raise ValueError("fill_mask needs a masked (BERT-style) model such as 'mlm'")
        ids = torch.tensor([list(ids)[: self.cfg.max_len]], device=self.device)
        logits = self.forward(ids)[0][0]  # (T, V)
        where = (ids[0] == MASK_ID).nonzero().flatten()
        return [self._ranked(torch.softmax(self._no_specials(logits[i]), -1), k) for i in where]

    def next_distribution(
        self,
        ids: list[int],
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
    ) -> Tensor:
        """Probabilities (V,) of the token after `ids`, filtered for sampling."""
        if not self.causal:
            raise ValueError("next-token prediction needs a causal (GPT-style) model such as 'clm'")
        ids = ids[-self.cfg.max_len :]
        logits = self.forward(torch.tensor([ids], device=self.device))[0][0, -1]
        logits = logits.index_fill(0, self._special[self._special != EOS_ID], float("-inf"))
        return filter_logits(logits.float(), temperature, top_k, top_p)

    def next_token(
        self,
        text: str,
        k: int = 5,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
    ) -> Candidates:
        """The k most likely next tokens with their (filtered) probabilities."""
        probs = self.next_distribution(self.encode(text).ids, temperature, top_k, top_p)
        return self._ranked(probs, k)

    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 20,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
    ) -> Generation:
        """Sample a continuation token by token; the same seed gives the same text."""
        ids = self.encode(prompt).ids
        generator = torch.Generator().manual_seed(seed)
        new_ids, probs = [], []
        for _ in range(max_new_tokens):
            p = self.next_distribution(ids + new_ids, temperature, top_k, top_p).cpu()
            nxt = int(torch.multinomial(p, 1, generator=generator))
            new_ids.append(nxt)
            probs.append(float(p[nxt]))
            if nxt == EOS_ID:
                break
        return Generation(
            prompt=prompt,
            tokens=[self.tokenizer.id_to_token(i) for i in new_ids],
            ids=new_ids,
            probs=probs,
            text=self.decode(ids + new_ids),
        )

    # -- weights, for the views -------------------------------------------------------------

    def embedding_matrix(self) -> np.ndarray:
        """[V, D] the token embedding table."""
        return _to_numpy(self._stack().embed.weight)

    def nearest_tokens(self, token_id: int, k: int = 8) -> Candidates:
        """The k vocabulary tokens whose embeddings have the highest cosine to this one."""
        table = self._stack().embed.weight.detach()
        unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-8)
        cos = self._no_specials(unit @ unit[token_id])
        cos[token_id] = float("-inf")
        top = torch.topk(cos, k)
        return [
            (self.tokenizer.id_to_token(int(i)), float(c))
            for c, i in zip(top.values, top.indices, strict=True)
        ]

    def attention_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V as [H, D, Dh] (and biases [H, Dh]); W_O as [D, D]: x @ W + b."""
        mha = self._stack().layers[layer].self_attn
        h, dh = self.cfg.n_heads, self.cfg.d_head
        out: dict[str, np.ndarray] = {}
        for name in ("q", "k", "v"):
            lin = getattr(mha, f"w_{name}")
            w = _to_numpy(lin.weight).T  # (D, D): columns are h * Dh + j
            out[f"w_{name}"] = w.reshape(w.shape[0], h, dh).transpose(1, 0, 2)
            out[f"b_{name}"] = _to_numpy(lin.bias).reshape(h, dh)
        out["w_o"] = _to_numpy(mha.w_o.weight).T
        out["b_o"] = _to_numpy(mha.w_o.bias)
        return out

    def _stack(self) -> nn.Module:
        """The stack that holds the embedding and the self-attention layers shown."""
        return self.model.decoder if self.cfg.kind == "encoder-decoder" else self.model.stack

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


def load(name: str = "mlm", device: str | torch.device | None = None) -> Bundle:
    """A shipped model ("mlm", "clm") or a checkpoint folder, on `device` (None: auto)."""
    device = pick_device(device)
    path = MODELS_DIR / name if name in SHIPPED else Path(name)
    model, cfg, tokenizer = load_checkpoint(path, device)
    return Bundle(model, cfg, tokenizer, device, name if name in SHIPPED else path.name)
