"""A class under faults: how often a tab is lost, measured over many runs.

    python bench/bench_faults.py [--runs 20] [--sessions 6] [--concurrency 3] [--lessons 2]
                                 [--faults kill nginx hang]

Each run starts `python -m deploy.serve --replicas 2` afresh (tests/e2e/cluster.py: nginx in
front of two replicas under supervisord, on a free loopback port), then the deploy tests'
crowd (tests/e2e/crowd.py: each session types its own sentence, visits every page, uploads a
.txt file, translates, picks a digit), `--concurrency` at a time, and beside it two idle
lesson tabs on the Attention page. While the class walks, the faults strike one after another
(tests/e2e/faults.py): a replica SIGKILLed, nginx restarted, a replica hung (SIGSTOP; the
listener kills it). A lesson tab on what a fault hit answers a new sentence once it has
reconnected.

A crowd racing a SIGKILL on two shared cores is a chaos experiment: its result is a rate,
never a pass or a fail. Prints a row per run and fault, then the totals: sessions and lesson
tabs, lost, each loss's cause, reconnect and next-answer p50/p90, actions repeated and first
pages reloaded. Logs: artifacts/deploy/faults-<run>/, every run's rows in
artifacts/deploy/bench_faults.json. docs/DEPLOY.md keeps the current table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# A loss's cause, read from what the crowd or the lesson tab said (the first pattern that
# matches): the loss modes seen in these runs.
CAUSES = [
    ("never connected", r"not connected to a server|no websocket opened again"),
    ("first page never drew", r"open: no chart drawn|app frame|never booted"),
    ("action dropped (no answer after every try)", r"no answer, \d+ tries"),
    ("lesson tab's input lost", r"^lesson tab"),
    ("wrong or default sentence drawn", r"no chart shows|lacks one of|input_value|heading"),
    ("menu link missing (the legacy menu of file names)", r'stSidebarNav.*get_by_role\("link"'),
    ("reloaded", r"loaded \d+ times"),
]


def cause(name: str, why: str) -> str:
    """The named cause of one loss (`name`: "session 3" or "lesson tab 1")."""
    text = f"{name}: {why}"
    for label, pattern in CAUSES:
        if re.search(pattern, text if label.startswith("lesson") else why):
            return label
    return "other: " + why[:80]


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, round(p / 100 * (len(ranked) - 1)))]


def one_run(index: int, args, tokenizers: dict, chromium: str) -> dict:
    """One class through the faults on a fresh cluster: its rows and every tab's times."""
    from tests.e2e import crowd, faults, harness
    from tests.e2e.cluster import Cluster

    plan = crowd.make_plan(args.sessions, tokenizers, seed=index)
    with Cluster(2, f"faults-{index}") as cluster:
        driver = faults.Driver(cluster, tokenizers["mlm"], tuple(args.faults), args.lessons)
        timeout = 120 + 40 * args.sessions
        result = asyncio.run(crowd.run_crowd(
            cluster.url, plan, chromium, args.concurrency, timeout,
            harness.ARTIFACTS / "screenshots" / f"faults-{index}", driver))  # fmt: skip
        rows = driver.finish(result)
    lost: dict[str, str] = {}
    for r in rows:  # a session lost at one fault stays lost at the next: its first cause
        for name, why in r["lost_why"].items():
            lost.setdefault(name, why)
    for failure in result.failures:  # a session that failed outside any fault's window
        name = failure.split(":")[0]
        if name.startswith("session") and name not in lost:
            lost[name] = failure
        elif not name.startswith("session"):
            lost.setdefault("the crowd", failure)
    for name, why in lost.items():  # "session 1: session 1: ..." -> "session 1: ..."
        lost[name] = why.removeprefix(f"{name}: ")
    return {
        "run": index,
        "rows": rows,
        "lost": lost,
        "reconnect_s": [v for f in driver.faults for v in f.reconnect_s.values()
                        if v is not None],  # fmt: skip
        "answer_s": [v for f in driver.faults for v in f.answered_s.values() if v is not None],
        "repeated": len(result.repeated),
        "reloaded": len(result.reopened),
        "seconds": round(result.seconds, 1),
        "load": "/".join(f"{x:.1f}" for x in os.getloadavg()),
    }


