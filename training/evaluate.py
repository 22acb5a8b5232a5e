"""Evaluate checkpoints on the held-out data: `python -m training.evaluate [--models ...]`.

Writes a JSON report (default assets/models/evaluation.json) with, for each model:
- an encoder (BERT-style): masked top-1 / top-5 accuracy against a unigram baseline (the
  most frequent training tokens), and the top-5 for "bank" masked in the lecture's two bank
  sentences;
- a decoder (GPT-style): perplexity against unigram and add-k bigram baselines (k chosen
  on validation), and three seeded samples;
- embeddings: how often WordNet synonyms and co-hyponyms are among each other's 10
  nearest input embeddings, against random word pairs; the neighbours of lecture words;
- context: the cosine between the two "bank" vectors of the lecture's sentences, and
  between one ambiguous word's vectors in two held-out WordNet examples of two senses, at
  the input and after each layer.
Each model is scored with its own tokenizer; the baselines are counted with it too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import torch
import torch.nn.functional as F

import model
from model.examples import MONEY_BANK, RIVER_BANK
from model.tokenizer import EOS_ID, MASK_ID, PAD_ID, SPECIAL_TOKENS
from training import wordnet
from training.data import load_split
from training.probes import normalize
from training.train import IGNORE, tokenize

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "assets" / "models" / "evaluation.json"
QUICK_TEST, QUICK_TRAIN, QUICK_VALID = 300, 20_000, 500  # sentences, with --quick
N_PAIRS, N_SENSE_PAIRS, K_NEIGHBOURS = 300, 20, 10
LECTURE_WORDS = ("steel", "aluminum", "rubber", "cat", "bank", "python", "school")
SAMPLE_PROMPTS = ("I go to school", "the dog bit the man", "the cat sat")
N_SPECIAL = len(SPECIAL_TOKENS)  # the special tokens are ids 0 .. N_SPECIAL - 1


# --- Masked accuracy and perplexity --------------------------------------------------------


def padded(seqs: list[list[int]]) -> torch.Tensor:
    """Sequences as one (B, T) tensor, right-padded with [PAD]."""
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [PAD_ID] * (width - len(s)) for s in seqs])


def unigram_counts(seqs: list[list[int]], vocab_size: int) -> np.ndarray:
    """How often each id is a target (every token after [BOS])."""
    counts = np.zeros(vocab_size)
    for s in seqs:
        np.add.at(counts, s[1:], 1)  # every token a model predicts ([EOS] included)
    return counts


def masked_accuracy(m: Any, test: list[list[int]], train: list[list[int]]) -> dict:
    """Mask 15% of real tokens (seeded) with [MASK]; top-1 / top-5 accuracy there."""
    gen = torch.Generator().manual_seed(0)
    hits1 = hits5 = 0
    gold_counts: Counter = Counter()
    for start in range(0, len(test), 256):
        ids = padded(test[start : start + 256])
        chosen = (torch.rand(ids.shape, generator=gen) < 0.15) & (ids >= N_SPECIAL)
        logits, _ = m.forward(ids.masked_fill(chosen, MASK_ID))
        top5 = logits[chosen.to(logits.device)].topk(5, dim=-1).indices.cpu()
        gold = ids[chosen]
        hits1 += int((top5[:, 0] == gold).sum())
        hits5 += int((top5 == gold[:, None]).any(-1).sum())
        gold_counts.update(gold.tolist())
    n = sum(gold_counts.values())
    # the baseline always answers with the most frequent real tokens of the training split
    counts = unigram_counts(train, m.cfg.vocab_size)
    counts[:N_SPECIAL] = 0
    ranked = np.argsort(-counts)[:5]
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


def causal_perplexity(m: Any, test: list[list[int]]) -> tuple[float, int]:
    """exp(mean next-token loss) over the test tokens, and how many tokens were predicted."""
    total, n = 0.0, 0
    for start in range(0, len(test), 256):
        ids = padded(test[start : start + 256])
        inputs = ids[:, :-1].masked_fill(ids[:, :-1] == EOS_ID, PAD_ID)
        labels = ids[:, 1:].masked_fill(ids[:, 1:] == PAD_ID, IGNORE)
        logits, _ = m.forward(inputs)
        loss = F.cross_entropy(
            logits.flatten(0, 1).float().cpu(),
            labels.flatten(),
            ignore_index=IGNORE,
            reduction="sum",
        )
        total += float(loss)
        n += int((labels != IGNORE).sum())
    return math.exp(total / n), n


def bigram_counts(train: list[list[int]]) -> tuple[Counter, Counter]:
    """c(a, b) and c(a) over the training split."""
    pairs: Counter = Counter()
    for s in train:
        pairs.update(zip(s[:-1], s[1:], strict=False))
    left: Counter = Counter()
    for (a, _), c in pairs.items():
        left[a] += c
    return pairs, left


def bigram_perplexity(
    counts: tuple[Counter, Counter], test: list[list[int]], vocab: int, k: float
) -> float:
    """Add-k smoothed bigram P(b | a) = (c(a, b) + k) / (c(a) + k V)."""
    pairs, left = counts
    nll, n = 0.0, 0
    for s in test:
        for a, b in zip(s[:-1], s[1:], strict=False):
            nll -= math.log((pairs[a, b] + k) / (left[a] + k * vocab))
            n += 1
    return math.exp(nll / n)


def unigram_perplexity(train: list[list[int]], test: list[list[int]], vocab: int) -> float:
    """Perplexity of add-one smoothed training token frequencies."""
    counts = unigram_counts(train, vocab) + 1.0  # add-one
    logp = np.log(counts / counts.sum())
    nll = -sum(logp[s[1:]].sum() for s in test)
    return float(math.exp(nll / sum(len(s) - 1 for s in test)))


def perplexity_report(m: Any, data: dict[str, list[list[int]]]) -> dict:
    """The decoder's test perplexity next to the unigram and the best add-k bigram."""
    vocab = m.cfg.vocab_size
    counts = bigram_counts(data["train"])
    best_k = min(
        (1.0, 0.1, 0.01, 0.001), key=lambda k: bigram_perplexity(counts, data["valid"], vocab, k)
    )
    ppl, n_pred = causal_perplexity(m, data["test"])
    bigram = bigram_perplexity(counts, data["test"], vocab, best_k)
    return {
        "predicted_tokens": n_pred,
        "perplexity": ppl,
        "unigram_perplexity": unigram_perplexity(data["train"], data["test"], vocab),
        "bigram_perplexity": bigram,
        "bigram_k": best_k,
        "perplexity_vs_bigram": ppl / bigram,
    }


