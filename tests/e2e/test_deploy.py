"""Serving a class: 30 browser sessions through nginx, in front of 1 and then 2 replicas.

For each replica count the test runs the README's command, `python -m deploy.serve
--replicas N --port PORT --run-dir artifacts/deploy/replicas-N` (a free loopback port),
waits until nginx answers /_stcore/health, and sends 30 sessions through it (under CI=true;
6 in a local run unless GLASSBOX_DEPLOY_SESSIONS says otherwise), 6 at a time
(tests/e2e/crowd.py: each types its own sentence, visits every page, uploads its own .txt
file, translates its own English sentence, picks its own digit). Checked: every session
finished with only its own tokens and words on every page, no exception box, no JavaScript
error, its upload acknowledged and shown; nginx's access log shows each browser's requests
(websocket and upload included) on one replica, every upload on its tab's replica, and with
2 replicas both serving; Ctrl+C (1 replica) and SIGTERM (2 replicas) stop nginx and every
replica. The throughput and latency table goes to the test summary and
artifacts/deploy.json; nothing is timed-asserted.

test_a_class_through_faults: a class of 16 sessions through `deploy.serve --replicas 2`
while tests/e2e/faults.py kills a replica (SIGKILL), restarts nginx (SIGTERM) and hangs a
replica (SIGSTOP), one after another, with two idle lesson tabs on the Attention page. No
session may be lost; every tab on what a fault hit reconnects (no reload) within 10 s (15 s
for the hung replica, which deploy.serve's health check must first notice and kill); a dead
or hung replica is healthy again within 30 s, and new sessions reach it again. The table
(sessions recovered and lost, seconds to reconnect and to the next answer, median and worst)
goes to the test summary and artifacts/deploy/faults.json.

Marked `deploy` (and `e2e`): `-m "not deploy"` skips it. Without nginx (or a browser) it
skips, except under CI=true, where it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from deploy import serve
from tests.e2e import crowd, faults, harness, trainer

pytestmark = [pytest.mark.e2e, pytest.mark.deploy]

# The whole class, 30 sessions per replica count, under CI=true (4.5 minutes each on
# these 2 cores, quiet); 6 elsewhere, so that a local run of the test command ends sooner.
# GLASSBOX_DEPLOY_SESSIONS sets it either way (bench/bench_deploy.py --sessions N too).
SESSIONS = int(
    os.environ.get("GLASSBOX_DEPLOY_SESSIONS", "30" if os.environ.get("CI") == "true" else "6")
)
CONCURRENCY = 6  # browser contexts at once
REPLICAS = (1, 2)
# Per replica count: the crowd is cut off (and the test fails) after this. About 11 CPU
# seconds per session (server and browser) on 2 cores, with room for a shared machine.
CROWD_TIMEOUT_S = 60 + 25 * SESSIONS
START_TIMEOUT_S = 120
RUNS = harness.ARTIFACTS / "deploy"
# The fault test's class: long enough (about three waves of 6) to be mid-walk at all three
# faults, one after another.
FAULT_SESSIONS = int(os.environ.get("GLASSBOX_FAULT_SESSIONS", "16"))
# Which faults, in order (GLASSBOX_FAULTS=kill,hang to run some)
FAULTS = tuple(os.environ.get("GLASSBOX_FAULTS", ",".join(faults.KINDS)).split(","))
RECONNECT_LIMIT_S = 10  # a killed replica, a restarted nginx: every tab back within this
# A hung replica: deploy.serve's health check misses 3 answers of 2 s each (about 6-9 s on
# a busy machine), kills it, and its tabs reconnect elsewhere (about 1 s)
HUNG_LIMIT_S = 15
RESTART_LIMIT_S = 30  # a dead or hung replica healthy again within this
# Of the class's 16 sessions, at most this many may be lost over the three faults (each is
# reported in the table with why); the lesson tabs, the scenario, may lose nothing.
# The causes measured, each fixed since: Streamlit's widget JavaScript cut off mid-download
# by the kill (at 193e2a1 and b6dadc5; now fetched early, ui/workarounds/widget_js.py), a
# first page that never got the chart library (b770f3a; retried), the crowd's strict
# locator meeting a box shown twice for a moment (97fd674; crowd.the_one). Kept as a margin
# for a loaded machine: once, under a load average of 19, a merely busy replica was taken
# for hung (docs/DEPLOY.md).
MAX_LOST_SESSIONS = 1
# The class while a teacher keeps a training running (issue 28): 1 replica, this many sessions
TRAINING_SESSIONS = int(os.environ.get("GLASSBOX_TRAINING_SESSIONS", "12"))


@pytest.fixture(scope="module")
def nginx_path() -> str:
    path = serve.find_nginx()
    if path is None:
        harness.unavailable("no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
    return path


@pytest.fixture(scope="module")
def plan(tokenizers) -> crowd.Plan:
    return crowd.make_plan(SESSIONS, tokenizers)


class Served:
    """`python -m deploy.serve` as a person runs it, in the background."""

    def __init__(self, replicas: int, name: str | None = None) -> None:
        self.replicas, self.name = replicas, name or f"replicas-{replicas}"
        self.port = harness.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.run_dir = RUNS / self.name
        self.cmd = [sys.executable, "-m", "deploy.serve", "--replicas", str(replicas),
                    "--port", str(self.port), "--run-dir", str(self.run_dir)]  # fmt: skip
        self.proc: subprocess.Popen | None = None

    def start(self) -> dict:
        """Start it and wait until nginx answers; what runs where (cluster.json)."""
        if self.run_dir.exists():
            for old in self.run_dir.glob("*.*"):
                old.unlink()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.out = (RUNS / f"serve-{self.name}.out").open("w")
        self.proc = subprocess.Popen(
            self.cmd, cwd=harness.ROOT, stdout=self.out, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        info = self.run_dir / "cluster.json"  # written once nginx is started
        while not (info.exists() and serve.healthy(self.url)):
            assert self.proc.poll() is None, f"deploy.serve exited: {self.output()}"
            assert time.monotonic() < deadline, f"not healthy: {self.output()}"
            time.sleep(0.1)
        return json.loads(info.read_text())

    def output(self) -> str:
        return (RUNS / f"serve-{self.name}.out").read_text(errors="replace")[-3000:]

    def stop(self, sig: int) -> int:
        """Send `sig`; its exit status (it is killed if it takes over 30 s)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -9
        finally:
            self.out.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stream_closed(access_log: Path, sessions: int, timeout: float = 10.0) -> None:
    """nginx logs a websocket when it closes: wait until every session's is in the log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if access_log.read_text().count('"GET /_stcore/stream"') >= sessions:
            return
        time.sleep(0.2)


@pytest.mark.timeout(CROWD_TIMEOUT_S + START_TIMEOUT_S + 120)
@pytest.mark.parametrize("replicas", REPLICAS, ids=lambda n: f"{n}-replica")
def test_a_class_through_nginx(replicas, nginx_path, chromium_path, plan, request) -> None:
    served = Served(replicas)
    try:
        info = served.start()
        result = _crowd(served.url, plan, chromium_path)
    finally:
        # Ctrl+C for one, SIGTERM for the other: both must stop everything.
        sig = signal.SIGINT if replicas == 1 else signal.SIGTERM
        status = served.stop(sig)
    access = served.run_dir / "access.log"
    _stream_closed(access, SESSIONS)
    route = crowd.routing(access)
    row = crowd.row(replicas, info["replicas"][0]["threads"], result, route)
    (RUNS / f"replicas-{replicas}.json").write_text(json.dumps(row, indent=1) + "\n")
    lines = request.config.stash.setdefault(harness.REPORT_KEY, [])
    table = crowd.table([row]).split("\n")
    if not any(line.startswith("deploy:") for line in lines):
        lines += [f"deploy: {SESSIONS} sessions through nginx, {CONCURRENCY} at a time", *table[:2]]
    lines += [*table[2:], f"  median per action (ms): {row['p50_ms_by_action']}"]

    problems = list(result.failures)
    if status != 0:
        problems.append(f"deploy.serve exited {status} on {sig.name}")
    pids = [info["nginx_pid"]] + [r["pid"] for r in info["replicas"]]
    ports = [served.port] + [r["port"] for r in info["replicas"]]
    if any(_alive(p) for p in pids) or any(_listening(p) for p in ports):
        problems.append(f"a process outlived deploy.serve ({pids}, {ports})")
    if route["split_keys"]:
        problems.append(f"browsers routed to two replicas: {route['split_keys']}")
    if route["uploads"] < SESSIONS or route["uploads_elsewhere"] or route["uploads_failed"]:
        problems.append(f"uploads lost or misrouted: {route}")
    if len(route["sessions_per_replica"]) != replicas:
        problems.append(f"sessions per replica: {route['sessions_per_replica']}")
    assert not problems, "\n".join(problems[:20])


def _crowd(url: str, plan: crowd.Plan, chromium: str, during=None) -> crowd.Crowd:
    """The crowd on Playwright's async API, in a thread of its own (the other browser tests'
    sync Playwright may hold this one)."""
    shots = harness.ARTIFACTS / "screenshots"
    timeout = 60 + 25 * len(plan.visitors)
    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(
            asyncio.run,
            crowd.run_crowd(url, plan, chromium, CONCURRENCY, timeout, shots, during),
        )
        return job.result()


@pytest.mark.timeout(60 + 25 * FAULT_SESSIONS + START_TIMEOUT_S + 240)
def test_a_class_through_faults(nginx_path, chromium_path, tokenizers, request) -> None:
    """A class through a killed replica, a restarted nginx and a hung replica, one after
    another (tests/e2e/faults.py): no session lost, every tab back within the limits, the
    replica restarted and new sessions sent to it again."""
    plan = crowd.make_plan(FAULT_SESSIONS, tokenizers, seed=1)
    served = Served(2, "faults")
    try:
        served.start()
        driver = faults.Driver(served.run_dir, served.url, tokenizers["mlm"], FAULTS)
        result = _crowd(served.url, plan, chromium_path, during=driver)
    finally:
        status = served.stop(signal.SIGTERM)
    rows = driver.finish(result)
    events = driver.events()
    report = {"sessions": FAULT_SESSIONS, "concurrency": CONCURRENCY, "faults": rows,
              "crowd_failures": result.failures, "events": events,
              "class_seconds": round(result.seconds, 1), "load": os.getloadavg()}  # fmt: skip
    (RUNS / "faults.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = request.config.stash.setdefault(harness.REPORT_KEY, [])
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    lines += [f"deploy faults: {FAULT_SESSIONS} sessions through nginx, {CONCURRENCY} at a "
              f"time, 2 replicas, {len(driver.lessons)} lesson tabs; class {result.seconds:.0f} s; "
              f"load average {load}", *faults.table(rows).split("\n")]  # fmt: skip

    # The class's sessions a fault lost (reported in the table, with why); the lesson tabs
    # may lose nothing. See MAX_LOST_SESSIONS.
    lost = {name for r in rows for name in r["lost_why"] if name.startswith("session ")}
    problems = [f for f in result.failures if f.split(":")[0] not in lost]
    if len(lost) > MAX_LOST_SESSIONS:
        problems.append(f"{len(lost)} sessions lost (at most {MAX_LOST_SESSIONS}): {sorted(lost)}")
    if status != 0:
        problems.append(f"deploy.serve exited {status} on SIGTERM")
    measured = {r["fault"] for r in rows}
    if measured != set(FAULTS):
        problems.append(f"faults measured: {sorted(measured)} of {FAULTS}")
    for r in rows:
        limit = HUNG_LIMIT_S if r["fault"] == "hang" else RECONNECT_LIMIT_S
        if r["tabs"] == 0:
            problems.append(f"{r['fault']}: no tab was on {r['target']}")
        lessons_lost = {k: v for k, v in r["lost_why"].items() if k not in lost}
        if lessons_lost:
            problems.append(f"{r['fault']}: lost {lessons_lost}")
        if r["reconnect_worst_s"] is None or r["reconnect_worst_s"] > limit:
            problems.append(f"{r['fault']}: reconnected in {r['reconnect_worst_s']} s > {limit}")
        if r["back_s"] is None or (r["fault"] != "nginx" and r["back_s"] > RESTART_LIMIT_S):
            problems.append(f"{r['fault']}: {r['target']} back after {r['back_s']} s")
    # New sessions reach the killed replica again once it is back.
    kill = next((f for f in driver.faults if f.kind == "kill"), None)
    if kill is not None and kill.back_s is not None:
        back_at = kill.at + kill.back_s
        later = {i: result.first_replica.get(i) for i, t in result.started.items() if t > back_at}
        name = f"r{kill.target.split()[-1]}"
        if later and name not in later.values():
            problems.append(f"no new session reached {kill.target} after its restart: {later}")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.timeout(60 + 25 * TRAINING_SESSIONS + START_TIMEOUT_S + 240)
def test_a_class_while_one_trains(nginx_path, chromium_path, tokenizers, request) -> None:
    """One replica, a class walking the app while a teacher's tab keeps a training running
    on the Watch-it-learn page (tests/e2e/trainer.py): every session finishes as in the
    class test, and every training run ends within its budget. The latency table (its row
    "1 + training") sits beside the class test's rows; nothing is timed-asserted."""
    plan = crowd.make_plan(TRAINING_SESSIONS, tokenizers, seed=2)
    served = Served(1, "training")
    try:
        info = served.start()
        teacher = trainer.Trainer(served.url)
        result = _crowd(served.url, plan, chromium_path, during=teacher)
    finally:
        status = served.stop(signal.SIGTERM)
    row = crowd.row(1, info["replicas"][0]["threads"], result, crowd.routing(
        served.run_dir / "access.log"))  # fmt: skip
    row["replicas"] = "1 + training"
    report = {**row, "training_runs": teacher.runs}
    (RUNS / "training.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = request.config.stash.setdefault(harness.REPORT_KEY, [])
    lines += [f"deploy while one trains: {TRAINING_SESSIONS} sessions, {CONCURRENCY} at a time, "
              f"1 replica; {teacher.summary()}", *crowd.table([row]).split("\n"),
              f"  median per action (ms): {row['p50_ms_by_action']}"]  # fmt: skip
    problems = list(result.failures)
    if status != 0:
        problems.append(f"deploy.serve exited {status} on SIGTERM")
    if not teacher.runs:
        problems.append("no training run ended while the class walked")
    assert not problems, "\n".join(problems[:20])
