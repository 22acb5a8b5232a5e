"""The from-scratch encoder-decoder Transformer (translation), with what the app asks of it.

    m = model.load("translate")            # a checkpoint folder whose kind is encoder-decoder
    m.translate("i go to school")          # greedy decoding, token by token
    t = m.trace("i go to school")          # translate, then trace the pair:
    t.encoder                              #   the encoder's own Trace (the source tokens)
    t.layers, t.cross_layers               #   decoder self-attention and cross-attention
    t.cross_layers[0].attention            #   [H, T_target, T_source]

The encoder reads [BOS] source [EOS]; the decoder reads [BOS] y1 ... yn and predicts
y1 ... yn [EOS], its queries looking back at every source token through cross-attention.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from model.text import Encoded, TextTransformer, Translator, timed
from model.tokenizer import BOS_ID, EOS_ID
from model.trace import Trace
from model.transformer import Record


class TransformerSeq2Seq(Translator, TextTransformer):
    """An encoder-decoder Transformer (model/transformer.py `EncoderDecoder`)."""

    def stack(self) -> nn.Module:
        """The decoder: its embedding (shared with the encoder) and self-attention layers."""
        return self.module.decoder

    @torch.inference_mode()
    def forward(self, src: Tensor, tgt: Tensor, positions: bool = True) -> tuple[Tensor, Record]:
        """Source (B, S) and target (B, T) ids -> logits (B, T, V) and the decoder's record,
        whose `.encoder` holds the encoder's."""
        return self.module(src.to(self.device), tgt.to(self.device), positions=positions)

    @torch.inference_mode()
    def greedy(self, src_ids: list[int], positions: bool = True) -> list[int]:
        """The target ids after [BOS], each the most likely next token, up to [EOS] or the
        context's end."""
        src = torch.tensor([src_ids], device=self.device)
        memory, _ = self.module.encoder(src, positions)  # (1, S, D), computed once
        tgt = [BOS_ID]
        while len(tgt) < self.cfg.max_len:
            h, _ = self.module.decoder(
                torch.tensor([tgt], device=self.device), positions, memory=memory, memory_ids=src
            )
            logits = self.without_specials(self.module.unembed(h[0, -1]), keep=(EOS_ID,))
            tgt.append(int(logits.argmax()))
            if tgt[-1] == EOS_ID:
                break
        return tgt[1:]

    def trace(self, inputs: str, positions: bool = True) -> Trace:
        """Translate the text greedily, then trace the pair (see `trace_pair`)."""
        source = self.encode(inputs)
        ids = self.greedy(source.ids, positions)
        return self._trace(source, [BOS_ID, *[i for i in ids if i != EOS_ID]], positions)

    def trace_pair(self, source: str, target: str, positions: bool = True) -> Trace:
        """The decoder reading a given target (teacher forcing) while attending to the
        source: the Trace of the decoder, with the encoder's in `.encoder`."""
        return self._trace(self.encode(source), self.encode(target, eos=False).ids, positions)

    def _trace(self, source: Encoded, target_ids: list[int], positions: bool) -> Trace:
        target = self.encoded_ids(target_ids)
        src = torch.tensor([source.ids], device=self.device)
        tgt = torch.tensor([target.ids], device=self.device)
        (logits, record), seconds = timed(lambda: self.forward(src, tgt, positions), self.device)
        trace = self.make_trace(target, record, logits, True, positions, seconds)
        trace.encoder = self.make_trace(source, record.encoder, None, False, positions, 0.0)
        return trace
