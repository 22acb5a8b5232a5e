"""`python -m deploy.serve` under supervisord, with real replicas and no browser.

One cluster of 2 replicas lives through every step of one test (a module-scoped cluster
would be started once per xdist worker): supervisord is the parent of every replica and of
deploy/front.py, nginx's parent; supervisorctl sees them; nginx serves Streamlit's frontend
and the app's static/ from disk with long cache headers, and the pages, health and websocket
from the replicas; a killed replica is restarted and cluster.json follows; a hung one
(SIGSTOP) is killed by the event listener and restarted; nginx stopped is restarted, and so
is nginx killed (its workers are not left on the port), and a request made while no nginx
runs waits for the next one instead of being refused; a replica sent SIGTERM (a rolling
update) exits 0 and comes back; Ctrl+C stops everything. The app through these faults in a
browser: tests/e2e/test_deploy.py.

Needs the nginx binary: skipped without it, except under CI=true, where it fails.
"""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from deploy import serve
from deploy.listener import healthy
from tests.e2e import harness
from tests.e2e.cluster import Cluster, alive

pytestmark = pytest.mark.deploy
STREAMLIT_STATIC = Path(__import__("streamlit").__file__).parent / "static"


@pytest.fixture(scope="module")
def nginx_path() -> str:
    path = serve.find_nginx()
    if path is None:
        harness.unavailable("no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
    return path


def _get(url: str) -> tuple[int, dict, bytes]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command's name: its state letter ("R", "S", "Z": a
    zombie), then its parent's pid, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _parent(pid: int) -> int:
    return int(_stat(pid)[1])


