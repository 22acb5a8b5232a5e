"""English -> Korean translation: the data, and the Transformer and LSTM translators.

    python -m training.translation data [--splits DIR]
    python -m training.translation train translate|lstm [--minutes M] [--steps N] [--out DIR]
    python -m training.translation evaluate [--models translate lstm] [--out FILE]

`data` writes the word-level tokenizer (assets/data/translation/tokenizer.json) and prints
the splits' sizes by number of clauses. The splits are not shipped (8 MB gzipped): the
seeded generator (training/translation_data.py) makes the same ones in a few seconds
whenever `train` or `evaluate` needs them; `--splits DIR` also writes them as
{train,valid,test}.tsv.gz (english TAB korean TAB clauses) to look at.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "assets" / "models"
REPORT = MODELS_DIR / "translation_evaluation.json"


def data_command(args: argparse.Namespace) -> None:
    from training.translation_data import (
        SPLITS,
        TOKENIZER,
        build_tokenizer,
        clause_counts,
        make_splits,
        read_lexicon,
    )

    lex = read_lexicon()
    tokenizer = build_tokenizer(lex)
    tokenizer.save(str(TOKENIZER))
    print(f"tokenizer: {tokenizer.get_vocab_size()} tokens -> {TOKENIZER.relative_to(ROOT)}")
    splits = make_splits(lex)
    print("clauses " + " ".join(f"{n:>6}" for n in range(1, 9)) + "   total")
    for name in SPLITS:
        counts = clause_counts(splits[name])
        print(
            f"{name:<7} "
            + " ".join(f"{c:>6}" for c in counts.values())
            + f"  {len(splits[name]):>6}"
        )
    if args.splits:
        folder = Path(args.splits)
        folder.mkdir(parents=True, exist_ok=True)
        for name in SPLITS:
            lines = "".join(f"{e}\t{k}\t{n}\n" for e, k, n in splits[name])
            (folder / f"{name}.tsv.gz").write_bytes(gzip.compress(lines.encode(), mtime=0))
        print(f"splits -> {folder}")


def load_data(max_clauses: int) -> dict:
    """The splits (regenerated from the seed), keeping sentences of at most `max_clauses`."""
    from training.translation_data import make_splits, read_lexicon

    splits = make_splits(read_lexicon())
    return {name: [p for p in pairs if p[2] <= max_clauses] for name, pairs in splits.items()}


def train_command(args: argparse.Namespace) -> None:
    from model.tokenizer import load_tokenizer
    from training.translation_data import TOKENIZER
    from training.translation_train import train

    if not TOKENIZER.is_file():
        sys.exit(f"{TOKENIZER} is missing: run `python -m training.translation data` first")
    if args.minutes is None and args.steps is None:
        args.minutes = 20.0
    splits = load_data(args.max_clauses)
    out = Path(args.out) if args.out else MODELS_DIR / args.model
    _, facts = train(
        args.model,
        splits["train"],
        splits["valid"],
        load_tokenizer(TOKENIZER),
        steps=args.steps,
        minutes=args.minutes,
        batch_size=args.batch_size,
        lr=args.lr,
        warmup=args.warmup,
        eval_every=args.eval_every,
        patience=args.patience,
        smoothing=args.label_smoothing,
        seed=args.seed,
        device=args.device,
        out=out,
    )
    shown = {k: v for k, v in facts.items() if k not in ("config", "valid_history")}
    print(json.dumps(shown, indent=2))
    print(f"saved to {out}")


def evaluate_command(args: argparse.Namespace) -> None:
    import model
    from training.translation_data import read_lexicon
    from training.translation_train import evaluate_translator, lecture_outputs

    lex = read_lexicon()
    test = load_data(args.max_clauses)["test"]
    if args.limit:  # the first `limit` of each clause count
        test = [p for n in range(1, 9) for p in [q for q in test if q[2] == n][: args.limit]]
    report = {"split": "test", "pairs": len(test), "models": {}}
    for name in args.models:
        m = model.load(name, device=args.device)
        result = {"kind": m.kind, **evaluate_translator(m, test)}
        result["lecture"] = lecture_outputs(m, lex)
        report["models"][m.name] = result
        print(m.name)
        for n, s in [*result["by_clauses"].items(), ("all", result["overall"])]:
            print(
                f"  {n:>3} clauses: exact {s['exact_match']:.3f}, tokens {s['token_accuracy']:.3f}"
            )
        for row in result["lecture"]:
            verdict = "ok" if row["exact"] else f"expected {row['reference']}"
            print(f"  {row['source']} -> {row['output']} ({verdict})")
    out = Path(args.out) if args.out else REPORT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"report -> {out}")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m training.translation", description=__doc__.splitlines()[0]
    )
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("data", help="write the tokenizer; print (or write) the splits")
    d.add_argument("--splits", default=None, help="also write the splits, gzipped, to DIR")
    d.set_defaults(run=data_command)

    t = sub.add_parser("train", help="train the Transformer (translate) or the LSTM (lstm)")
    t.add_argument("model", choices=["translate", "lstm"])
    t.add_argument("--minutes", type=float, default=None, help="time budget (default 20)")
    t.add_argument("--steps", type=int, default=None, help="step budget")
    t.add_argument("--out", default=None, help="checkpoint folder (default assets/models/MODEL)")
    t.add_argument("--device", default=None, help="cpu | cuda (default: auto)")
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    t.add_argument("--warmup", type=int, default=300, help="warm-up steps")
    t.add_argument("--eval-every", type=int, default=500, help="steps between validations")
    t.add_argument("--patience", type=int, default=6, help="validations without progress")
    t.add_argument("--label-smoothing", type=float, default=0.0)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--max-clauses", type=int, default=8, help="train on shorter sentences only")
    t.set_defaults(run=train_command)

    e = sub.add_parser("evaluate", help="exact match and token accuracy on the test split")
    e.add_argument("--models", nargs="+", default=["translate", "lstm"],
                   help="catalogue names or checkpoint folders")  # fmt: skip
    e.add_argument("--out", default=None, help=f"report (default {REPORT.relative_to(ROOT)})")
    e.add_argument("--device", default=None, help="cpu | cuda (default: auto)")
    e.add_argument("--limit", type=int, default=None, help="test pairs per clause count")
    e.add_argument("--max-clauses", type=int, default=8, help="test shorter sentences only")
    e.set_defaults(run=evaluate_command)
    return p


def main() -> None:
    args = parser().parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
