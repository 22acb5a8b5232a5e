"""Evaluate the shipped models on the test split: `python -m training.evaluate [--out FILE]`.

Prints a JSON report:
- mlm: masked top-1 / top-5 accuracy against a unigram baseline (the most frequent
  training tokens);
- clm: perplexity against unigram and add-k bigram baselines (k chosen on validation);
- probes: the top-5 for "bank" masked in each of the lecture's bank sentences, and the
  cosine between the two "bank" vectors at the input and after each layer.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F

from model.bundle import Bundle, load
from model.examples import PROBES
from model.tokenizer import EOS_ID, MASK_ID, PAD_ID, SPECIAL_TOKENS
from training.data import load_split
from training.train import IGNORE, tokenize

BANK_SENTENCES = [PROBES[0], PROBES[1]]  # river bank, money bank


def padded(seqs: list[list[int]]) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [PAD_ID] * (width - len(s)) for s in seqs])


def unigram_counts(seqs: list[list[int]], vocab_size: int) -> np.ndarray:
    counts = np.zeros(vocab_size)
    for s in seqs:
        np.add.at(counts, s[1:], 1)  # every token a model predicts ([EOS] included)
    return counts


def masked_accuracy(bundle: Bundle, test: list[list[int]], train: list[list[int]]) -> dict:
    """Mask 15% of real tokens (seeded) with [MASK]; top-1 / top-5 accuracy there."""
    gen = torch.Generator().manual_seed(0)
    hits1 = hits5 = n = 0
    for start in range(0, len(test), 256):
        ids = padded(test[start : start + 256])
        real = ids >= len(SPECIAL_TOKENS)
        chosen = (torch.rand(ids.shape, generator=gen) < 0.15) & real
        logits, _ = bundle.forward(ids.masked_fill(chosen, MASK_ID))
        top5 = logits[chosen.to(logits.device)].topk(5, dim=-1).indices.cpu()
        gold = ids[chosen]
        hits1 += int((top5[:, 0] == gold).sum())
        hits5 += int((top5 == gold[:, None]).any(-1).sum())
        n += int(chosen.sum())
    # the baseline always answers with the most frequent real tokens of the training split
    counts = unigram_counts(train, bundle.cfg.vocab_size)
    counts[: len(SPECIAL_TOKENS)] = 0
    ranked = np.argsort(-counts)[:5]
    gold_counts = Counter()
    gen = torch.Generator().manual_seed(0)
    for start in range(0, len(test), 256):
        ids = padded(test[start : start + 256])
        chosen = (torch.rand(ids.shape, generator=gen) < 0.15) & (ids >= len(SPECIAL_TOKENS))
        gold_counts.update(ids[chosen].tolist())
    base1 = gold_counts[int(ranked[0])] / n
    base5 = sum(gold_counts[int(i)] for i in ranked) / n
    return {
        "masked_tokens": n,
        "top1": hits1 / n,
        "top5": hits5 / n,
        "unigram_top1": base1,
        "unigram_top5": base5,
        "top5_vs_unigram": (hits5 / n) / base5,
    }


def causal_perplexity(bundle: Bundle, test: list[list[int]]) -> tuple[float, int]:
    total, n = 0.0, 0
    for start in range(0, len(test), 256):
        ids = padded(test[start : start + 256])
        inputs = ids[:, :-1].masked_fill(ids[:, :-1] == EOS_ID, PAD_ID)
        labels = ids[:, 1:].masked_fill(ids[:, 1:] == PAD_ID, IGNORE)
        logits, _ = bundle.forward(inputs)
        loss = F.cross_entropy(
            logits.flatten(0, 1).cpu(), labels.flatten(), ignore_index=IGNORE, reduction="sum"
        )
        total += float(loss)
        n += int((labels != IGNORE).sum())
    return math.exp(total / n), n


def bigram_perplexity(train: list[list[int]], test: list[list[int]], vocab: int, k: float):
    """Add-k smoothed bigram P(b | a) = (c(a, b) + k) / (c(a) + k V)."""
    pairs: Counter = Counter()
    left: Counter = Counter()
    for s in train:
        for a, b in zip(s[:-1], s[1:], strict=False):
            pairs[a, b] += 1
            left[a] += 1
    nll, n = 0.0, 0
    for s in test:
        for a, b in zip(s[:-1], s[1:], strict=False):
            nll -= math.log((pairs[a, b] + k) / (left[a] + k * vocab))
            n += 1
    return math.exp(nll / n)


def unigram_perplexity(train: list[list[int]], test: list[list[int]], vocab: int) -> float:
    counts = unigram_counts(train, vocab) + 1.0  # add-one
    logp = np.log(counts / counts.sum())
    nll = -sum(logp[s[1:]].sum() for s in test)
    return float(math.exp(nll / sum(len(s) - 1 for s in test)))


def bank_probes(bundle: Bundle) -> dict:
    """Fill-mask "bank" in both sentences; cosine of the two "bank" vectors layer by layer."""
    report: dict = {}
    if not bundle.causal:
        report["fill_mask"] = {
            s: bundle.fill_mask(s.replace("bank.", "[MASK]."), k=5)[0] for s in BANK_SENTENCES
        }
    vectors = []
    for s in BANK_SENTENCES:
        t = bundle.trace(s)
        i = max(j for j, tok in enumerate(t.tokens) if tok == "bank")
        vectors.append(t.residual_stream()[:, i])  # [L + 1, D]
    a, b = vectors
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    names = ["input"] + [f"layer {i + 1}" for i in range(len(cos) - 1)]
    report["bank_cosine"] = dict(zip(names, np.round(cos, 4).tolist(), strict=True))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="also write the report to this file")
    parser.add_argument("--device", default=None)
    parser.add_argument("--limit", type=int, default=None, help="test sentences to use")
    args = parser.parse_args()
    torch.set_grad_enabled(False)
    mlm, clm = load("mlm", args.device), load("clm", args.device)
    train = tokenize(load_split("train"), mlm.tokenizer, "mlm", mlm.cfg.max_len)
    valid = tokenize(load_split("valid"), mlm.tokenizer, "mlm", mlm.cfg.max_len)[:3000]
    test = tokenize(load_split("test"), mlm.tokenizer, "mlm", mlm.cfg.max_len)
    test = test[: args.limit] if args.limit else test
    vocab = mlm.cfg.vocab_size
    ks = [1.0, 0.1, 0.01, 0.001]
    best_k = min(ks, key=lambda k: bigram_perplexity(train, valid, vocab, k))
    # the two checkpoints ship their own tokenizer; the clm is scored on its own ids
    clm_test = tokenize(load_split("test"), clm.tokenizer, "clm", clm.cfg.max_len)
    clm_test = clm_test[: args.limit] if args.limit else clm_test
    ppl, n_pred = causal_perplexity(clm, clm_test)
    bigram = bigram_perplexity(train, test, vocab, best_k)
    if clm.tokenizer.get_vocab() != mlm.tokenizer.get_vocab():
        raise SystemExit("the mlm and clm checkpoints must share one tokenizer for the baselines")
    report = {
        "test_sentences": len(test),
        "mlm": masked_accuracy(mlm, test, train),
        "clm": {
            "predicted_tokens": n_pred,
            "perplexity": ppl,
            "unigram_perplexity": unigram_perplexity(train, test, vocab),
            "bigram_perplexity": bigram,
            "bigram_k": best_k,
            "perplexity_vs_bigram": ppl / bigram,
        },
        "probes": {"mlm": bank_probes(mlm), "clm": bank_probes(clm)},
        "clm_samples": {
            p: clm.generate(p, max_new_tokens=12, temperature=0.8, top_k=40, seed=0).text
            for p in ("I go to school", "the dog bit the man", "the cat sat")
        },
    }
    report["goals"] = {
        "mlm_top5_at_least_2x_unigram": report["mlm"]["top5_vs_unigram"] >= 2,
        "clm_perplexity_at_most_0.6x_bigram": report["clm"]["perplexity_vs_bigram"] <= 0.6,
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
