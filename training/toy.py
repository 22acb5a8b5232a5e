"""Train a tiny Transformer on a toy task, as "Watch it learn" does live:
`python -m training.toy --task reverse --positions on --seconds 30 --seed 7 --json`.

Tasks (one answer per position, sequences of 8 tokens over 10 symbols by default):
copy (output[i] = input[i]), reverse (input[T-1-i]), sort (the i-th smallest), histogram
(how often input[i] occurs). --positions on = sinusoidal; off = none; or learned. Accuracy
is the exact match of whole held-out sequences (never trained on); token_accuracy counts
positions. --json prints one JSON line.
"""

from __future__ import annotations

import argparse
import json

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
    p.add_argument("--seconds", type=float, default=30.0, help="training time budget")
    p.add_argument("--steps", type=int, default=None, help="step budget (with --seconds: "
                   "whichever runs out first)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", type=int, default=2, help="1-3")
    p.add_argument("--heads", type=int, default=4, help="1-4")
    p.add_argument("--width", type=int, default=64, help="32-128, a multiple of the heads")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--length", type=int, default=8, help="tokens per sequence (4-12)")
    p.add_argument("--symbols", type=int, default=10, help="symbols (4-16)")
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1)")
    p.add_argument("--device", default="cpu", help="cpu | cuda")
    p.add_argument("--curve", action="store_true", help="also print every point of the curves")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> dict:
    """Train as the arguments say; the run's summary (model.toy.ToyRun.summary)."""
    import torch

    from model.fit import Budget
    from model.toy import ToyRun, ToySetup

    torch.set_num_threads(args.threads)
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


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    try:
        out = run(args)
    except ValueError as err:  # a choice out of range: one line, no traceback
        raise SystemExit(f"python -m training.toy: {err}") from None
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['task']} with positions {out['positions']}: {out['steps']} steps in "
          f"{out['seconds']} s ({out['steps_per_second']} steps/s); held-out exact match "
          f"{out['accuracy']:.1%}, tokens {out['token_accuracy']:.1%}, "
          f"loss {out['loss']}")  # fmt: skip


if __name__ == "__main__":
    main()
