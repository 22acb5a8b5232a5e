"""The benchmark's exact reading of a server's CPU time (bench/bench_browser.py).

The kernel's per-process figure (/proc/PID/stat) counts in clock ticks of 10 ms, as coarse
as a whole new input's server work. Where GLASSBOX_CPU_PROBE is set (the benchmark sets it
for the servers it starts: the app and the trivial page alike), a daemon thread answers
each byte written to the FIFO `ask_path(pid)` with the process's CPU time in nanoseconds
(every thread, the ended ones included: time.process_time_ns), written to `tell_path(pid)`.
It waits in a blocking read, so between questions it costs nothing. Unset (always, but in
the benchmark): nothing starts.
"""

from __future__ import annotations

import atexit
import os
import tempfile
import threading
import time
from pathlib import Path

_started = threading.Lock()


def _base(pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"glassbox-cpu-{pid}"


def ask_path(pid: int) -> Path:
    return _base(pid).with_suffix(".ask")


def tell_path(pid: int) -> Path:
    return _base(pid).with_suffix(".tell")


def _answer(questions: int, tell: Path) -> None:
    while os.read(questions, 1):  # blocks until a question: never at its end (read-write)
        with tell.open("w", encoding="ascii") as answer:
            answer.write(str(time.process_time_ns()))


def start() -> None:
    """Answer the benchmark's questions from now on, where GLASSBOX_CPU_PROBE is set (once
    per process)."""
    if not os.environ.get("GLASSBOX_CPU_PROBE") or not _started.acquire(blocking=False):
        return
    pid = os.getpid()
    for path in (ask_path(pid), tell_path(pid)):
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        atexit.register(path.unlink, missing_ok=True)
    # Opened here, read-write: the FIFO has a reader from now on, so a question asked as soon
    # as start() returns is answered (opened by the thread, a question asked before the
    # thread got there would find no reader: ENXIO).
    questions = os.open(ask_path(pid), os.O_RDWR)
    threading.Thread(target=_answer, args=(questions, tell_path(pid)), daemon=True,
                     name="glassbox-cpu-probe").start()  # fmt: skip


def read_ns(pid: int) -> int | None:
    """Process `pid`'s CPU time (ns) as its probe tells it; None where it has none."""
    try:
        fd = os.open(ask_path(pid), os.O_WRONLY | os.O_NONBLOCK)  # no reader: ENXIO
    except OSError:
        return None
    try:
        os.write(fd, b"?")
    finally:
        os.close(fd)
    with tell_path(pid).open(encoding="ascii") as answer:
        return int(answer.read())
