"""python -m lab: check a student's file, or write the notebook.

    python -m lab check FILE [--seed N]     one row per exercise; exit 0 when all pass
    python -m lab notebook [-o PATH] [--solutions] [--lang ko]
"""

from __future__ import annotations

import argparse
import random
import sys
import textwrap
from pathlib import Path

from i18n import LANGUAGES, _

WIDTH = 100


def check_file(path: Path, seed: int | None) -> int:
    """Print one row per exercise for the student's file; 0 when every one passes."""
    from lab.student import load

    student = load(path)  # before torch is imported: a missing file is said at once
    from lab.checks import EXERCISES, MISSING, PASSED, Report, check

    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    for error in student.errors:
        print(f"{path}: {error}")
    reports = []
    for name in EXERCISES:
        fn = student.names.get(name)
        if callable(fn):
            report = check(name, fn, seed=seed)
        else:
            report = Report(name, MISSING, _("no function {name} in {file}", name=name,
                                                 file=path.name))  # fmt: skip
        reports.append(report)
        head = f"{name:<22} {_(report.status)}"
        if report.status == PASSED:
            print(head)
        else:
            print(head + ":")
            print(textwrap.fill(report.message, WIDTH, initial_indent=" " * 4,
                                subsequent_indent=" " * 4))  # fmt: skip
    passed = sum(r.passed for r in reports)
    print(_("{passed} of {n} exercises passed (seed {seed}: --seed {seed} repeats it)",
            passed=passed, n=len(reports), seed=seed))
    return 0 if passed == len(reports) else 1


def write_notebook(out: Path | None, solutions: bool, lang: str) -> int:
    from lab.notebook import write

    path = write(out, solutions=solutions, lang=lang)
    print(_("wrote {path}", path=path))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab",
        description=_("The lab of slide 48: check a student's Transformer against the shipped "
                      "models, or write the notebook."),
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help=_("check a .py or .ipynb file's seven functions"))
    check.add_argument("file", type=Path, help=_("the student's .py or .ipynb file"))
    check.add_argument("--seed", type=int, help=_("repeat a run: its inputs and sentences"))
    notebook = commands.add_parser("notebook", help=_("write the lab's notebook"))
    notebook.add_argument("-o", "--out", type=Path, default=None,
                          help=_("by default lab/transformer_lab.ipynb (Korean: "
                                 "lab/transformer_lab.ko.ipynb)"))  # fmt: skip
    notebook.add_argument("--lang", choices=sorted(LANGUAGES), default="en",
                          help=_("the explanations' and the checks' language"))  # fmt: skip
    notebook.add_argument(
        "--solutions", action="store_true", help=_("the reference solutions filled in (teachers)")
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            return check_file(args.file, args.seed)
        return write_notebook(args.out, args.solutions, args.lang)
    except (FileNotFoundError, ValueError) as error:
        print(f"python -m lab: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
