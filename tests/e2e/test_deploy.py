"""Serving a class: browser sessions through nginx in front of 2 replicas under supervisord.

One cluster, `python -m deploy.serve --replicas 2` as the README runs it
(tests/e2e/cluster.py: a free loopback port, run folder artifacts/deploy/class/), lives
through the module's tests, in order:

1. test_a_class_while_one_trains: a teacher's tab keeps a training running on Watch it learn
   (tests/e2e/trainer.py) while a small class walks the app, all at once
   (tests/e2e/crowd.py: each session types its own sentence, visits every page, uploads its
   own .txt file, translates its own English sentence, picks its own digit). Every session
   finishes with only its own tokens and words on every page (no cross-talk through the
   models and caches the replicas share between sessions), no exception box, no JavaScript
   error; nginx's access log shows each browser on one replica (websocket and upload
   included) and both replicas serving; training runs end; each replica's memory stays
   within its budget.
2. test_a_rolling_update: `supervisorctl restart glassbox:replica-N` under lesson tabs:
   the replica exits 0 on SIGTERM, its tabs reconnect to the other one with their page,
   sentence and head, and answer a new sentence.
3. test_a_class_through_faults: a class through a killed replica, a restarted nginx and a
   hung replica, one after another (tests/e2e/faults.py): no session and no lesson tab lost.
4. test_ctrl_c_stops_everything: Ctrl+C to deploy.serve stops supervisord, nginx and every
   replica, with status 0.

The class's capacity (30 sessions at 1 and 2 replicas, the p50/p90 table) is a benchmark:
bench/bench_deploy.py, its table in docs/DEPLOY.md. Tables of these runs go to the test
summary and artifacts/deploy/*.json; nothing is timed-asserted.

Marked `deploy` (and `e2e`): `-m "not deploy"` skips it. Without nginx (or a browser) it
skips, except under CI=true, where it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from deploy import serve
from deploy.listener import healthy
from tests.e2e import crowd, faults, harness, trainer
from tests.e2e.cluster import RUNS, Cluster, alive

pytestmark = [pytest.mark.e2e, pytest.mark.deploy]

# As few sessions as show what must hold: several at once on each replica (cross-talk), an
# upload and a translation each, a training beside them. GLASSBOX_DEPLOY_SESSIONS=N for more.
SESSIONS = int(os.environ.get("GLASSBOX_DEPLOY_SESSIONS", "4"))
CONCURRENCY = 4  # browser contexts at once
# A replica's memory after its class and a live training (docs/DEPLOY.md's budget: 1 GB for
# a replica whose class trains): a copy of a model per session or rerun would pass it.
REPLICA_BUDGET_MB = 1024
# The fault test's class: sessions walking while the three faults strike one after another
FAULT_SESSIONS = int(os.environ.get("GLASSBOX_FAULT_SESSIONS", "6"))
FAULT_CONCURRENCY = 3
# Which faults, in order (GLASSBOX_FAULTS=kill,hang to run some)
FAULTS = tuple(os.environ.get("GLASSBOX_FAULTS", ",".join(faults.KINDS)).split(","))
# A killed or stopped replica, a restarted nginx: every tab back within this. Streamlit's
# browser code waits longer after each refused attempt: 9.7 s was seen at a load of 18.
RECONNECT_LIMIT_S = 15
# A hung replica: the listener asks on its next 5 s tick and once more, 3 s each, kills it,
# and its tabs reconnect elsewhere (about 1 s): up to about 13 s, more on a loaded machine
HUNG_LIMIT_S = 20
RESTART_LIMIT_S = 45  # a dead or hung replica healthy again within this


@pytest.fixture(scope="module")
def nginx_path() -> str:
    path = serve.find_nginx()
    if path is None:
        harness.unavailable("no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
    return path


@pytest.fixture(scope="module")
def cluster(nginx_path, chromium_path):
    with Cluster(2, "class") as c:
        yield c


def _crowd(url: str, plan: crowd.Plan, chromium: str, concurrency: int, during=None):
    """The crowd on Playwright's async API, in a thread of its own (the other browser tests'
    sync Playwright may hold this one)."""
    shots = harness.ARTIFACTS / "screenshots"
    timeout = 120 + 40 * len(plan.visitors)
    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(asyncio.run, crowd.run_crowd(
            url, plan, chromium, concurrency, timeout, shots, during))  # fmt: skip
        return job.result()


def _report(request, *lines: str) -> None:
    request.config.stash.setdefault(harness.REPORT_KEY, []).extend(lines)


class Beside:
    """What runs beside the class: the teacher's training, and each replica's memory read
    every second (the peak kept)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster, self.teacher = cluster, trainer.Trainer(cluster.url)
        self.peak_mb = [0.0] * cluster.replicas
        self.teacher_replica: str | None = None

    async def __call__(self, class_: crowd.Crowd, browser) -> None:
        async def watch() -> None:
            while class_.completed + len(class_.failed) < class_.sessions:
                for i in range(self.cluster.replicas):
                    rss = await asyncio.to_thread(self.cluster.rss_mb, i + 1)
                    self.peak_mb[i] = max(self.peak_mb[i], rss)
                await asyncio.sleep(1)

        await asyncio.gather(self.teacher(class_, browser), watch())


