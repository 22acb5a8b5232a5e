"""The class's capacity: throughput and latency of a class of browser sessions through nginx,
per replica count.

    python bench/bench_deploy.py [--replicas 1 2] [--sessions 30] [--concurrency 6]
                                 [--timeout 1200]

For each replica count: `python -m deploy.serve --replicas N` (tests/e2e/cluster.py: the
replicas under supervisord behind nginx, on a free loopback port), then the sessions of the
deploy test (tests/e2e/crowd.py: each types its own sentence, visits every page, uploads a
.txt file, translates, picks a digit), `--concurrency` browser contexts at a time. Prints a
markdown table (actions per second, sessions per minute, latency percentiles of every
action from click or key press to the result drawn, sessions per replica from nginx's
access log, each replica's memory after the class) and the median per action: the table
docs/DEPLOY.md keeps. Logs: artifacts/deploy/bench-<N>/. Nothing is asserted; a failed
session is counted and its first lines printed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=6, help="browser contexts at once")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per replica count")
    args = parser.parse_args()

    import model
    from deploy.serve import find_nginx, threads_per_replica
    from tests.e2e import crowd, harness
    from tests.e2e.cluster import Cluster

    chromium = harness.find_chromium()
    if chromium is None or find_nginx() is None:
        sys.exit("needs Chromium and nginx: apt-get install chromium nginx")
    tokenizers = {name: model.load(name, device="cpu") for name in ("mlm", "clm")}
    plan = crowd.make_plan(args.sessions, tokenizers)
    rows = []
    for n in args.replicas:
        with Cluster(n, f"bench-{n}") as cluster:
            print(f"{n} replica(s) at {cluster.url}; {args.sessions} sessions ...", flush=True)
            result = asyncio.run(crowd.run_crowd(
                cluster.url, plan, chromium, args.concurrency, args.timeout,
                harness.ARTIFACTS / "screenshots",
            ))  # fmt: skip
            rss = [round(cluster.rss_mb(i + 1)) for i in range(n)]
        route = crowd.routing(cluster.run_dir / "access.log")
        rows.append(crowd.row(n, threads_per_replica(n), result, route))
        print(f"  memory after the class (MiB): {rss}")
        for failure in result.failures[:5]:
            print("  failed:", failure)
    print()
    print(crowd.table(rows))
    print()
    print("median per action (ms):")
    for r in rows:
        print(f"  {r['replicas']} replica(s): {r['p50_ms_by_action']}")


if __name__ == "__main__":
    main()
