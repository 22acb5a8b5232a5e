"""The lab's checker: `python bench/bench_lab.py [--repeats 3]`.

For each exercise, the median wall time of one `lab.check` on the reference solution (it
passes), on its first classic mistake (named) and on the reference's output scaled by 1.01
(wrong, matching no mistake: every buggy variant is tried). Goal: under 2 s each. Then
`python -m lab check` of all seven, as a fresh process (Python, torch and the models
loaded), on lab/solutions.py and on the notebook with the solutions filled in. Goal:
under 20 s. A table, never a timed assert.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_CHECK_S, GOAL_CLI_S = 2.0, 20.0


def median_s(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def scaled(fn):
    def wrong(*args):
        out = fn(*args)
        return tuple(o * 1.01 for o in out) if isinstance(out, tuple) else out * 1.01

    return wrong


def cli_s(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "lab", "check", str(path)], cwd=ROOT, capture_output=True
    )
    return time.perf_counter() - start, run.returncode


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python bench/bench_lab.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import lab
    from lab import notebook, solutions
    from lab.mistakes import EXERCISES, mistakes_in

    start = time.perf_counter()
    lab.check("encoder", solutions.encoder)  # loads torch's kernels and both models
    print(f"first check (models loaded): {time.perf_counter() - start:.2f} s\n")
    head = f"{'exercise':<22} {'passes':>8} {'a mistake':>10} {'unknown':>8}"
    print(f"{head}   goal < {GOAL_CHECK_S:g} s")
    for name in EXERCISES:
        right = getattr(solutions, name)
        bug = mistakes_in(name)[0].fn
        cells = [
            median_s(lambda fn=fn, name=name: lab.check(name, fn), args.repeats)
            for fn in (right, bug, scaled(right))
        ]
        verdict = "ok" if max(cells) < GOAL_CHECK_S else "SLOW"
        print(f"{name:<22} " + " ".join(f"{c:>7.2f}s" for c in cells) + f"   {verdict}")

    print(f"\n{'python -m lab check (all seven)':<40} {'wall':>8}   goal < {GOAL_CLI_S:g} s")
    with tempfile.TemporaryDirectory() as tmp:
        solved = notebook.write(Path(tmp) / "solved.ipynb", solutions=True)
        for label, path in (("lab/solutions.py", ROOT / "lab" / "solutions.py"),
                            ("the notebook, solutions filled in", solved),
                            ("the notebook as shipped", notebook.SHIPPED)):  # fmt: skip
            seconds, rc = cli_s(path)
            verdict = "ok" if seconds < GOAL_CLI_S else "SLOW"
            print(f"{label:<40} {seconds:>7.2f}s   {verdict} (exit {rc})")


if __name__ == "__main__":
    main()
