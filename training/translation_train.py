"""Train and evaluate the two translators of the toy English -> Korean grammar.

- "translate": the encoder-decoder Transformer (model/transformer.py `EncoderDecoder`):
  3 encoder and 3 decoder layers, 4 heads, D = 128, cross-attention to every source token.
- "lstm": the LSTM encoder-decoder without attention (model/lstm.py `LSTMSeq2Seq`),
  D = 128: the decoder gets the source only through the encoder's final state.

Both learn with teacher forcing: the decoder reads [BOS] y1 ... yn and predicts y1 ... yn
[EOS]. AdamW, warm-up then cosine decay over the budget (steps or minutes); every
`eval_every` steps the validation loss is measured, the best weights kept, and training stops
early when it has not improved for `patience` evaluations.
"""

from __future__ import annotations

import copy
import math
import random
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from torch import Tensor, nn

from model.checkpoint import save_checkpoint
from model.lstm import LSTMSeq2Seq, RecurrentConfig
from model.registry import pick_device
from model.tokenizer import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS
from model.transformer import Config, build
from training.translation_data import (
    CLAUSE_COUNTS,
    LECTURE,
    Lexicon,
    Pair,
    clause_counts,
    rule_translation,
)

MODELS = ("translate", "lstm")
MAX_LEN = 128  # tokens; the longest pair (8 clauses) has 97 English and 50 Korean tokens
NEVER = [i for i in range(len(SPECIAL_TOKENS)) if i != EOS_ID]  # never predicted

Ids = tuple[list[int], list[int]]  # ([BOS] source [EOS], [BOS] target [EOS])


def build_model(which: str, vocab_size: int) -> tuple[nn.Module, Config | RecurrentConfig]:
    """The untrained Transformer ("translate") or LSTM ("lstm") and its config."""
    if which == "translate":
        cfg = Config(kind="encoder-decoder", vocab_size=vocab_size, n_layers=3,
                     n_decoder_layers=3, n_heads=4, d_model=128, d_mlp=512, max_len=MAX_LEN,
                     tie_embeddings=True)  # fmt: skip
        return build(cfg), cfg
    if which == "lstm":
        cfg = RecurrentConfig(vocab_size=vocab_size, d_model=128, n_layers=1, max_len=MAX_LEN)
        return LSTMSeq2Seq(cfg), cfg
    raise ValueError(f"unknown model {which!r}: one of {', '.join(MODELS)}")


# --- Data as ids --------------------------------------------------------------------------------


def encode_pairs(pairs: list[Pair], tokenizer: Tokenizer) -> list[Ids]:
    """Each pair as ([BOS] english [EOS], [BOS] korean [EOS]) ids."""
    src = tokenizer.encode_batch([p[0] for p in pairs], add_special_tokens=False)
    tgt = tokenizer.encode_batch([p[1] for p in pairs], add_special_tokens=False)
    return [
        ([BOS_ID, *s.ids, EOS_ID], [BOS_ID, *t.ids, EOS_ID]) for s, t in zip(src, tgt, strict=True)
    ]


def padded(rows: list[list[int]]) -> Tensor:
    """Right-padded (B, T) ids."""
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD_ID] * (width - len(r)) for r in rows])


def pair_batches(data: list[Ids], batch_size: int, rng: random.Random) -> Iterator[tuple]:
    """Endless shuffled batches of pairs of similar source lengths (little padding):
    source (B, S) and target (B, T) ids."""
    while True:
        order = sorted(range(len(data)), key=lambda i: (len(data[i][0]), rng.random()))
        chunks = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        rng.shuffle(chunks)
        for chunk in chunks:
            yield padded([data[i][0] for i in chunk]), padded([data[i][1] for i in chunk])


# --- Loss ---------------------------------------------------------------------------------------


