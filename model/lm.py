"""The from-scratch language models: an encoder (BERT-style, fills in [MASK]) or a decoder
(GPT-style, predicts the next token), with what the app asks of them.

    m = model.load("mlm")                  # or "clm", or a checkpoint folder
    t = m.trace("The cat sat on the mat.")
    m.fill_mask("I [MASK] across the river.", k=5)          # encoder
    m.next_token("Once upon a", k=5)                        # decoder
    m.generate("the dog", max_new_tokens=10, seed=0)        # decoder
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from model.contract import Candidates, Sampling
from model.text import Encoded, TextTransformer, timed, to_numpy
from model.tokenizer import EOS_ID, MASK_ID, PAD_ID
from model.trace import Trace
from model.transformer import Record

UNFILTERED = Sampling()  # temperature 1, no top-k, no top-p: the model's own distribution


def filter_logits(logits: Tensor, sampling: Sampling = UNFILTERED) -> Tensor:
    """Probabilities (V,) after temperature, top-k and top-p (nucleus) filtering."""
    if sampling.temperature <= 0:  # greedy: all the mass on the most likely token
        probs = torch.zeros_like(logits)
        probs[logits.argmax()] = 1.0
        return probs
    logits = logits / sampling.temperature
    if sampling.top_k is not None and sampling.top_k < logits.numel():
        kth = torch.topk(logits, sampling.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if sampling.top_p is not None:
        sorted_p, order = probs.sort(descending=True)
        keep = sorted_p.cumsum(0) - sorted_p < sampling.top_p  # fewest whose mass reaches p
        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
        probs = probs / probs.sum()
    return probs


class TransformerLM(TextTransformer):
    """An encoder-only or decoder-only Transformer language model (model/transformer.py)."""

    @property
    def causal(self) -> bool:
        return self.kind == "decoder"

    def encode(self, text: str, eos: bool | None = None) -> Encoded:
        """[BOS] text [EOS] for an encoder, [BOS] text for a decoder, cut to the context."""
        return super().encode(text, eos=not self.causal if eos is None else eos)

    def batch(self, texts: list[str]) -> Tensor:
        """Several texts as one right-padded (B, T) tensor of ids."""
        rows = [self.encode(t).ids for t in texts]
        width = max(len(r) for r in rows)
        return torch.tensor([r + [PAD_ID] * (width - len(r)) for r in rows], device=self.device)

    # -- forward passes --------------------------------------------------------------------

    @torch.inference_mode()
    def forward(self, ids: Tensor, positions: bool = True) -> tuple[Tensor, Record]:
        """The model on (B, T) ids: logits (B, T, V) and the record."""
        return self.module(ids.to(self.device), positions=positions)

    def logits(self, text: str, positions: bool = True) -> np.ndarray:
        """The fast path: logits [T, V] for one text, nothing else kept."""
        ids = torch.tensor([self.encode(text).ids], device=self.device)
        return to_numpy(self.forward(ids, positions)[0][0])

    def trace(self, inputs: str, positions: bool = True) -> Trace:
        """One text through the model, everything inside kept (see Trace)."""
        return self._trace(self.encode(inputs), positions)

    def trace_ids(self, ids: list[int], positions: bool = True) -> Trace:
        """Like `trace`, for token ids as they are (e.g. a prompt plus generated tokens, or a
        sentence with some tokens replaced by [MASK]); keeps the last `max_len` ids."""
        return self._trace(self.encoded_ids(ids), positions)

    def _trace(self, enc: Encoded, positions: bool) -> Trace:
        ids = torch.tensor([enc.ids], device=self.device)
        (logits, record), seconds = timed(lambda: self.forward(ids, positions), self.device)
        return self.make_trace(enc, record, logits, self.causal, positions, seconds)

    # -- masked prediction (encoder) -------------------------------------------------------

    def fill_mask(self, text: str, k: int = 5) -> list[Candidates]:
        """One ranked (token, prob) list per [MASK] in the text, in order."""
        if not self.can("fill_mask"):
            raise self._unsupported("fill_mask")
        return self.fill_mask_ids(self.encode(text).ids, k)

    def fill_mask_ids(self, ids: list[int], k: int = 5) -> list[Candidates]:
        """`fill_mask` for token ids in which some ids are already MASK_ID."""
        if not self.can("fill_mask"):
            raise self._unsupported("fill_mask")
        ids = torch.tensor([list(ids)[: self.cfg.max_len]], device=self.device)
        logits = self.forward(ids)[0][0]  # (T, V)
        where = (ids[0] == MASK_ID).nonzero().flatten()
        return [self.ranked(torch.softmax(self.without_specials(logits[i]), -1), k) for i in where]

    # -- next-token prediction (decoder) ---------------------------------------------------

    def next_distribution(self, ids: list[int], sampling: Sampling | None = None) -> np.ndarray:
        """[V] probabilities (float64, summing to 1) of the token after `ids`, filtered for
        sampling; special tokens other than [EOS] are never predicted."""
        if not self.can("next_token"):
            raise self._unsupported("next_token")
        ids = list(ids)[-self.cfg.max_len :]
        logits = self.forward(torch.tensor([ids], device=self.device))[0][0, -1]
        logits = self.without_specials(logits, keep=(EOS_ID,)).float()
        probs = filter_logits(logits, sampling or UNFILTERED).double().cpu().numpy()
        return probs / probs.sum()

