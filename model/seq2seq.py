"""The from-scratch encoder-decoder Transformer (translation), with what the app asks of it.

    m = model.load("translate")            # a checkpoint folder whose kind is encoder-decoder
    m.translate("i go to school")          # greedy decoding, token by token
    t = m.trace("i go to school")          # translate, then trace the pair:
    t.encoder                              #   the encoder's own Trace (the source tokens)
    t.layers, t.cross_layers               #   decoder self-attention and cross-attention
    t.cross_layers[0].attention            #   [H, T_target, T_source]

The encoder reads [BOS] source [EOS]; the decoder reads [BOS] y1 ... yn and predicts
y1 ... yn [EOS], its queries looking back at every source token through cross-attention.

Experiments name the stack: `ablate=[("encoder", 0, 1), ("decoder", 2, 0), ("cross", 1, 3)]`.
A patch writes into the encoder (the two source sentences must have as many tokens), and
the translation is decoded again from the patched encoder.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from model.interventions import chunks, edits_of, recorded
from model.options import CLEAN, RunOptions, check_heads, check_patch
from model.text import Encoded, TextTransformer, Translator, encoded, timed, to_numpy
from model.tokenizer import BOS_ID, EOS_ID
from model.trace import Trace
from model.transformer import Edits, Record

Pair = tuple[str | Sequence[int], str | Sequence[int]]  # (source, target): texts or ids


class TransformerSeq2Seq(Translator, TextTransformer):
    """An encoder-decoder Transformer (model/transformer.py `EncoderDecoder`)."""

    def stack(self) -> nn.Module:
        """The decoder: its embedding (shared with the encoder) and self-attention layers."""
        return self.module.decoder

    def heads(self) -> dict[str, tuple[int, int]]:
        cfg = self.cfg
        return {"encoder": (cfg.n_layers, cfg.n_heads), "decoder": (cfg.n_decoder_layers,
                cfg.n_heads), "cross": (cfg.n_decoder_layers, cfg.n_heads)}  # fmt: skip

    def edits(self, runs: Sequence[RunOptions], src: Tensor) -> tuple[Edits, Edits]:
        """The decoder's and the encoder's Edits for `runs` (one per row of src, or one)."""
        runs = list(runs) * src.shape[0] if len(runs) == 1 else list(runs)
        source = None
        for run in runs:
            check_heads(run, self.heads(), self.name)
            if run.patch is not None and source is None:
                ids = self.ids_of(run.patch.source)
                check_patch(run.patch, self.cfg.n_layers, len(ids), src.shape[1])
                ids = torch.tensor([ids], device=self.device)
                source = recorded(self.module.encoder(ids, Edits(positions=run.positions))[1])
        n_heads = self.cfg.n_heads
        return (edits_of(runs, "decoder", n_heads, self.device, cross="cross"),
                edits_of(runs, "encoder", n_heads, self.device, source))  # fmt: skip

    @torch.inference_mode()
    def forward(
        self, src: Tensor, tgt: Tensor, options: RunOptions | Sequence[RunOptions] = CLEAN
    ) -> tuple[Tensor, Record]:
        """Source (B, S) and target (B, T) ids -> logits (B, T, V) and the decoder's record,
        whose `.encoder` holds the encoder's."""
        src = src.to(self.device)
        runs = [options] if isinstance(options, RunOptions) else options
        edits, encoder_edits = self.edits(runs, src)
        return self.module(src, tgt.to(self.device), edits, encoder_edits)

    @torch.inference_mode()
    def greedy(self, src_ids: list[int], options: RunOptions = CLEAN) -> list[int]:
        """The target ids after [BOS], each the most likely next token, up to [EOS] or the
        context's end."""
        src = torch.tensor([src_ids], device=self.device)
        edits, encoder_edits = self.edits([options], src)
        memory, _ = self.module.encoder(src, encoder_edits)  # (1, S, D), computed once
        tgt = [BOS_ID]
        while len(tgt) < self.cfg.max_len:
            h, _ = self.module.decoder(
                torch.tensor([tgt], device=self.device), edits, memory=memory, memory_ids=src
            )
            logits = self.without_specials(self.module.unembed(h[0, -1]), keep=(EOS_ID,))
            tgt.append(int(logits.argmax()))
            if tgt[-1] == EOS_ID:
                break
        return tgt[1:]

    def trace_with(self, inputs: str | Sequence[int], options: RunOptions = CLEAN) -> Trace:
        """Translate the text greedily, then trace the pair (see `trace_pair`), both under
        `options` (heads knocked out, the encoder patched)."""
        source = encoded(self, inputs)
        ids = self.greedy(source.ids, options)
        return self._trace(source, [BOS_ID, *[i for i in ids if i != EOS_ID]], options)

    def trace_pair(
        self, source: str, target: str, positions: bool = True, options: RunOptions | None = None
    ) -> Trace:
        """The decoder reading a given target (teacher forcing) while attending to the
        source: the Trace of the decoder, with the encoder's in `.encoder`."""
        options = options or RunOptions(positions=positions)
        return self._trace(self.encode(source), self.encode(target, eos=False).ids, options)

    def _trace(self, source: Encoded, target_ids: list[int], options: RunOptions) -> Trace:
        target = self.encoded_ids(target_ids)
        src = torch.tensor([source.ids], device=self.device)
        tgt = torch.tensor([target.ids], device=self.device)
        (logits, record), seconds = timed(lambda: self.forward(src, tgt, options), self.device)
        trace = self.make_trace(target, record, logits, True, options, seconds)
        trace.encoder = self.make_trace(source, record.encoder, None, False, options, 0.0)
        return trace

    def _pair(self, inputs: str | Pair) -> tuple[list[int], list[int]]:
        """A text (translated greedily first) or a (source, target) pair, as ids."""
        if isinstance(inputs, str):
            src = self.encode(inputs).ids
            return src, [BOS_ID, *[i for i in self.greedy(src) if i != EOS_ID]]
        source, target = inputs
        tgt = self.encode(target, eos=False).ids if isinstance(target, str) else list(target)
        return self.ids_of(source), [int(i) for i in tgt]

    def log_probs(
        self, inputs: str | Pair, runs: Sequence[RunOptions], at: Sequence[int] | None = None
    ) -> np.ndarray:
        """[len(runs), len(at), V]: the decoder's log-probabilities, teacher-forced on the
        clean translation (or the pair's target), under each of `runs`, batched."""
        src, tgt = self._pair(inputs)
        where = list(range(len(tgt))) if at is None else list(at)
        out = []
        for part in chunks(runs):
            s = torch.tensor([src] * len(part), device=self.device)
            t = torch.tensor([tgt] * len(part), device=self.device)
            logits = self.forward(s, t, part)[0][:, where].float()
            out.append(to_numpy(torch.log_softmax(logits, dim=-1)))
        return np.concatenate(out)

    @torch.inference_mode()
    def logit_lens(self, inputs: str | Pair, at: Sequence[int] | None = None) -> np.ndarray:
        """[L + 1, T, V]: the decoder's own stream, read through the output head."""
        src, tgt = self._pair(inputs)
        record = self.forward(torch.tensor([src]), torch.tensor([tgt]))[1]
        return self.read_stream(record, at)
