"""Throughput and latency of a class of browser sessions through nginx, per replica count.

    python bench/bench_deploy.py [--replicas 1 2] [--sessions 30] [--concurrency 6]
                                 [--threads T] [--sticky cookie|ip] [--timeout 600]

For each replica count: `deploy.serve.Cluster` (what `python -m deploy.serve` runs: the
replicas on loopback ports, each healthy on /_stcore/health, then nginx), then the sessions
of the deploy load test (tests/e2e/crowd.py: each types its own sentence, visits every page,
uploads a .txt file, translates, picks a digit), `--concurrency` browser contexts at a time.
Prints a markdown table (actions per second, sessions per minute, latency percentiles of
every action from click or key press to the result drawn, sessions per replica from nginx's
access log) and the median per action. Logs: artifacts/deploy/bench-<N>/. Nothing is
asserted; a failed session is counted and its first lines printed.
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
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per replica (default: cores / replicas)")
    parser.add_argument("--sticky", choices=["cookie", "ip"], default="cookie",
                        help="ip: every local session lands on one replica")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per replica count")
    args = parser.parse_args()  # fmt: skip

    import model
    from deploy.serve import Cluster, find_nginx, free_port
    from tests.e2e import crowd, harness

    chromium, nginx = harness.find_chromium(), find_nginx()
    if chromium is None or nginx is None:
        sys.exit("needs Chromium and nginx: apt-get install chromium nginx")
    tokenizers = {name: model.load(name, device="cpu") for name in ("mlm", "clm")}
    plan = crowd.make_plan(args.sessions, tokenizers)
    rows = []
    for n in args.replicas:
        run_dir = harness.ARTIFACTS / "deploy" / f"bench-{n}"
        (run_dir / "access.log").unlink(missing_ok=True)
        cluster = Cluster(n, free_port(), threads=args.threads, sticky=args.sticky,
                          run_dir=run_dir, nginx=nginx)  # fmt: skip
        with cluster:
            print(f"{n} replica(s) at {cluster.url}, {cluster.members[0].threads} torch "
                  f"threads each; {args.sessions} sessions ...", flush=True)  # fmt: skip
            result = asyncio.run(crowd.run_crowd(
                cluster.url, plan, chromium, args.concurrency, args.timeout,
                harness.ARTIFACTS / "screenshots",
            ))  # fmt: skip
        route = crowd.routing(run_dir / "access.log")
        rows.append(crowd.row(n, cluster.members[0].threads, result, route))
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
