"""`python -m deploy.serve` as a person runs it, for the tests and benchmarks that need N
replicas behind nginx: start it, read where everything runs, hurt a replica, wait until it
is healthy again, stop it.

    with Cluster(2, "mine") as c:           # artifacts/deploy/mine/ is its run folder
        c.url                               # nginx, on a free loopback port
        old = c.kill(1)                     # SIGKILL to replica 1 (SIGSTOP: it hangs)
        c.wait_healthy(1, old)              # supervisord restarted it: a new pid says "ok"
        c.supervisorctl("status")           # supervisorctl on its socket
    # leaving the block: SIGINT (Ctrl+C), which must stop everything

Waits end on the event (a health answer, a file's content), within generous timeouts for a
loaded machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from deploy.listener import healthy
from tests.e2e import harness

RUNS = harness.ARTIFACTS / "deploy"
START_TIMEOUT_S = 180  # every replica healthy (a cold start imports Streamlit) and nginx


class Cluster:
    """N replicas behind nginx, run by `python -m deploy.serve` in the background."""

    def __init__(self, replicas: int = 2, name: str | None = None) -> None:
        self.replicas, self.name = replicas, name or f"replicas-{replicas}"
        self.port = harness.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.run_dir = RUNS / self.name
        self.proc: subprocess.Popen | None = None
        self.status: int | None = None

    @property
    def bin(self) -> Path:
        return Path(sys.executable).parent

    def start(self, timeout: float = START_TIMEOUT_S) -> Cluster:
        """Start it; return once every replica and nginx answer /_stcore/health."""
        if self.run_dir.exists():
            for old in self.run_dir.glob("*.*"):
                old.unlink()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        out = (RUNS / f"serve-{self.name}.out").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deploy.serve", "--replicas", str(self.replicas),
             "--port", str(self.port), "--run-dir", str(self.run_dir)],
            cwd=harness.ROOT, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        out.close()
        self.wait(lambda: self.ready(), timeout, "every replica and nginx healthy")
        return self

    def ready(self) -> bool:
        info = self.info()
        return (len(info.get("replicas", [])) == self.replicas
                and all(r["pid"] and healthy(self.replica_url(r["index"]), 2)
                        for r in info["replicas"]) and healthy(self.url, 2))  # fmt: skip

    def wait(self, done, timeout: float, what: str) -> None:
        """Until `done()`; fails with the command's output when it exits or time runs out."""
        deadline = time.monotonic() + timeout
        while not done():
            assert self.proc is not None and self.proc.poll() is None, (
                f"deploy.serve exited: {self.output()}")  # fmt: skip
            assert time.monotonic() < deadline, f"not {what} in {timeout:.0f} s: {self.output()}"
            time.sleep(0.1)

    def info(self) -> dict:
        """RUN/cluster.json (what runs where), or {} before it is written."""
        try:
            return json.loads((self.run_dir / "cluster.json").read_text())
        except (OSError, ValueError):
            return {}

    def replica(self, index: int) -> dict:
        return self.info()["replicas"][index - 1]

    def replica_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.replica(index)['port']}"

    def pids(self) -> list[int]:
        """nginx's and every replica's pid, now."""
        info = self.info()
        return [info["nginx_pid"], *(r["pid"] for r in info["replicas"])]

    def kill(self, index: int, sig: int = signal.SIGKILL) -> int:
        """Send `sig` to replica `index`; its pid."""
        pid = self.replica(index)["pid"]
        os.kill(pid, sig)
        return pid

    def wait_healthy(self, index: int, old_pid: int, timeout: float = 90) -> float:
        """Wait until replica `index` runs with another pid than `old_pid` and says "ok";
        the seconds it took."""
        started = time.monotonic()
        self.wait(lambda: self.replica(index)["pid"] not in (None, old_pid)
                  and healthy(self.replica_url(index), 2), timeout,
                  f"replica {index} restarted")  # fmt: skip
        return time.monotonic() - started

    def rss_mb(self, index: int) -> float:
        return harness.rss_mb(self.replica(index)["pid"])

    def supervisorctl(self, *args: str) -> subprocess.CompletedProcess:
        conf = str(self.run_dir / "supervisord.conf")
        return subprocess.run([str(self.bin / "supervisorctl"), "-c", conf, *args],
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    def output(self) -> str:
        return (RUNS / f"serve-{self.name}.out").read_text(errors="replace")[-3000:]

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Send `sig` (Ctrl+C by default); the command's exit status (-9: killed after 60 s)."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.status = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.status = -9
        return self.status

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