def loss_on(module: nn.Module, src: Tensor, tgt: Tensor, smoothing: float = 0.0) -> Tensor:
    """Teacher forcing: the decoder reads tgt[:, :-1] and predicts tgt[:, 1:] ([PAD] ignored).
    Mean cross-entropy per target token."""
    logits, _ = module(src, tgt[:, :-1])  # (B, T - 1, V)
    return F.cross_entropy(
        logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=PAD_ID, label_smoothing=smoothing
    )


@torch.no_grad()
def valid_loss(module: nn.Module, data: list[Ids], device: str, batch_size: int = 250) -> float:
    """Mean cross-entropy per target token over `data` (no smoothing, no dropout)."""
    was_training = module.training
    module.eval()
    total, count = 0.0, 0
    for start in range(0, len(data), batch_size):
        chunk = data[start : start + batch_size]
        src, tgt = padded([c[0] for c in chunk]), padded([c[1] for c in chunk])
        n = int((tgt[:, 1:] != PAD_ID).sum())
        total += float(loss_on(module, src.to(device), tgt.to(device))) * n
        count += n
    module.train(was_training)
    return total / max(count, 1)


# --- Training -----------------------------------------------------------------------------------


def train(
    which: str,
    train_pairs: list[Pair],
    valid_pairs: list[Pair],
    tokenizer: Tokenizer,
    steps: int | None = None,
    minutes: float | None = None,
    batch_size: int = 64,
    lr: float = 1e-3,
    warmup: int = 300,
    eval_every: int = 500,
    patience: int = 6,
    smoothing: float = 0.0,
    seed: int = 0,
    device: str | None = None,
    out: str | Path | None = None,
    log=print,
) -> tuple[nn.Module, dict]:
    """Train until `steps` or `minutes` run out (whichever first) or the validation loss
    stops improving; keep the best weights; save them to `out` (if given) with the facts."""
    if steps is None and minutes is None:
        raise ValueError("give steps or minutes")
    torch.manual_seed(seed)
    rng, dev = random.Random(seed), pick_device(device)
    module, cfg = build_model(which, tokenizer.get_vocab_size())
    module = module.to(dev).train()
    train_data, valid_data = (
        encode_pairs(train_pairs, tokenizer),
        encode_pairs(valid_pairs, tokenizer),
    )
    opt = torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    budget, max_steps = (minutes * 60 if minutes else math.inf), (steps or 10**9)
    start, step, losses, history = time.time(), 0, [], []
    best = {"valid_loss": math.inf, "step": 0, "state": copy.deepcopy(module.state_dict())}
    stopped = "budget"

    def check() -> bool:
        """Measure the validation loss, keep the best weights; False: stop (no progress)."""
        loss = valid_loss(module, valid_data, dev)
        seconds = round(time.time() - start, 1)
        train_loss = float(np.mean(losses[-eval_every:])) if losses else None
        history.append({"step": step, "seconds": seconds, "train_loss": train_loss,
                        "valid_loss": loss})  # fmt: skip
        log(f"step {step:>6}  {seconds:>7.0f}s  train {train_loss or 0:.4f}  valid {loss:.4f}")
        if loss < best["valid_loss"]:
            best.update(valid_loss=loss, step=step, state=copy.deepcopy(module.state_dict()))
        return step - best["step"] < patience * eval_every

    for src, tgt in pair_batches(train_data, batch_size, rng):
        done = max(step / max_steps, (time.time() - start) / budget)
        if done >= 1:
            break
        for group in opt.param_groups:  # warm up, then cosine decay over the budget
            group["lr"] = lr * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * done))
        loss = loss_on(module, src.to(dev), tgt.to(dev), smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        opt.step()
        step += 1
        losses.append(loss.item())
        if step % eval_every == 0 and not check():
            stopped = "early stop"
            break
    if not history or history[-1]["step"] != step:
        check()
    module.load_state_dict(best["state"])
    module.eval()
    facts = {
        "model": which,
        "kind": cfg.kind,
        "steps": step,
        "seconds": round(time.time() - start, 1),
        "device": str(dev),
        "stopped": stopped,
        "best_step": best["step"],
        "best_valid_loss": best["valid_loss"],
        "valid_history": history,
        "batch_size": batch_size,
        "lr": lr,
        "warmup": warmup,
        "label_smoothing": smoothing,
        "eval_every": eval_every,
        "patience": patience,
        "seed": seed,
        "train_pairs": len(train_pairs),
        "train_clause_counts": clause_counts(train_pairs),
        "valid_pairs": len(valid_pairs),
        "parameters": sum(p.numel() for p in module.parameters()),
        "config": asdict(cfg),
    }
    if out is not None:
        save_checkpoint(module, cfg, tokenizer, out, facts)
    return module, facts


# --- Evaluation ---------------------------------------------------------------------------------


@torch.no_grad()
def greedy_batch(module: nn.Module, src: Tensor, max_len: int = MAX_LEN) -> list[list[int]]:
    """Greedy translations of a batch of sources (B, S), as the runtime classes decode one
    sentence (model/seq2seq.py, model/lstm.py): special tokens but [EOS] never picked, up to
    [EOS] (dropped) or max_len - 1 tokens."""
    b, device = src.size(0), src.device
    never = torch.tensor(NEVER, device=device)
    tokens = torch.full((b, 1), BOS_ID, device=device)  # (B, t): [BOS] and what was picked
    if isinstance(module, LSTMSeq2Seq):
        _, _, state = module.encode(src)
    else:
        memory, _ = module.encoder(src)
    for _ in range(max_len - 1):
        if isinstance(module, LSTMSeq2Seq):
            logits, _, _, state = module.decode(tokens[:, -1:], state)  # one step
            logits = logits[:, -1]
        else:
            h, _ = module.decoder(tokens, memory=memory, memory_ids=src)
            logits = module.unembed(h[:, -1])
        pick = logits.float().index_fill(-1, never, float("-inf")).argmax(-1)  # (B,)
        tokens = torch.cat([tokens, pick[:, None]], dim=1)
        if (tokens == EOS_ID).any(dim=1).all():
            break
    out = []
    for row in tokens[:, 1:].tolist():
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out


def score(predicted: list[list[int]], expected: list[list[int]]) -> dict[str, float]:
    """Exact match (the whole translation) and token accuracy: tokens equal at the same
    position, over the longer of the two lengths (a too long output is no better)."""
    pairs = list(zip(predicted, expected, strict=True))
    exact = sum(p == e for p, e in pairs)
    hits = sum(sum(a == b for a, b in zip(p, e, strict=False)) for p, e in pairs)
    slots = sum(max(len(p), len(e)) for p, e in pairs)
    n = len(expected)
    return {"n": n, "exact_match": exact / max(n, 1), "token_accuracy": hits / max(slots, 1)}


def evaluate_translator(m, pairs: list[Pair], batch_size: int = 250) -> dict:
    """A loaded translator (model.load) on `pairs`: scores by number of clauses and overall."""
    data = encode_pairs(pairs, m.tokenizer)
    predicted: list[list[int]] = []
    for start in range(0, len(data), batch_size):
        chunk = data[start : start + batch_size]
        src = padded([c[0] for c in chunk]).to(m.device)
        predicted += greedy_batch(m.module, src, m.max_len)
    expected = [tgt[1:-1] for _, tgt in data]
    report = {"by_clauses": {}}
    for n in CLAUSE_COUNTS:
        idx = [i for i, p in enumerate(pairs) if p[2] == n]
        if idx:
            chosen = [predicted[i] for i in idx], [expected[i] for i in idx]
            report["by_clauses"][str(n)] = score(*chosen)
    report["overall"] = score(predicted, expected)
    return report


def lecture_outputs(m, lex: Lexicon) -> list[dict]:
    """The lecture's pairs (never trained on) through the translator's own `translate`."""
    rows = []
    for source in LECTURE:
        reference, output = rule_translation(lex, source), m.translate(source).text
        rows.append({"source": source, "reference": reference, "output": output,
                     "exact": output == reference})  # fmt: skip
    return rows