# --- The lecture's probes ------------------------------------------------------------------


def fill_mask(m: Any, text: str, k: int = 5) -> list[tuple[str, float]]:
    """The k most likely real tokens for the first [MASK] in `text`, with probabilities."""
    ids = m.encode(text).ids
    # a copy: the model's outputs are inference tensors, which cannot be edited in place
    logits = m.forward(torch.tensor([ids]))[0][0, ids.index(MASK_ID)].float().cpu().clone()
    logits[:N_SPECIAL] = -math.inf
    top = torch.softmax(logits, -1).topk(k)
    return [
        (m.tokenizer.id_to_token(int(i)), round(float(p), 4))
        for p, i in zip(top.values, top.indices, strict=True)
    ]


def sample(m: Any, prompt: str, n: int = 12, temperature: float = 0.8, top_k: int = 40) -> str:
    """A seeded continuation (seed 0) by the model's own `generate`, as the causal page
    writes it click by click."""
    return m.generate(prompt, max_new_tokens=n, temperature=temperature, top_k=top_k).text


def word_states(m: Any, sentence: str, word: str) -> np.ndarray | None:
    """[L + 1, D]: the first `word` token's vector at the input and after each layer."""
    t = m.trace(sentence)
    where = [i for i, tok in enumerate(t.tokens) if tok == word]
    return t.residual_stream()[:, where[0]] if where else None


