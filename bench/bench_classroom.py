"""The class's store under load (issue 37), measured at the database level, on SQLite (a
temporary file, WAL) and on PostgreSQL (a throwaway cluster, tests/pg.py, where installed).

1. A class of 1,000 students: votes (writes) and the reads the pages make (a follower's
   snapshot every 2 s, the teacher's tally), per second, with 1 and 8 threads; beside the
   rate a class of 1,000 needs (1,000 followers polling every POLL_EVERY s).
2. 100 students voting within 10 s from 2 processes (standing for 2 replicas sharing the
   database) while the teacher's count polls the store every POLL_EVERY s: every vote
   counted, and p50 / p90 from a vote to the teacher's count showing it.

    .venv/bin/python bench/bench_classroom.py                 # both databases
    .venv/bin/python bench/bench_classroom.py --only sqlite --students 300

Prints markdown tables (docs/CLASSROOM.md keeps the figures); nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import queue as queue_module
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHOICES = ["river", "cash", "road", "the"]
POLL = "attention"
VOTING_SECONDS = 10  # a class votes on a question within this long


@contextlib.contextmanager
def databases(only: str | None) -> Iterator[dict[str, str]]:
    """{name: SQLAlchemy URL} for SQLite (a temporary file) and PostgreSQL (if installed)."""
    from tests import pg

    with tempfile.TemporaryDirectory(prefix="glassbox-bench-") as folder, \
            contextlib.ExitStack() as stack:  # fmt: skip
        urls = {}
        if only in (None, "sqlite"):
            urls["SQLite"] = f"sqlite:///{Path(folder) / 'class.sqlite3'}"
        if only in (None, "postgresql"):
            why = pg.missing()
            if why:
                print(f"(PostgreSQL left out: {why})")
            else:
                urls["PostgreSQL"] = stack.enter_context(pg.cluster())
        yield urls


def rate(calls: list[Callable[[], object]], threads: int) -> float:
    """Calls per second, `threads` at a time."""
    start = time.perf_counter()
    if threads == 1:
        for call in calls:
            call()
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda c: c(), calls))
    return len(calls) / (time.perf_counter() - start)


def store_rates(url: str, students: int) -> list[tuple[str, int, float]]:
    """(operation, threads, per second) for one class of `students`."""
    from classroom import Store, new_student

    store = Store(url)
    rows = []
    for threads in (1, 8):
        opened = store.open()
        code, key = opened.code, opened.key
        ids = [new_student() for _ in range(students)]
        rows.append(("vote (write)", threads, rate([
            lambda s=s, n=n, c=code: store.vote(c, s, POLL, CHOICES[n % 4], CHOICES)
            for n, s in enumerate(ids)], threads)))  # fmt: skip
        rows.append(("a follower's snapshot (read)", threads, rate(
            [lambda c=code: store.snapshot(c)] * students, threads)))  # fmt: skip
        rows.append(("the teacher's tally (read)", threads, rate(
            [lambda c=code, k=key: store.tally(c, k, POLL)] * students, threads)))
        store.close(code, key)
    return rows


def _replica(url: str, code: str, n: int, seconds: float, out) -> None:  # noqa: ANN001
    """One process's students: each votes once at a random time within `seconds`."""
    import random

    from classroom import Store, new_student

    store = Store(url)
    start = time.time()
    times = sorted(random.uniform(0, seconds) for _ in range(n))
    for at in times:
        time.sleep(max(0.0, start + at - time.time()))
        student = new_student()
        sent = time.time()
        store.vote(code, student, POLL, random.choice(CHOICES), CHOICES)
        out.put((student, sent))


def class_of_100(url: str, students: int = 100, seconds: float = 10.0,
                 replicas: int = 2) -> tuple[int, int, float, float, float]:  # fmt: skip
    """(votes sent, counted, p50 s, p90 s, worst s) from a vote to the teacher's count."""
    from classroom import Store
    from classroom.store import votes
    from ui.lecture.classroom import POLL_EVERY

    store = Store(url)
    opened = store.open()
    queue: mp.Queue = mp.Queue()
    share = students // replicas
    procs = [mp.Process(target=_replica, args=(url, opened.code, share, seconds, queue))
             for _ in range(replicas)]  # fmt: skip
    for p in procs:
        p.start()
    seen: dict[str, float] = {}  # student -> when the teacher's poll first counted them
    from sqlalchemy import select

    while True:
        running = any(p.is_alive() for p in procs)
        counted = sum(store.tally(opened.code, opened.key, POLL).values())
        now = time.time()
        if counted > len(seen):
            with store.engine.connect() as conn:  # who they are, to time each one's vote
                for (student,) in conn.execute(select(votes.c.student).where(
                        votes.c.code == opened.code)):  # fmt: skip
                    seen.setdefault(student, now)
        if not running:
            break
        time.sleep(POLL_EVERY)
    for p in procs:
        p.join()
    sent = {}
    with contextlib.suppress(queue_module.Empty):
        while True:
            student, at = queue.get(timeout=1)
            sent[student] = at
    delays = sorted(seen[s] - t for s, t in sent.items() if s in seen)
    counted = sum(store.tally(opened.code, opened.key, POLL).values())
    store.close(opened.code, opened.key)
    q = statistics.quantiles(delays, n=10)
    return len(sent), counted, statistics.median(delays), q[8], delays[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["sqlite", "postgresql"], help="one database")
    parser.add_argument("--students", type=int, default=1000, help="class size (1,000)")
    args = parser.parse_args(argv)
    from ui.lecture.classroom import POLL_EVERY

    needed = {  # what a class of this size asks of the store, per second
        "vote (write)": args.students / VOTING_SECONDS,
        "a follower's snapshot (read)": args.students / POLL_EVERY,
        "the teacher's tally (read)": 1 / POLL_EVERY,
    }
    with databases(args.only) as urls:
        print(f"\n### A class of {args.students} students, at the database level\n")
        print(f"Needed per second: every student votes within {VOTING_SECONDS:g} s, every "
              f"follower reads a snapshot every {POLL_EVERY:g} s, the teacher's count reads "
              f"a tally every {POLL_EVERY:g} s.\n")  # fmt: skip
        print("| database | operation | threads | per second | needed | x needed |")
        print("|---|---|---:|---:|---:|---:|")
        for name, url in urls.items():
            for op, threads, per_s in store_rates(url, args.students):
                print(f"| {name} | {op} | {threads} | {per_s:,.0f} | {needed[op]:,.1f} | "
                      f"{per_s / needed[op]:,.1f} |")  # fmt: skip
        print("\n### 100 students vote within 10 s from 2 processes; the teacher's count "
              f"polls every {POLL_EVERY:g} s\n")  # fmt: skip
        print("| database | votes sent | counted | p50 vote -> count (s) | p90 (s) | worst (s) |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, url in urls.items():
            sent, counted, p50, p90, worst = class_of_100(url)
            print(f"| {name} | {sent} | {counted} | {p50:.2f} | {p90:.2f} | {worst:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
