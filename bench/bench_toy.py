"""The toy trainer, calibrated: `python bench/bench_toy.py [--seconds 30] [--seeds 0]`.

For each task, with positions (sinusoidal) and without, one run of `python -m training.toy`
with the shipped defaults on one thread, each in a fresh process: steps/s, the seconds of
training until the held-out exact match first reaches 95%, the final scores, and the
process's peak memory above a bare `import torch, model.toy`. Then the largest choices (3
layers, width 128) for the memory bound, and the same runs on a GPU when there is one.
Prints a table and writes the report the page quotes (assets/toy_report.json; never type
a measured number into a page). A table, never a timed assert; the issue's goals are
printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "assets" / "toy_report.json"
TASKS = ("copy", "reverse", "sort", "histogram")
# (task, positions) -> (the goal's words, whether the final exact match meets it)
GOALS = {
    ("reverse", "on"): ("≥ 95%", lambda a: a >= 0.95),
    ("reverse", "off"): ("≤ 5%", lambda a: a <= 0.05),
    ("sort", "on"): ("≥ 90%", lambda a: a >= 0.90),
    ("histogram", "off"): ("≥ 95%", lambda a: a >= 0.95),
    ("copy", "on"): ("≥ 99%", lambda a: a >= 0.99),
    ("copy", "off"): ("≥ 99%", lambda a: a >= 0.99),
}


def child(code_or_args: list[str]) -> tuple[str, int]:
    """Run a Python child; its stdout and peak resident memory in bytes (os.wait4)."""
    proc = subprocess.Popen([sys.executable, *code_or_args], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(code_or_args)} failed ({proc.returncode})")
    return out, usage.ru_maxrss * 1024  # kilobytes on Linux


# Runs of the largest choices kept alive in one process, as a server keeps its sessions':
# what each one more costs in resident memory.
MARGINAL = """
import torch
from model.fit import Budget
from model.toy import ToyRun, ToySetup
torch.set_num_threads(1)
rss = lambda: int(open('/proc/self/statm').read().split()[1]) * 4096
kept, sizes = [], []
for i in range(4):
    before = rss()
    kept.append(ToyRun(ToySetup(layers=3, width=128, seed=i), Budget(seconds=3)))
    kept[-1].train_for(9)
    sizes.append([rss() - before, kept[-1].memory_bytes()])
print(sizes)
"""


def toy(task: str, positions: str, seconds: float, seed: int, *extra: str) -> dict:
    """One run's summary with its curve and peak memory."""
    out, rss = child(["-m", "training.toy", "--task", task, "--positions", positions,
                      "--seconds", str(seconds), "--seed", str(seed), "--json", "--curve",
                      *extra])  # fmt: skip
    run = json.loads(out)
    run["peak_rss"] = rss
    run["seconds_to_95"] = next((p[1] for p in run["curve"] if p[3] >= 0.95), None)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(prog="python bench/bench_toy.py",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument("--out", type=Path, default=REPORT, help="the report (JSON)")
    parser.add_argument("--no-report", action="store_true", help="print only")
    args = parser.parse_args()

    _, bare = child(["-c", "import torch, model.toy"])
    devices = ["cpu"]
    probe, _ = child(["-c", "import torch; print(torch.cuda.is_available())"])
    if probe.strip() == "True":
        devices.append("cuda")
    runs = []
    print(f"{args.seconds:.0f} s each, one thread; bare process {bare / 2**20:.0f} MiB")
    print(f"{'device':6} {'task':10} {'positions':9} {'seed':>4} {'steps/s':>8} {'to 95%':>7} "
          f"{'exact':>7} {'tokens':>7} {'MiB':>5}  goal")  # fmt: skip
    for device in devices:
        for task in args.tasks:
            for positions in ("on", "off"):
                for seed in args.seeds:
                    run = toy(task, positions, args.seconds, seed, "--device", device)
                    run["device"] = device
                    runs.append(run)
                    goal, met = GOALS.get((task, positions), ("", None))
                    to95 = f"{run['seconds_to_95']:.1f}" if run["seconds_to_95"] else "never"
                    verdict = (
                        f"{goal} {'met' if met(run['accuracy']) else 'MISSED'}" if goal else ""
                    )
                    print(f"{device:6} {task:10} {positions:9} {seed:>4} "
                          f"{run['steps_per_second']:>8.1f} {to95:>7} {run['accuracy']:>7.1%} "
                          f"{run['token_accuracy']:>7.1%} {(run['peak_rss'] - bare) / 2**20:>5.0f}"
                          f"  {verdict}", flush=True)  # fmt: skip
    largest = toy("reverse", "on", min(args.seconds, 10.0), 0, "--layers", "3", "--width", "128")
    marginal = json.loads(child(["-c", MARGINAL])[0])
    print(
        f"largest choices (3 layers, width 128): {largest['steps_per_second']} steps/s, "
        f"{(largest['peak_rss'] - bare) / 2**20:.0f} MiB above the bare process"
    )
    print("each further run of them kept in one process: "
          + ", ".join(f"{rss / 2**20:.0f}" for rss, _ in marginal) + " MiB resident; "
          f"its tensors {marginal[-1][1] / 2**20:.1f} MiB")  # fmt: skip
    if args.no_report:
        return
    report = {
        "measured": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "threads": 1,
        "seconds": args.seconds,
        "bare_rss": bare,
        "runs": runs,
        "largest": {k: largest[k] for k in ("steps_per_second", "peak_rss", "setup")},
        "marginal_rss": [rss for rss, _ in marginal],
        "run_tensor_bytes": marginal[-1][1],
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