def layer_cosines(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Cosine between two [L + 1, D] stacks of vectors, layer by layer."""
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return [round(float(c), 4) for c in cos]


def layer_names(n: int) -> list[str]:
    """ "input", "layer 1", ... "layer n - 1"."""
    return ["input"] + [f"layer {i}" for i in range(1, n)]


# --- Embeddings ----------------------------------------------------------------------------


def nearest_ids(emb: np.ndarray, query: list[int], k: int, exclude: list[int]) -> np.ndarray:
    """[len(query), k]: the ids of each query's k nearest rows by cosine, nearest first.
    The query itself and the `exclude` ids are never neighbours."""
    unit = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    cos = unit[query] @ unit.T
    cos[:, exclude] = -np.inf
    cos[np.arange(len(query)), query] = -np.inf
    top = np.argpartition(-cos, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(cos, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)


def hit_rates(emb: np.ndarray, pairs: list[tuple[int, int]], k: int, exclude: list[int]) -> dict:
    """Share of pairs (a, b) where b is among a's k nearest or a among b's ("either", the
    headline), and the share of the 2 n directed lookups that hit ("one_direction")."""
    if not pairs:
        return {"pairs": 0, "either": None, "one_direction": None}
    a, b = (np.array(side) for side in zip(*pairs, strict=True))
    a_hits = (nearest_ids(emb, list(a), k, exclude) == b[:, None]).any(axis=1)
    b_hits = (nearest_ids(emb, list(b), k, exclude) == a[:, None]).any(axis=1)
    return {
        "pairs": len(pairs),
        "either": float((a_hits | b_hits).mean()),
        "one_direction": float((a_hits.mean() + b_hits.mean()) / 2),
    }


def embedding_report(m: Any, pairs: wordnet.WordPairs) -> dict:
    """Neighbour hit rates of the WordNet pairs against random pairs; lecture neighbours."""
    emb, vocab = m.embedding_matrix(), m.tokenizer.get_vocab()
    specials = list(range(N_SPECIAL))
    rates = {
        kind: hit_rates(
            emb, [(vocab[a], vocab[b]) for a, b in getattr(pairs, kind)], K_NEIGHBOURS, specials
        )
        for kind in ("synonyms", "cohyponyms", "random")
    }
    chance = rates["random"]["either"]
    for kind in ("synonyms", "cohyponyms"):
        either = rates[kind]["either"]
        rates[kind]["either_vs_random"] = either / chance if either is not None and chance else None
    neighbours = {}
    for word in LECTURE_WORDS:
        if word in vocab:
            near = nearest_ids(emb, [vocab[word]], K_NEIGHBOURS, specials)[0]
            neighbours[word] = [m.tokenizer.id_to_token(int(i)) for i in near]
        else:
            pieces = m.tokenizer.encode(word, add_special_tokens=False).tokens
            neighbours[word] = f"not one token: {' '.join(pieces)}"
    return {
        "k": K_NEIGHBOURS,
        "headline": "either: one word of the pair is among the other's k nearest",
        "chance_one_direction": K_NEIGHBOURS / (len(emb) - N_SPECIAL - 1),
        **rates,
        "neighbours": neighbours,
    }


# --- Context ------------------------------------------------------------------------------


def context_report(m: Any, senses: list[wordnet.SensePair]) -> dict:
    """Per layer: the two lecture "bank" vectors' cosine, and the mean over the sense pairs."""
    bank = layer_cosines(word_states(m, RIVER_BANK, "bank"), word_states(m, MONEY_BANK, "bank"))
    names = layer_names(len(bank))
    per_pair = {}
    for pair in senses:
        a, b = (word_states(m, s, pair.word) for s in pair.sentences)
        if a is not None and b is not None:
            per_pair[pair.word] = layer_cosines(a, b)
    mean = np.mean(list(per_pair.values()), axis=0) if per_pair else []
    return {
        "bank_cosine": dict(zip(names, bank, strict=True)),
        "sense_pairs": len(per_pair),
        "sense_mean_cosine": dict(zip(names, [round(float(c), 4) for c in mean], strict=False)),
        "sense_cosines": per_pair,
    }


# --- Putting it together ---------------------------------------------------------------------


def tokenizer_shared(m: Any, splits: dict, wn: dict, cache: dict) -> dict:
    """What models with one tokenizer share, made once: the splits' token ids and the
    WordNet samples of words that are one token."""
    key = hashlib.sha256(f"{m.cfg.max_len}|{m.tokenizer.to_str()}".encode()).hexdigest()
    if key not in cache:
        vocab = m.tokenizer.get_vocab()

        def is_word(w: str) -> bool:  # WordPiece keeps a whole word in its vocabulary as one id
            return vocab.get(w, -1) >= N_SPECIAL

        ids = {
            split: tokenize(lines, m.tokenizer, m.kind, m.cfg.max_len)
            for split, lines in splits.items()
        }
        pairs = wordnet.word_pairs(wn["synsets"], is_word, N_PAIRS)
        senses = wordnet.sense_pairs(
            wn["synsets"], wn["held_out"], normalize, is_word, N_SENSE_PAIRS
        )
        cache[key] = {"ids": ids, "pairs": pairs, "senses": senses, "models": []}
    return cache[key]


def evaluate_model(m: Any, shared: dict) -> dict:
    """Everything the report says about one model."""
    report: dict = {"kind": m.cfg.kind, "vocab_size": m.cfg.vocab_size}
    ids = shared["ids"]
    if m.cfg.kind == "encoder":
        report["masked"] = masked_accuracy(m, ids["test"], ids["train"])
        banks = (RIVER_BANK, MONEY_BANK)
        report["fill_mask"] = {s: fill_mask(m, s.replace("bank.", "[MASK].")) for s in banks}
        report["goal_top5_at_least_2x_unigram"] = report["masked"]["top5_vs_unigram"] >= 2
    else:
        report["perplexity"] = ppl = perplexity_report(m, ids)
        report["samples"] = {p: sample(m, p) for p in SAMPLE_PROMPTS}
        report["goal_perplexity_at_most_0.6x_bigram"] = ppl["perplexity_vs_bigram"] <= 0.6
    report["embeddings"] = embedding_report(m, shared["pairs"])
    report["context"] = context_report(m, shared["senses"])
    return report


def compact_json(report: dict) -> str:
    """Indented JSON with every innermost list on one line. JSON strings never hold a raw
    newline, so whitespace with a newline in it is layout, and only that is changed."""

    def one_line(match: re.Match) -> str:
        text = re.sub(r"^\[\s*\n\s*", "[", match.group(0))
        return re.sub(r"\s*\n\s*", " ", re.sub(r"\s*\n\s*\]$", "]", text))

    return re.sub(r"\[[^\[\]{}]*\]", one_line, json.dumps(report, indent=2, ensure_ascii=False))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m training.evaluate", description="Evaluate checkpoints on held-out data."
    )
    add = parser.add_argument
    add(
        "--models",
        nargs="+",
        default=["mlm", "clm"],
        metavar="NAME_OR_FOLDER",
        help="shipped names or checkpoint folders (default: mlm clm); the kind comes from "
        "each checkpoint's config: encoder -> masked metrics, decoder -> perplexity",
    )
    add("--out", type=Path, default=DEFAULT_OUT, help=f"the JSON report (default: {DEFAULT_OUT})")
    add(
        "--quick",
        action="store_true",
        help=f"{QUICK_TEST} test and {QUICK_TRAIN} training sentences only, for tests",
    )
    add("--device", default="cpu", help="cpu (default), cuda or auto")
    add("--wordnet", type=Path, default=wordnet.WORDNET_ROOT, help="WordNet 3.0's data folder")
    return parser.parse_args(argv)


