"""Trace vs fast path: `python bench/bench_trace.py [--models mlm clm] [--repeats 30]`.

For 16, 64 and 256 tokens, on the CPU (and the GPU when there is one), the median wall time
of `m.logits(text)` (the fast path: logits only) and of `m.trace(text)` (every
layer's q, k, v, scores, attention and outputs copied out as numpy), and their ratio.
Goal: the trace costs at most 1.5x the fast path; a 256-token trace under 25 ms on the CPU.
Then, for each shipped translator, a greedy translation and its trace at 1, 4 and 8 clauses.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import model  # noqa: E402


def text_of(m: model.TransformerLM, n_tokens: int) -> str:
    """A text that the m reads as exactly n_tokens tokens (specials included)."""
    words = "the researcher asked the assistant to run the experiment again".split(" ")
    text = " ".join(words[i % len(words)] for i in range(n_tokens))
    while len(m.encode(text).ids) > n_tokens:
        text = text.rsplit(" ", 1)[0]
    return text


def medians_ms(fns: list, repeats: int) -> list[float]:
    """Median wall time of each function, calls interleaved so noise hits all alike."""
    for fn in fns:  # warm up
        fn(), fn(), fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [statistics.median(t) * 1000 for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python bench/bench_trace.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--models", nargs="+", default=["mlm", "clm"], help="names or checkpoint folders"
    )
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument(
        "--translators", nargs="*", default=None,
        help="translation models to time at 1, 4 and 8 clauses (default: every shipped one)",
    )  # fmt: skip
    args = parser.parse_args()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print("| model | device | tokens | fast path (ms) | trace (ms) | trace / fast |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.models:
        for device in devices:
            m = model.load(name, device)
            for n in (16, 64, 256):
                text = text_of(m, n)
                n_real = len(m.encode(text).ids)
                fast, trace = medians_ms(
                    [lambda b=m, t=text: b.logits(t), lambda b=m, t=text: b.trace(t)],
                    args.repeats,
                )
                row = f"| {name} | {device} | {n_real} | {fast:.2f} | {trace:.2f} |"
                print(f"{row} {trace / fast:.2f} |")
    translators = args.translators
    if translators is None:
        kinds = {"encoder-decoder", "recurrent"}
        translators = [n for n, i in model.catalogue().items() if i.kind in kinds]
    if translators:
        bench_translation(translators, devices, max(5, args.repeats // 5))


def bench_translation(names: list[str], devices: list[str], repeats: int) -> None:
    """Greedy translation (the whole output) and its trace, at 1, 4 and 8 clauses."""
    clauses = ["i go to school", "he reads a book", "the dog bit the cat", "we drink water"]
    print("\n| model | device | clauses | translate (ms) | trace (ms) |")
    print("|---|---|---:|---:|---:|")
    for name in names:
        for device in devices:
            m = model.load(name, device)
            for n in (1, 4, 8):
                text = " and ".join(clauses[i % 4] for i in range(n))
                translate, trace = medians_ms(
                    [lambda b=m, t=text: b.translate(t), lambda b=m, t=text: b.trace(t)],
                    repeats,
                )
                print(f"| {name} | {device} | {n} | {translate:.2f} | {trace:.2f} |")


if __name__ == "__main__":
    main()
