"""Train a tiny Transformer on a toy task, as "Watch it learn" does live:
`python -m training.toy --task reverse --positions on --seconds 30 --seed 7 --json`.

Tasks (one answer per position, sequences of 8 tokens over 10 symbols by default):
copy (output[i] = input[i]), reverse (input[T-1-i]), sort (the i-th smallest), histogram
(how often input[i] occurs). --positions on = sinusoidal; off = none; or learned. Accuracy
is the exact match of whole held-out sequences (never trained on); token_accuracy counts
positions. --json prints one JSON line.

--translator trains the page's live translator instead (model/toy_translator.py: the
shipped translator's architecture from scratch on the English -> Korean grammar's one- and
two-clause pairs, 120 s by default); --report FILE also writes its calibration (the curves,
and how its cross-attention on "i go to school" compares with the shipped translator's),
which the page quotes: `OMP_NUM_THREADS=1 python -m training.toy --translator --report
assets/toy_translator_report.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

TASKS = ("copy", "reverse", "sort", "histogram")  # model.toy.TASKS, without importing torch
POSITIONS = {"on": "sinusoidal", "off": "none", "sinusoidal": "sinusoidal",
             "learned": "learned", "none": "none"}  # fmt: skip


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (the shipped defaults are model.toy.ToySetup's)."""
    p = argparse.ArgumentParser(prog="python -m training.toy", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])  # fmt: skip
    p.add_argument("--task", choices=TASKS, default="reverse")
    p.add_argument(
        "--positions",
        choices=list(POSITIONS),
        default="on",
        help="on (= sinusoidal), off (= none), sinusoidal, learned, none",
    )
    p.add_argument("--seconds", type=float, default=None,
                   help="training time budget (default 30; 120 with --translator)")  # fmt: skip
    p.add_argument("--steps", type=int, default=None, help="step budget (with --seconds: "
                   "whichever runs out first)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", type=int, default=2, help="1-3")
    p.add_argument("--heads", type=int, default=4, help="1-4")
    p.add_argument("--width", type=int, default=64, help="32-128, a multiple of the heads")
    p.add_argument("--lr", type=float, default=None, help="default 3e-3; 1e-3 with --translator")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--length", type=int, default=8, help="tokens per sequence (4-12)")
    p.add_argument("--symbols", type=int, default=10, help="symbols (4-16)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1)")
    p.add_argument("--device", default="cpu", help="cpu | cuda")
    p.add_argument("--curve", action="store_true", help="also print every point of the curves")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument(
        "--translator",
        action="store_true",
        help="train the live translator (--seed, --lr, --steps, --seconds apply)",
    )
    p.add_argument(
        "--report",
        default=None,
        help="with --translator: write its calibration report (JSON) there",
    )
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> dict:
    """Train as the arguments say; the run's summary (model.toy.ToyRun.summary)."""
    import torch

    from model.fit import Budget
    from model.toy import ToyRun, ToySetup

    torch.set_num_threads(args.threads)
    if args.translator:
        return translator(args)
    args.seconds = 30.0 if args.seconds is None else args.seconds
    args.lr = 3e-3 if args.lr is None else args.lr
    setup = ToySetup(task=args.task, positions=POSITIONS[args.positions], layers=args.layers,
                     heads=args.heads, width=args.width, lr=args.lr, seed=args.seed,
                     length=args.length, symbols=args.symbols, batch=args.batch)  # fmt: skip
    toy = ToyRun(setup, Budget(steps=args.steps, seconds=args.seconds), device=args.device)
    toy.train_for(float("inf"))
    out = toy.summary()
    if args.curve:
        out["curve"] = [[p.step, p.seconds, round(p.loss, 4), p.accuracy, p.token_accuracy]
                        for p in toy.points]  # fmt: skip
    return out


def looked(source: list[str], korean: str, live, shipped) -> dict:
    """Where the live and the shipped translator look most when writing `korean` (a row
    of each one's cross-attention), and with what weight."""
    a, b = int(live.argmax()), int(shipped.argmax())
    return {"korean": korean, "live": source[a], "weight": round(float(live[a]), 3),
            "shipped": source[b], "shipped_weight": round(float(shipped[b]), 3)}  # fmt: skip


def translator(args: argparse.Namespace) -> dict:
    """The live translator trained as the arguments say; its summary, and with --report its
    calibration: the curves, and per snapshot whether its last layer's cross-attention on
    the test sentence (heads averaged) looks where the shipped translator's does."""
    import model
    from model.fit import Budget
    from model.toy_translator import MAX_SECONDS, TranslatorRun, TranslatorSetup, agreement

    seconds = MAX_SECONDS if args.seconds is None else args.seconds
    setup = TranslatorSetup(seed=args.seed, lr=1e-3 if args.lr is None else args.lr)
    run = TranslatorRun(setup, Budget(steps=args.steps, seconds=seconds), device=args.device)
    run.train_for(float("inf"))
    out = run.summary()
    if args.curve or args.report:
        out["curve"] = [[p.step, p.seconds, round(p.loss, 4), round(p.test_loss, 4),
                         p.accuracy, p.token_accuracy] for p in run.points]  # fmt: skip
    if not args.report:
        return out
    shipped = model.load("translate", device="cpu").trace_pair(setup.sentence, run.reference)
    theirs = shipped.cross_layers[-1].attention.mean(axis=0)  # [T, S]: last layer, heads mean
    agree = [agreement(s.cross[-1].mean(axis=0), theirs) for s in run.snapshots]
    mine = run.snapshots[-1].cross[-1].mean(axis=0)
    first = next((run.snapshots[i].step for i in range(len(agree)) if all(agree[i])), None)
    reached = next((p for p in run.points if p.accuracy >= 0.95), None)
    out |= {
        "measured": time.strftime("%Y-%m-%d"),
        "threads": args.threads,
        "load_average": round(os.getloadavg()[0], 1),
        "cpus": os.cpu_count(),
        "seconds_to_95": reached.seconds if reached else None,
        "steps_to_95": reached.step if reached else None,
        "written": run.written,
        "source_tokens": run.source_tokens,
        "alignment": [looked(run.source_tokens, k, a, b)  # the Korean words, not [EOS]
                      for k, a, b in zip(run.reference_tokens, mine, theirs, strict=False)],
        "aligned_from_step": first,
        "agreement_by_snapshot": [[s.step, sum(a)]
                                  for s, a in zip(run.snapshots, agree, strict=True)],
    }  # fmt: skip
    path = Path(args.report)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in out.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # a key a line
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    try:
        out = run(args)
    except ValueError as err:  # a choice out of range: one line, no traceback
        raise SystemExit(f"python -m training.toy: {err}") from None
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return
    if args.translator:
        print(f"translator: {out['steps']} steps in {out['seconds']} s "
              f"({out['steps_per_second']} steps/s); held-out exact match "
              f"{out['accuracy']:.1%}, tokens {out['token_accuracy']:.1%}, loss {out['loss']}; "
              f"{out['sentence']} -> {out['output']} (grammar: {out['reference']})")  # fmt: skip
        return
    print(f"{out['task']} with positions {out['positions']}: {out['steps']} steps in "
          f"{out['seconds']} s ({out['steps_per_second']} steps/s); held-out exact match "
          f"{out['accuracy']:.1%}, tokens {out['token_accuracy']:.1%}, "
          f"loss {out['loss']}")  # fmt: skip


if __name__ == "__main__":
    main()
