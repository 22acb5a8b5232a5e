"""python -m classroom: open a class, read its results, close it, from a shell.

    python -m classroom open --json            {"code", "student_url", "teacher_url"}
    python -m classroom results CODE --json    {"students": n, "steps": {slug: {answer: n}},
                                                "answers": {slug: the model's answer}}
    python -m classroom results CODE --csv     step,answer,votes,model_answer (true/false)
    python -m classroom close CODE KEY

All read GLASSBOX_DATABASE_URL, as the app does (unset: SQLite in the data folder). A
closed class's results still answer until the class expires.
"""

from __future__ import annotations

import argparse
import json
import sys

from classroom.store import (
    DATABASE_ENV,
    HOURS,
    ClassError,
    NoSuchClass,
    NotTeacher,
    Store,
    results_csv,
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m classroom", description=(
        f"Open a class, read its results, close it. The database: ${DATABASE_ENV} "
        "(unset: SQLite in the app's data folder, runs/ or $GLASSBOX_DATA)."))  # fmt: skip
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("open", help="open a class: its code and the student's and teacher's links")
    o.add_argument("--hours", type=float, default=HOURS, help=f"expires after (default {HOURS})")
    o.add_argument("--json", action="store_true", help="print JSON")
    r = sub.add_parser("results", help="a class's votes per question (also once closed)")
    r.add_argument("code")
    how = r.add_mutually_exclusive_group()
    how.add_argument("--json", action="store_true", help="print JSON")
    how.add_argument("--csv", action="store_true",
                     help="print CSV: step,answer,votes,model_answer")  # fmt: skip
    c = sub.add_parser("close", help="close a class: its code stops working, its results stay "
                       "until it expires")  # fmt: skip
    c.add_argument("code")
    c.add_argument("key", help="the teacher key (from the teacher's link)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        store = Store()
        if args.command == "open":
            opened = store.open(args.hours)
            out = {"code": opened.code, "student_url": opened.student_url,
                   "teacher_url": opened.teacher_url}  # fmt: skip
            print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
        elif args.command == "results":
            results = store.results(args.code)
            if args.json:
                print(json.dumps(results, ensure_ascii=False))
            elif args.csv:
                sys.stdout.write(results_csv(results))
            else:
                print(f"students: {results['students']}")
                model = results["answers"]
                for poll, counts in results["steps"].items():
                    said = f" (the model: {model[poll]})" if poll in model else ""
                    print(f"{poll}: " + ", ".join(f"{a} {n}" for a, n in counts.items()) + said)
        else:
            store.close(args.code, args.key)
            print("closed")
    except NoSuchClass:
        print("no such class", file=sys.stderr)
        return 2
    except NotTeacher:
        print("not the teacher's key", file=sys.stderr)
        return 2
    except ClassError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