def _state(pid: int) -> str | None:
    """The process's state letter, None when there is no such process."""
    try:
        return _stat(pid)[0]
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    """The pids whose parent is `pid`, now."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if _parent(int(stat.parent.name)) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return out


def _logged(cluster: Cluster, path: str) -> str:
    """The upstream nginx logged for the last request of `path` ("-": served from disk);
    nginx writes the line once the response is sent, so it may come just after it."""
    lines: list[str] = []

    def logged() -> bool:
        lines[:] = [x for x in (cluster.run_dir / "access.log").read_text().splitlines()
                    if f'"GET {path}"' in x]  # fmt: skip
        return bool(lines)

    cluster.wait(logged, 10, f"{path} in access.log")
    return re.search(r"upstream=(\S+)", lines[-1])[1]


def test_print_config_renders_both_configurations(tmp_path, nginx_path, capsys) -> None:
    assert serve.main(["--replicas", "3", "--print-config", "--run-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[program:replica-3]" in out and "--server.port 8503" in out
    assert "programs = replica-1,replica-2,replica-3,nginx" in out
    assert "events = TICK_5,PROCESS_STATE" in out
    assert f"root {STREAMLIT_STATIC};" in out and f"alias {harness.ROOT / 'static'}/;" in out
    assert set(re.findall(r"@([A-Z_]+)@", out)) <= {"NAME"}  # every placeholder filled


def test_a_cluster_under_supervisord(nginx_path) -> None:
    with Cluster(2, "supervisor") as c:
        info = c.info()
        supervisord = int((c.run_dir / "supervisord.pid").read_text())
        for pid in c.pids()[1:]:
            assert _parent(pid) == supervisord, f"replica {pid} is not supervisord's child"
        front = _parent(info["nginx_pid"])
        assert "deploy.front" in Path(f"/proc/{front}/cmdline").read_text()
        assert _parent(front) == supervisord, "deploy.front is not supervisord's child"
        names = ("glassbox:replica-1", "glassbox:replica-2", "glassbox:nginx")
        c.wait(lambda: all(re.search(rf"^{n}\s+RUNNING", c.supervisorctl("status").stdout, re.M)
                           for n in names), 30, "RUNNING in supervisorctl status")  # fmt: skip

        # Static files from disk, cached long; the rest from the replicas.
        js = next((STREAMLIT_STATIC / "static" / "js").glob("index.*.js")).name
        code, headers, _ = _get(f"{c.url}/static/js/{js}")
        assert code == 200 and "immutable" in headers["cache-control"]
        assert _logged(c, f"/static/js/{js}") == "-"
        code, headers, body = _get(f"{c.url}/app/static/plotly-cartesian.min.js")
        assert code == 200 and "max-age=86400" in headers["cache-control"] and len(body) > 1e5
        assert _logged(c, "/app/static/plotly-cartesian.min.js") == "-"
        code, headers, body = _get(f"{c.url}/attention")
        assert code == 200 and b"<!DOCTYPE html>" in body and headers["cache-control"] == "no-cache"
        assert _logged(c, "/attention") != "-"

        # A killed replica: restarted on its port, cluster.json names its new pid.
        old = c.kill(1)
        c.wait_healthy(1, old)
        assert c.replica(1)["port"] == info["replicas"][0]["port"]
        # A hung one: the listener finds it, kills it, supervisord restarts it.
        old = c.kill(2, signal.SIGSTOP)
        c.wait_healthy(2, old)
        assert '"what": "hung"' in (c.run_dir / "events.log").read_text()
        # nginx stopped: restarted.
        old = c.info()["nginx_pid"]
        serve_log = c.run_dir / "supervisord.log"
        c.supervisorctl("signal", "TERM", "glassbox:nginx")
        c.wait(lambda: c.info()["nginx_pid"] not in (None, old) and healthy(c.url, 2), 60,
               "nginx restarted")  # fmt: skip
        # nginx's master killed: deploy.front kills the workers it left on the port (they
        # would keep it, and the tabs' websockets, from the next nginx) and starts nginx again.
        old = c.info()["nginx_pid"]
        workers = _children(old)
        assert workers, "nginx has no workers"
        os.kill(old, signal.SIGKILL)
        c.wait(lambda: c.info()["nginx_pid"] not in (None, old) and healthy(c.url, 2)
               and not [p for p in workers if alive(p)], 60,
               "nginx restarted, its old workers gone")  # fmt: skip
        # No nginx at all for a moment (deploy.front held still, nginx and its workers
        # killed): a request then waits on the open port, and the next nginx answers it.
        old, front = c.info()["nginx_pid"], _parent(c.info()["nginx_pid"])
        os.kill(front, signal.SIGSTOP)
        try:
            workers = _children(old)
            os.killpg(old, signal.SIGKILL)  # its master stays a zombie: its parent is held
            c.wait(lambda: _state(old) in ("Z", None) and not [p for p in workers if alive(p)],
                   10, "nginx gone")  # fmt: skip
            with ThreadPoolExecutor(1) as pool:
                waiting = pool.submit(_get, f"{c.url}/favicon.png")
                time.sleep(1.0)
                assert not waiting.done(), f"answered with no nginx running: {waiting.result()}"
                os.kill(front, signal.SIGCONT)
                assert waiting.result()[0] == 200
        finally:
            os.kill(front, signal.SIGCONT)
        c.wait(lambda: c.info()["nginx_pid"] not in (None, old), 30,
               "the next nginx in cluster.json")  # the listener writes it a moment later
        # A rolling update: supervisorctl restart stops a replica with SIGTERM, it exits 0.
        old = c.replica(1)["pid"]
        done = c.supervisorctl("restart", "glassbox:replica-1")
        assert "replica-1: started" in done.stdout, done.stdout + done.stderr
        assert "stopped: replica-1 (exit status 0)" in serve_log.read_text()
        c.wait_healthy(1, old)
        pids = c.pids()
        ports = [c.port, *(r["port"] for r in c.info()["replicas"])]
        # Every replica stopped: nginx still serves the static files from disk.
        stopped = c.supervisorctl("stop", "glassbox:replica-1", "glassbox:replica-2")
        assert "replica-1: stopped" in stopped.stdout, stopped.stdout + stopped.stderr
        assert "replica-2: stopped" in stopped.stdout, stopped.stdout + stopped.stderr
        assert not [p for p in pids[1:] if alive(p)], "a stopped replica still runs"
        for path in (f"/static/js/{js}", "/app/static/plotly-cartesian.min.js"):
            code, _, body = _get(f"{c.url}{path}")
            assert code == 200 and len(body) > 1000, path
    assert c.status == 0, c.output()
    assert not [p for p in pids if alive(p)], "a process outlived deploy.serve"
    assert not alive(supervisord)
    assert not [p for p in ports if healthy(f"http://127.0.0.1:{p}", 1)]