@pytest.mark.timeout(900)
def test_a_class_while_one_trains(cluster, tokenizers, request) -> None:
    plan = crowd.make_plan(SESSIONS, tokenizers)
    beside = Beside(cluster)
    result = _crowd(cluster.url, plan, request.getfixturevalue("chromium_path"), CONCURRENCY,
                    during=beside)  # fmt: skip
    route = crowd.routing(cluster.run_dir / "access.log")
    row = crowd.row(2, int(serve.threads_per_replica(2)), result, route)
    row["replicas"] = "2 + training"
    report = {**row, "training_runs": beside.teacher.runs, "peak_rss_mb": beside.peak_mb}
    (RUNS / "class.json").write_text(json.dumps(report, indent=1) + "\n")
    _report(request, f"deploy: {SESSIONS} sessions through nginx, {CONCURRENCY} at a time, "
            f"2 replicas, while one trains ({beside.teacher.summary()}); peak RSS per replica "
            f"(MiB) {[round(m) for m in beside.peak_mb]}", *crowd.table([row]).split("\n"),
            f"  median per action (ms): {row['p50_ms_by_action']}")  # fmt: skip

    problems = list(result.failures)
    if route["split_keys"]:
        problems.append(f"browsers routed to two replicas: {route['split_keys']}")
    if route["uploads"] < SESSIONS or route["uploads_elsewhere"] or route["uploads_failed"]:
        problems.append(f"uploads lost or misrouted: {route}")
    if len(route["sessions_per_replica"]) != 2:
        problems.append(f"sessions per replica: {route['sessions_per_replica']}")
    if not beside.teacher.runs:
        problems.append("no training run ended while the class walked")
    over = [m for m in beside.peak_mb if m > REPLICA_BUDGET_MB]
    if over:
        problems.append(f"a replica over {REPLICA_BUDGET_MB} MiB: {beside.peak_mb}")
    assert not problems, "\n".join(problems[:20])


async def _rolling(cluster: Cluster, mlm, chromium: str) -> dict:
    """Lesson tabs on both replicas; restart the replica of the first; it must answer."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, headless=True,
                                           args=harness.CHROMIUM_ARGS)  # fmt: skip
        lessons = [await faults.Lesson(i, cluster.url, mlm).open(browser) for i in range(2)]
        try:
            target = await lessons[0].replica()
            index = int(target[1:])
            hit = [lesson for lesson in lessons if await lesson.replica() == target]
            old, since = cluster.replica(index)["pid"], time.time()
            done = await asyncio.to_thread(cluster.supervisorctl, "restart",
                                           f"glassbox:replica-{index}")  # fmt: skip
            for lesson in hit:
                await lesson.reconnected(since)
            # from the restart's SIGTERM (its start) until the tab's websocket was open again
            opens = [min(o for o in (await lesson.sockets())["opens"] if o > since * 1000)
                     for lesson in hit]  # fmt: skip
            reconnect_s = max(opens) / 1000 - since
            for lesson in hit:
                await lesson.answer()
            moved = [await lesson.replica() for lesson in hit]
            await asyncio.to_thread(cluster.wait_healthy, index, old)
            back_s = time.time() - since
        finally:
            for lesson in lessons:
                await lesson.close()
            await browser.close()
    return {"replica": index, "tabs": len(hit), "supervisorctl": done.stdout.strip(),
            "reconnect_s": round(reconnect_s, 1), "back_s": round(back_s, 1),
            "moved_to": moved, "from": target}  # fmt: skip


@pytest.mark.timeout(300)
def test_a_rolling_update(cluster, tokenizers, chromium_path, request) -> None:
    with ThreadPoolExecutor(1) as pool:
        r = pool.submit(asyncio.run, _rolling(cluster, tokenizers["mlm"], chromium_path)).result()
    _report(request, f"deploy rolling update: supervisorctl restart glassbox:replica-"
            f"{r['replica']}: {r['tabs']} lesson tab(s) reconnected in {r['reconnect_s']} s "
            f"to {r['moved_to']} and answered; the replica back in {r['back_s']} s")  # fmt: skip
    log = (cluster.run_dir / "supervisord.log").read_text()
    assert f"stopped: replica-{r['replica']} (exit status 0)" in log, log[-2000:]
    assert f"replica-{r['replica']}: started" in r["supervisorctl"], r
    assert all(m and m != r["from"] for m in r["moved_to"]), r
    assert r["reconnect_s"] <= RECONNECT_LIMIT_S, r


def _new_browsers(url: str, n: int = 4) -> list[str]:
    """The replicas nginx pins `n` new browsers to: the app's page asked for `n` times
    without cookies, one after another, each answer's replica cookie."""
    import urllib.request

    names = []
    for _ in range(n):
        with urllib.request.urlopen(f"{url}/", timeout=10) as answer:
            for header in answer.headers.get_all("Set-Cookie") or []:
                if header.startswith(f"{serve.COOKIE}="):
                    names.append(header.split(";")[0].split("=", 1)[1])
    return names