def fail(message: str) -> NoReturn:
    """One line on stderr, exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not wordnet.available(args.wordnet):
        fail(f"WordNet 3.0 is missing from {args.wordnet}: sudo apt-get install wordnet-base")
    start = time.perf_counter()
    torch.set_grad_enabled(False)
    models = {}
    for name in args.models:
        try:
            models[name] = model.load(name, device=args.device)
        except (OSError, KeyError, ValueError) as err:  # no such model, or a broken one
            fail(f"cannot load {name}: {err}")
        if models[name].cfg.kind not in ("encoder", "decoder"):
            fail(f"{name} is an {models[name].cfg.kind}: only encoders and decoders are scored")
    splits = {s: load_split(s) for s in ("train", "valid", "test")}
    wn = {"synsets": wordnet.read_wordnet(args.wordnet)}
    wn["held_out"] = wordnet.held_out_sentences(splits, normalize)
    # the baselines' k is chosen on (part of) the valid split
    limits = (QUICK_TRAIN, QUICK_VALID, QUICK_TEST) if args.quick else (None, 3000, None)
    splits = {s: lines[:n] for (s, lines), n in zip(splits.items(), limits, strict=True)}
    report: dict = {"test_sentences": len(splits["test"]), "quick": args.quick, "models": {}}
    cache: dict = {}
    for name, m in models.items():
        print(f"evaluating {name} ...", file=sys.stderr)
        shared = tokenizer_shared(m, splits, wn, cache)
        shared["models"].append(name)
        report["models"][name] = evaluate_model(m, shared)
    samples = [
        {"models": s["models"], **wordnet.samples_record(s["pairs"], s["senses"])}
        for s in cache.values()
    ]
    report["wordnet"] = {"seed": wordnet.SEED, "samples": samples}
    report["seconds"] = round(time.perf_counter() - start, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(compact_json(report) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {report['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
