"""The from-scratch language models: an encoder (BERT-style, fills in [MASK]) or a decoder
(GPT-style, predicts the next token), with what the app asks of them.

    m = model.load("mlm")                  # or "clm", or a checkpoint folder
    t = m.trace("The cat sat on the mat.")
    m.fill_mask("I [MASK] across the river.", k=5)          # encoder
    m.next_token("Once upon a", k=5)                        # decoder
    m.generate("the dog", max_new_tokens=10, seed=0)        # decoder
    m.trace("The cat sat.", ablate=[(1, 2)])                # layer 1's head 2 knocked out
    m.logit_lens("The cat sat.")                            # every layer's guess
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from model.contract import ATTRIBUTIONS, Attribution, Candidates, Sampling
from model.interventions import chunks, edits_of, gradient_x_input, integrated_gradients, recorded
from model.options import CLEAN, RunOptions, check_heads, check_patch
from model.text import Encoded, TextTransformer, encoded, timed, to_numpy
from model.tokenizer import EOS_ID, MASK_ID, PAD_ID
from model.trace import Trace
from model.transformer import Edits, Record

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

    def edits(self, runs: Sequence[RunOptions], ids: Tensor) -> Edits:
        """`runs` (one per row of ids (B, T), or one for all) as the pass's Edits, each
        checked against this model; a patch's source is run first."""
        runs = list(runs) * ids.shape[0] if len(runs) == 1 else list(runs)
        source = None
        for run in runs:
            check_heads(run, self.heads(), self.name, self.cfg.d_mlp)
            if run.patch is not None and source is None:
                src = self.ids_of(run.patch.source)
                check_patch(run.patch, self.cfg.n_layers, len(src), ids.shape[1])
                src_ids = torch.tensor([src], device=self.device)
                source = recorded(self.module(src_ids, Edits(positions=run.positions))[1])
            elif run.patch is not None:
                check_patch(run.patch, self.cfg.n_layers, ids.shape[1], ids.shape[1])
        return edits_of(runs, "", self.cfg.n_heads, self.device, source, d_mlp=self.cfg.d_mlp)

    @torch.inference_mode()
    def forward(
        self, ids: Tensor, options: RunOptions | Sequence[RunOptions] = CLEAN
    ) -> tuple[Tensor, Record]:
        """The model on (B, T) ids: logits (B, T, V) and the record. `options`: one for
        every row, or one per row (a batch of experiments on one sentence)."""
        ids = ids.to(self.device)
        runs = [options] if isinstance(options, RunOptions) else options
        return self.module(ids, self.edits(runs, ids))

    def logits(self, text: str, options: RunOptions = CLEAN) -> np.ndarray:
        """The fast path: logits [T, V] for one text, nothing else kept."""
        ids = torch.tensor([self.encode(text).ids], device=self.device)
        return to_numpy(self.forward(ids, options)[0][0])

    def trace_with(self, inputs: str | Sequence[int], options: RunOptions = CLEAN) -> Trace:
        """One text (or token ids as they are: a prompt plus generated tokens, a sentence
        with [MASK]s; the last `max_len` kept) through the model, everything inside kept."""
        enc = encoded(self, inputs)
        ids = torch.tensor([enc.ids], device=self.device)
        (logits, record), seconds = timed(lambda: self.forward(ids, options), self.device)
        return self.make_trace(enc, record, logits, self.causal, options, seconds)

    def log_probs(
        self, inputs: str | Sequence[int], runs: Sequence[RunOptions],
        at: Sequence[int] | None = None,
    ) -> np.ndarray:  # fmt: skip
        """[len(runs), len(at), V]: one input under each of `runs`, batched."""
        ids = self.ids_of(inputs)
        where = list(range(len(ids))) if at is None else list(at)
        out = []
        for part in chunks(runs):
            batch = torch.tensor([ids] * len(part), device=self.device)
            logits = self.forward(batch, part)[0][:, where].float()
            out.append(to_numpy(torch.log_softmax(logits, dim=-1)))
        return np.concatenate(out)

    @torch.inference_mode()
    def logit_lens(
        self, inputs: str | Sequence[int], at: Sequence[int] | None = None
    ) -> np.ndarray:
        """[L + 1, T, V] log-probabilities: the stream read through the output head."""
        ids = torch.tensor([self.ids_of(inputs)], device=self.device)
        return self.read_stream(self.forward(ids)[1], at)

    def attribute(
        self, inputs: str | Sequence[int], position: int, token: int,
        method: str = "integrated_gradients", steps: int = 64,
    ) -> Attribution:  # fmt: skip
        """Each input token's score for log p(`token`) at `position`: gradient x input, or
        integrated gradients from a zero embedding (positions kept), on the token embeddings."""
        if method not in ATTRIBUTIONS:
            raise ValueError(f"method must be one of {', '.join(ATTRIBUTIONS)}, not {method!r}")
        ids = torch.tensor([self.ids_of(inputs)], device=self.device)
        if not 0 <= position < ids.shape[1]:
            raise ValueError(f"position {position} is out of range (0-{ids.shape[1] - 1})")
        stack = self.module.stack
        with torch.no_grad():
            x = (stack.embed(ids) * stack.embed_scale)[0]  # (T, D)

        def output(embeds: Tensor) -> Tensor:  # (B, T, D) -> log p(token) (B,)
            logits, _ = self.module(ids.expand(embeds.shape[0], -1), Edits(embed=embeds))
            return torch.log_softmax(logits[:, position].float(), dim=-1)[:, token]

        if method == "gradient_x_input":
            scores, value = gradient_x_input(output, x)
            return Attribution(to_numpy(scores), method, position, token, value, float("nan"))
        scores, value, base = integrated_gradients(output, x, torch.zeros_like(x), steps)
        return Attribution(to_numpy(scores), method, position, token, value, base, steps)

    # -- masked prediction (encoder) -------------------------------------------------------

    def fill_mask_ids(
        self, ids: list[int], k: int = 5, options: RunOptions = CLEAN
    ) -> list[Candidates]:
        """`fill_mask` for token ids in which some ids are already MASK_ID."""
        if not self.can("fill_mask"):
            raise self._unsupported("fill_mask")
        ids = torch.tensor([list(ids)[: self.cfg.max_len]], device=self.device)
        logits = self.forward(ids, options)[0][0]  # (T, V)
        where = (ids[0] == MASK_ID).nonzero().flatten()
        return [self.ranked(torch.softmax(self.without_specials(logits[i]), -1), k) for i in where]

    # -- next-token prediction (decoder) ---------------------------------------------------

    def next_distribution(
        self, ids: list[int], sampling: Sampling | None = None, options: RunOptions = CLEAN
    ) -> np.ndarray:
        """[V] probabilities (float64, summing to 1) of the token after `ids`, filtered for
        sampling; special tokens other than [EOS] are never predicted."""
        if not self.can("next_token"):
            raise self._unsupported("next_token")
        ids = list(ids)[-self.cfg.max_len :]
        logits = self.forward(torch.tensor([ids], device=self.device), options)[0][0, -1]
        logits = self.without_specials(logits, keep=(EOS_ID,)).float()
        probs = filter_logits(logits, sampling or UNFILTERED).double().cpu().numpy()
        return probs / probs.sum()