def table(runs: list[dict], args) -> str:
    """Markdown: a row per run and fault, then the totals."""
    lines = ["| run | fault | hit | tabs on it | recovered | lost | reconnected, median / worst "
             "(s) | next answer, median / worst (s) | back up (s) | lesson tabs | repeated |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip

    def pair(a, b) -> str:
        return "-" if a is None else f"{a} / {b}"

    for run in runs:
        for r in run["rows"]:
            lines.append(
                f"| {run['run']} | {r['fault']} | {r['target']} | {r['tabs']} | {r['recovered']} "
                f"| {r['lost']} | {pair(r['reconnect_median_s'], r['reconnect_worst_s'])} "
                f"| {pair(r['answer_median_s'], r['answer_worst_s'])} "
                f"| {r['back_s'] if r['back_s'] is not None else '-'} | {r['lesson_tabs']} "
                f"| {r['repeated']} |")  # fmt: skip
    causes = Counter(cause(n, w) for run in runs for n, w in run["lost"].items())
    reconnect = [v for run in runs for v in run["reconnect_s"]]
    answer = [v for run in runs for v in run["answer_s"]]

    def p(values: list[float], q: float) -> str:
        v = percentile(values, q)
        return "-" if v is None else f"{v:.1f}"

    n_lost = sum(len(run["lost"]) for run in runs)
    tabs = len(runs) * (args.sessions + args.lessons)
    lines += [
        "",
        f"total: {len(runs)} runs, {len(runs) * args.sessions} sessions and "
        f"{len(runs) * args.lessons} lesson tabs; lost {n_lost} of {tabs} "
        f"({sum(1 for run in runs if run['lost'])} runs with a loss)"
        + ("; causes: " + ", ".join(f"{k} {v}" for k, v in causes.most_common())
           if causes else ""),  # fmt: skip
        f"reconnect p50 / p90: {p(reconnect, 50)} / {p(reconnect, 90)} s ({len(reconnect)} "
        f"tabs); next answer p50 / p90: {p(answer, 50)} / {p(answer, 90)} s ({len(answer)} "
        f"sessions); actions repeated {sum(r['repeated'] for r in runs)}, first pages "
        f"reloaded {sum(r['reloaded'] for r in runs)}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=3, help="browser contexts at once")
    parser.add_argument("--lessons", type=int, default=2, help="idle lesson tabs")
    parser.add_argument("--faults", nargs="+", default=["kill", "nginx", "hang"],
                        choices=["kill", "nginx", "hang"])  # fmt: skip
    args = parser.parse_args()

    import model
    from deploy.serve import find_nginx
    from tests.e2e import harness

    chromium = harness.find_chromium()
    if chromium is None or find_nginx() is None:
        sys.exit("needs Chromium and nginx: apt-get install chromium nginx")
    tokenizers = {name: model.load(name, device="cpu") for name in ("mlm", "clm")}
    out = harness.ARTIFACTS / "deploy" / "bench_faults.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = []
    try:
        for i in range(1, args.runs + 1):
            started = time.monotonic()
            try:
                run = one_run(i, args, tokenizers, chromium)
            except Exception as err:  # a cluster that did not start: counted, and on
                run = {"run": i, "rows": [], "lost": {"the run": f"{type(err).__name__}: {err}"},
                       "reconnect_s": [], "answer_s": [], "repeated": 0, "reloaded": 0,
                       "seconds": 0.0, "load": "-"}  # fmt: skip
            runs.append(run)
            print(f"run {i}: {len(run['lost'])} lost in {time.monotonic() - started:.0f} s "
                  f"(load {run['load']})", *(f"  {n}: {w[:300]}" for n, w in run["lost"].items()),
                  sep="\n", flush=True)  # fmt: skip
            out.write_text(json.dumps(runs, indent=1) + "\n")
    except KeyboardInterrupt:  # Ctrl+C: the table of the runs that ended
        print(f"stopped after {len(runs)} runs")
    print()
    print(table(runs, args))


if __name__ == "__main__":
    main()
