"""The RNN bottleneck: an LSTM encoder-decoder without attention, as the lecture opens.

    m = model.load("lstm")                 # a checkpoint folder whose kind is "recurrent"
    m.translate("i go to school")          # greedy decoding, token by token
    t = m.trace("i go to school")
    t.encoder.states                       # [S, D] the encoder's hidden state after each token
    t.context                              # [D] the one vector the decoder gets: the
                                           #     encoder's final hidden state h
    t.states                               # [T, D] the decoder's hidden state after each step

The encoder reads [BOS] source [EOS] and keeps only its final state (h, c). The decoder
starts from that state and reads [BOS] y1 ... yn, predicting y1 ... yn [EOS]; it sees nothing
else of the source: no attention, so the whole sentence must pass through h (D numbers,
as wide as the Transformer's d_model). One layer by default, so the context vector is that
layer's h (with more layers: the top layer's, the decoder starting from every layer's).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from model.checkpoint import TOKENIZER, read_config, read_weights
from model.options import CLEAN, RunOptions, check_heads
from model.text import Encoded, Translator, timed, to_numpy
from model.tokenizer import BOS_ID, EOS_ID
from model.trace import Trace

NO_POSITIONS = RunOptions(positions=False)
State = tuple[Tensor, Tensor]  # (h, c), each (L, B, D): L layers, B sentences


@dataclass
class RecurrentConfig:
    """Hyper-parameters; stored inside every checkpoint so loading needs nothing else."""

    kind: str = "recurrent"
    vocab_size: int = 4096  # V: one vocabulary for both languages
    d_model: int = 128  # D: embedding width = hidden state width = the context vector's
    n_layers: int = 1  # stacked LSTM layers in the encoder and in the decoder
    max_len: int = 128  # the longest source, and the longest translation, in tokens
    dropout: float = 0.1  # on embeddings and decoder outputs, during training only
    pad_id: int = 0  # the [PAD] token: the encoder stops before it


@dataclass
class RecurrentRecord:
    """What one forward pass computed, still as tensors."""

    source_embed: Tensor  # (B, S, D) source token embeddings
    encoder_states: Tensor  # (B, S, D) the encoder's (top layer's) h after each token
    context: Tensor  # (B, D) the encoder's final h: all the decoder gets of the source
    target_embed: Tensor  # (B, T, D) target token embeddings
    decoder_states: Tensor  # (B, T, D) the decoder's (top layer's) h after each step


class LSTMSeq2Seq(nn.Module):
    """Embedding (shared by both languages) -> LSTM encoder -> (h, c) -> LSTM decoder -> V."""

    def __init__(self, cfg: RecurrentConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d, between = cfg.d_model, cfg.dropout if cfg.n_layers > 1 else 0.0
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.encoder = nn.LSTM(d, d, cfg.n_layers, batch_first=True, dropout=between)
        self.decoder = nn.LSTM(d, d, cfg.n_layers, batch_first=True, dropout=between)
        self.drop = nn.Dropout(cfg.dropout)
        self.unembed = nn.Linear(d, cfg.vocab_size)  # hidden state -> logits

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor, State]:
        """src (B, S) right-padded ids -> embeddings (B, S, D), states (B, S, D; zeros after
        a sentence's end) and the final (h, c), each (L, B, D), at each sentence's last token."""
        embed = self.embed(src)  # (B, S, D)
        lengths = (src != self.cfg.pad_id).sum(1).cpu()
        packed = pack_padded_sequence(
            self.drop(embed), lengths, batch_first=True, enforce_sorted=False
        )
        out, final = self.encoder(packed)
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        return embed, states, final

    def decode(self, tgt: Tensor, state: State) -> tuple[Tensor, Tensor, Tensor, State]:
        """tgt (B, T) ids, from `state` (h, c) -> logits (B, T, V), embeddings (B, T, D),
        states (B, T, D) and the state after the last step (to continue one step at a time)."""
        embed = self.embed(tgt)  # (B, T, D)
        states, state = self.decoder(self.drop(embed), state)  # (B, T, D)
        return self.unembed(self.drop(states)), embed, states, state

    def forward(self, src: Tensor, tgt: Tensor) -> tuple[Tensor, RecurrentRecord]:
        """src (B, S), tgt (B, T) -> logits (B, T, V) and the record of the pass."""
        source_embed, encoder_states, final = self.encode(src)
        logits, target_embed, decoder_states, _ = self.decode(tgt, final)
        record = RecurrentRecord(
            source_embed, encoder_states, final[0][-1], target_embed, decoder_states
        )
        return logits, record


# --- Checkpoints: the same folder format as the Transformers' (model/checkpoint.py) ---------


def load_recurrent(
    folder: str | Path, device: str = "cpu"
) -> tuple[LSTMSeq2Seq, RecurrentConfig, Tokenizer]:
    """Model (eval mode, on `device`), config and tokenizer from a checkpoint folder; written
    by model.checkpoint.save_checkpoint. Safetensors and JSON only: nothing is executed."""
    folder = Path(folder)
    state = read_weights(folder)
    module = LSTMSeq2Seq(cfg := read_config(folder, RecurrentConfig))
    module.load_state_dict(state)  # strict: every weight, no other
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
    return module.to(device).eval(), cfg, tokenizer


# --- What the app asks of it ----------------------------------------------------------------


class RecurrentTranslator(Translator):
    """A trained LSTM encoder-decoder, ready for the app: translate and trace."""

    kind = "recurrent"
    positional = "none"  # order comes from reading one token after the other

    def __init__(
        self,
        module: LSTMSeq2Seq,
        cfg: RecurrentConfig,
        tokenizer: Tokenizer,
        device: str,
        name: str,
    ) -> None:
        self.module, self.cfg, self.tokenizer = module, cfg, tokenizer
        self.device, self.name, self.max_len = str(device), name, cfg.max_len

    @classmethod
    def from_folder(cls, folder: str | Path, name: str, device: str) -> RecurrentTranslator:
        module, cfg, tokenizer = load_recurrent(folder, device)
        return cls(module, cfg, tokenizer, device, name)

    def embedding_matrix(self) -> np.ndarray:
        return to_numpy(self.module.embed.weight)

    # -- translate ------------------------------------------------------------------------

    @torch.inference_mode()
    def greedy(self, src_ids: list[int]) -> list[int]:
        """The target ids after [BOS], each the most likely next token (special tokens but
        [EOS] aside), up to [EOS] or max_len."""
        src = torch.tensor([src_ids], device=self.device)
        _, _, state = self.module.encode(src)  # the context: (h, c), each (L, 1, D)
        never = torch.tensor(
            [i for i in self.special_ids().values() if i != EOS_ID], device=self.device
        )
        token, ids = BOS_ID, []
        while len(ids) < self.cfg.max_len - 1:  # room for [BOS] in the trace
            step = torch.tensor([[token]], device=self.device)
            logits, _, _, state = self.module.decode(step, state)  # one step, from `state`
            token = int(logits[0, -1].index_fill(0, never, float("-inf")).argmax())
            ids.append(token)
            if token == EOS_ID:
                break
        return ids

    # -- trace ----------------------------------------------------------------------------

    def trace_with(self, inputs: str, options: RunOptions = CLEAN) -> Trace:
        """Translate the text greedily, then trace the pair (see `trace_pair`). `positions` is
        accepted for the contract; a recurrent model adds no positional encoding and has no
        heads to knock out nor a residual stream to patch (a ValueError says so)."""
        check_heads(options, {}, self.name)
        if options.patch is not None:
            raise ValueError(f"'{self.name}' (recurrent) has no residual stream to patch")
        source = self.encode(inputs)
        ids = self.greedy(source.ids)
        return self._trace(source, [BOS_ID, *[i for i in ids if i != EOS_ID]])

    def trace_pair(self, source: str, target: str, positions: bool = True) -> Trace:
        """The decoder reading a given target (teacher forcing) from the source's context
        vector: the Trace of the decoder, with the encoder's in `.encoder`."""
        return self._trace(self.encode(source), self.encode(target, eos=False).ids)

    @torch.inference_mode()
    def _trace(self, source: Encoded, target_ids: list[int]) -> Trace:
        target_ids = target_ids[: self.cfg.max_len]
        src = torch.tensor([source.ids], device=self.device)
        tgt = torch.tensor([target_ids], device=self.device)
        (logits, rec), seconds = timed(lambda: self.module(src, tgt), self.device)
        context = to_numpy(rec.context[0])  # [D]
        encoder = self._steps(source, rec.source_embed, rec.encoder_states, None, context, 0.0)
        target = self.encoded_ids(target_ids)
        trace = self._steps(target, rec.target_embed, rec.decoder_states, logits, context, seconds)
        trace.encoder = encoder
        return trace

    def _steps(
        self,
        enc: Encoded,
        embed: Tensor,
        states: Tensor,
        logits: Tensor | None,
        context: np.ndarray,
        seconds: float,
    ) -> Trace:
        """One side (encoder or decoder) of sentence 0 as a Trace: no attention layers, the
        hidden state after each step instead."""
        n = len(enc.ids)
        return Trace(
            tokens=enc.tokens,
            ids=np.array(enc.ids),
            offsets=enc.offsets,
            embeddings=to_numpy(embed[0]),
            positional=np.zeros((n, self.cfg.d_model), dtype=np.float32),
            layers=[],
            logits=to_numpy(logits[0]) if logits is not None else np.zeros((n, 0)),
            causal=True,  # each state has read only the tokens up to its own
            truncated=enc.truncated,
            n_input_tokens=enc.n_input_tokens,
            options=NO_POSITIONS,  # no positional encoding: order is the reading order
            device=self.device,
            seconds=seconds,
            states=to_numpy(states[0]),  # [T, D]
            context=context,  # [D]
            raw_tokens=enc.raw_tokens,
            fragment_of=enc.fragment_of,
        )
