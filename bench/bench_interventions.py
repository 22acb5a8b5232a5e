"""Experiments (issue 29): `python bench/bench_interventions.py [--tokens 20] [--repeats 7]
[--threads 1] [--models mlm clm translate vit smollm2 minilm]`.

For each model, the median wall time of what one rerun of its tab computes, uncached:
- the knockout grid: every head knocked out alone plus the clean run, batched
  (`log_probs`); for a model of over 64 heads (SmolLM2: 30 x 9) one layer's batch, which
  is what a click computes at a time (goal: 300 ms for the shipped 4 x 4 models at 20
  tokens; 2 s a rerun for a big model);
- the same runs one forward pass each (what batching saves);
- the logit lens at one position, patching A into B (one layer's batch: a position per row),
  and attribution by integrated gradients (64 steps; 8 above 50M parameters) and
  gradient x input.
The sentence is the lecture's river sentence repeated and cut to --tokens.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import model  # noqa: E402
from model import CLEAN, Patch, RunOptions  # noqa: E402
from model.examples import MONEY_BANK, RIVER_BANK  # noqa: E402

BIG = 50_000_000  # parameters: ui.cache.BIG_MODEL
GRID_AT_ONCE = 64  # heads: ui.parts.interventions.knockout.AT_ONCE for a big model


def median_ms(run: Callable[[], object], repeats: int) -> float:
    run()  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def ids_of(m: model.Model, text: str, n: int) -> list[int]:
    ids = m.encode((text + " ") * 8).ids
    return ids[:n]


def heads_runs(m: model.Model, layers: list[int] | None = None) -> list[RunOptions]:
    runs = [CLEAN]
    for stack, (n_layers, n_heads) in m.heads().items():
        for layer in layers if layers is not None else range(n_layers):
            runs += [RunOptions(ablate=[(layer, h) if not stack else (stack, layer, h)])
                     for h in range(n_heads)]  # fmt: skip
    return runs


def bench(name: str, n_tokens: int, repeats: int) -> list[tuple[str, str, float]]:
    m = model.load(name, "cpu")
    big = getattr(m, "n_parameters", lambda: 0)() > BIG
    rows: list[tuple[str, str, float]] = []
    n_heads = sum(layers * heads for layers, heads in m.heads().values())
    if m.kind == "vision":
        inputs, at = np.eye(8) * 16, [0]
    elif m.kind == "encoder-decoder":
        t = m.trace("i swam across the river to the bank")
        inputs, at = (list(t.encoder.ids), list(t.ids)), list(range(len(t.ids)))
    else:
        inputs = ids_of(m, RIVER_BANK, n_tokens)
        at = [len(inputs) - 2]
    one_layer = n_heads > GRID_AT_ONCE
    runs = heads_runs(m, [0] if one_layer else None)
    what = f"{len(runs) - 1} heads" + (" (one layer)" if one_layer else "")
    rows.append(("knockout grid, batched", what, median_ms(lambda: m.log_probs(inputs, runs, at),
                                                            repeats)))  # fmt: skip
    rows.append(("knockout grid, a pass a head", what, median_ms(
        lambda: [m.log_probs(inputs, [r], at) for r in runs], max(1, repeats // 3))))  # fmt: skip
    if m.kind in ("encoder", "decoder"):
        rows.append(("logit lens, one position", "", median_ms(
            lambda: m.logit_lens(inputs, at), repeats)))  # fmt: skip
        source = ids_of(m, MONEY_BANK, len(inputs))
        patches = [CLEAN] + [RunOptions(patch=Patch(tuple(source), ((0, p),)))
                             for p in range(len(inputs))]  # fmt: skip
        rows.append(("patch A into B, one layer", f"{len(inputs)} positions", median_ms(
            lambda: m.log_probs(inputs, patches, at), repeats)))  # fmt: skip
        steps = 8 if big else 64
        token = int(np.argmax(m.log_probs(inputs, [CLEAN], at)[0, 0]))
        rows.append(("integrated gradients", f"{steps} steps", median_ms(
            lambda: m.attribute(inputs, at[0], token, steps=steps), max(1, repeats // 3))))
        rows.append(("gradient x input", "", median_ms(
            lambda: m.attribute(inputs, at[0], token, "gradient_x_input"), repeats)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mlm", "clm", "translate", "vit",
                                                         "minilm", "smollm2"])  # fmt: skip
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    known = model.catalogue()
    print(f"| model | what | size | ms (median, {args.threads} thread, {args.tokens} tokens) |")
    print("|---|---|---|---:|")
    for name in args.models:
        if name not in known:
            print(f"| {name} | not installed | | |")
            continue
        if not {"fill_mask", "next_token", "translate", "classify"} & known[name].capabilities:
            print(f"| {name} | no output head: nothing to predict | | |")
            continue
        for what, size, ms in bench(name, args.tokens, args.repeats):
            print(f"| {name} | {what} | {size} | {ms:.1f} |")


if __name__ == "__main__":
    main()