@pytest.mark.timeout(900)
def test_a_class_through_faults(cluster, chromium_path, tokenizers, request) -> None:
    """A class through a killed replica, a restarted nginx and a hung replica, one after
    another: no session or lesson tab lost, every tab back within the limits, the replica
    restarted and new sessions sent to it again."""
    plan = crowd.make_plan(FAULT_SESSIONS, tokenizers, seed=1)
    driver = faults.Driver(cluster, tokenizers["mlm"], FAULTS)
    result = _crowd(cluster.url, plan, chromium_path, FAULT_CONCURRENCY, during=driver)
    rows = driver.finish(result)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    report = {"sessions": FAULT_SESSIONS, "concurrency": FAULT_CONCURRENCY, "faults": rows,
              "crowd_failures": result.failures, "events": driver.events(),
              "reloaded_errors": result.reloaded_errors,
              "class_seconds": round(result.seconds, 1), "load": load}  # fmt: skip
    (RUNS / "faults.json").write_text(json.dumps(report, indent=1) + "\n")
    _report(request, f"deploy faults: {FAULT_SESSIONS} sessions through nginx, "
            f"{FAULT_CONCURRENCY} at a time, 2 replicas, {len(driver.lessons)} lesson tabs; "
            f"class {result.seconds:.0f} s; load average {load}",
            *faults.table(rows).split("\n"),
            *(f"a reloaded first page (session {i}) had thrown: {e[:200]}"
              for i, e in result.reloaded_errors))  # fmt: skip

    problems = list(result.failures)  # every lost session is one
    measured = {r["fault"] for r in rows}
    if measured != set(FAULTS):
        problems.append(f"faults measured: {sorted(measured)} of {FAULTS}")
    for r in rows:
        limit = HUNG_LIMIT_S if r["fault"] == "hang" else RECONNECT_LIMIT_S
        if r["tabs"] == 0:
            problems.append(f"{r['fault']}: no tab was on {r['target']}")
        if r["lost_why"]:
            problems.append(f"{r['fault']}: lost {r['lost_why']}")
        if r["reconnect_worst_s"] is None or r["reconnect_worst_s"] > limit:
            problems.append(f"{r['fault']}: reconnected in {r['reconnect_worst_s']} s > {limit}")
        if r["back_s"] is None or r["back_s"] > RESTART_LIMIT_S:
            problems.append(f"{r['fault']}: {r['target']} back after {r['back_s']} s")
    # New browsers reach the killed replica again once it is back, and nginx tries it
    # again: it skips a replica it could not reach (the moved tabs' first tries) for
    # fail_timeout after the last failed try. The class's few sessions started after that
    # may all go to the other replica (least_conn counts every open request: CI runs 10 and
    # 22 had 3 and 2 of them, none on it); then new page requests after the class must
    # reach it.
    kill = next((f for f in driver.faults if f.kind == "kill"), None)
    if kill is not None and kill.back_s is not None:
        again = kill.at + kill.back_s + serve.FAIL_TIMEOUT_S
        later = {i: result.first_replica.get(i) for i, t in result.started.items()
                 if t > again}  # fmt: skip
        name = f"r{kill.target.split()[-1]}"
        if name not in later.values() and name not in (after := _new_browsers(cluster.url)):
            problems.append(f"no new browser reached {kill.target} after its restart: "
                            f"the class's {later}, then {after}")  # fmt: skip
    assert not problems, "\n".join(problems[:20])


def test_ctrl_c_stops_everything(cluster) -> None:
    pids = cluster.pids()
    supervisord = int((cluster.run_dir / "supervisord.pid").read_text())
    ports = [cluster.port, *(r["port"] for r in cluster.info()["replicas"])]
    status = cluster.stop(signal.SIGINT)
    assert status == 0, cluster.output()
    assert not [p for p in [supervisord, *pids] if alive(p)], "a process outlived deploy.serve"
    log = (cluster.run_dir / "supervisord.log").read_text()
    assert re.search(r"stopped: nginx", log) and log.count("stopped: replica-") >= 2
    assert not [p for p in ports if healthy(f"http://127.0.0.1:{p}", 1)]
