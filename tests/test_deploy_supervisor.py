"""deploy.serve's supervisor and nginx configuration, with stand-in replicas (no browser).

Each stand-in is a tiny HTTP server that answers /_stcore/health with "ok" in well under a
second, so the supervisor's policy (restart with backoff, a replica that keeps dying left
down and reported, a hung replica killed, nginx restarted) is tested in seconds, with
nginx really in front. The app itself through these faults, in a browser, is
tests/e2e/test_deploy.py::test_a_class_through_faults.

Needs the nginx binary: skipped without it, except under CI=true, where it fails.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from deploy import serve

pytestmark = pytest.mark.deploy

# A stand-in replica: /_stcore/health says "ok", any other path says which replica answered.
# It exits at once when the file DIE_FILE exists (a replica that keeps dying).
STAND_IN = r"""
import http.server, os, sys
port, name, die = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if os.path.exists(die):
    sys.exit(3)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok" if self.path == "/_stcore/health" else name.encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"""
FAST = serve.Policy(
    health_interval=0.2, health_timeout=0.5, health_failures=3,
    backoff=(0.2, 0.4, 0.8), give_up_after=3, stable=5.0, start_timeout=10.0,
)  # fmt: skip


@pytest.fixture(scope="module")
def nginx_path() -> str:
    path = serve.find_nginx()
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but there is no nginx", pytrace=False)
        pytest.skip("no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
    return path


class Running:
    """A Cluster of stand-ins, supervised in a thread."""

    def __init__(self, run_dir: Path, nginx: str, replicas: int = 2) -> None:
        self.run_dir = run_dir
        self.cluster = serve.Cluster(
            replicas, serve.free_port(), run_dir=run_dir, nginx=nginx, policy=FAST,
            command=lambda m: [sys.executable, "-c", STAND_IN, str(m.port), f"r{m.index}",
                               str(run_dir / f"die-{m.index}")],
        )  # fmt: skip
        self.done = threading.Event()
        self.status: int | None = None

    def __enter__(self) -> Running:
        self.cluster.start()
        self.thread = threading.Thread(target=self._supervise, daemon=True)
        self.thread.start()
        return self

    def _supervise(self) -> None:
        self.status = self.cluster.supervise(self.done.is_set, every=0.05)

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join(10)
        self.cluster.stop()

    def member(self, index: int) -> serve.Replica:
        return self.cluster.members[index - 1]

    def wait(self, what, timeout: float = 15.0, message: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not what():
            assert time.monotonic() < deadline, message or "timed out"
            time.sleep(0.05)

    def events(self, what: str, replica=None) -> list[dict]:
        return [
            e for e in self.cluster.events
            if e["what"] == what and (replica is None or e.get("replica") == replica)
        ]  # fmt: skip

    def get(self, path: str = "/", cookie: str | None = None) -> tuple[str, str | None]:
        """Through nginx: the body (which replica answered) and the replica cookie set."""
        request = urllib.request.Request(self.cluster.url + path)
        if cookie:
            request.add_header("Cookie", f"{serve.COOKIE}={cookie}")
        with urllib.request.urlopen(request, timeout=5) as r:
            cookies = r.headers.get_all("Set-Cookie") or []
            body = r.read().decode()
        named = [c.split(";")[0].split("=", 1)[1] for c in cookies
                 if c.startswith(serve.COOKIE + "=")]  # fmt: skip
        return body, (named[0] if named else None)


def test_the_rendered_config_is_valid_nginx(nginx_path: str, tmp_path: Path) -> None:
    ports = [8501, 8502, 8503]
    for sticky in serve.STICKY:
        conf = tmp_path / f"{sticky}.conf"
        conf.write_text(serve.render_config(ports, "127.0.0.1:8080", tmp_path, sticky))
        (tmp_path / "tmp").mkdir(exist_ok=True)
        check = subprocess.run(
            [nginx_path, "-t", "-p", f"{tmp_path}/", "-c", str(conf),
             "-e", str(tmp_path / "error.log")],
            capture_output=True, text=True,
        )  # fmt: skip
        assert check.returncode == 0, check.stderr
        text = "\n".join(line.split("#")[0] for line in conf.read_text().splitlines())
        assert not re.search(r"@(RUN|UPSTREAMS|SET_REPLICA|POOL|LISTEN)@", text)  # all filled
        servers = re.findall(r"server 127\.0\.0\.1:(\d+) max_fails=1 fail_timeout=5s( backup)?;",
                             text)  # fmt: skip
        if sticky == "ip":
            assert "ip_hash;" in text and len(servers) == 3
            assert serve.COOKIE not in text and "glassbox_r1" not in text
            continue
        # The balanced pool (3), then each replica's own upstream: it, then the two others
        # as backups, starting after it.
        assert len(servers) == 3 + 3 * 3
        for i in range(len(ports)):
            block = re.search(rf"upstream glassbox_r{i + 1} \{{(.*?)\}}", text, re.S)[1]
            order = re.findall(r"127\.0\.0\.1:(\d+)", block)
            assert order == [str(p) for p in ports[i:] + ports[:i]]
            assert block.count("backup") == 2
        assert "least_conn;" in text and "proxy_pass http://$glassbox_pool;" in text


def test_failover_pins_the_browser_to_the_replica_that_answered(nginx_path, tmp_path) -> None:
    with Running(tmp_path, nginx_path) as run:
        # New browsers (no cookie) spread over both replicas and are told which one.
        seen = {run.get()[1] for _ in range(6)}
        assert seen == {"r1", "r2"}
        assert run.get(cookie="r1") == ("r1", None)  # pinned: no new cookie
        run.member(1).proc.kill()  # restarted 0.2 s later at the earliest
        run.member(1).proc.wait()
        body, cookie = run.get(cookie="r1")
        assert (body, cookie) == ("r2", "r2")  # failed over, and pinned to r2


def test_a_killed_replica_is_restarted_and_gets_new_browsers(nginx_path, tmp_path) -> None:
    with Running(tmp_path, nginx_path) as run:
        first = run.member(1).proc.pid
        killed = time.monotonic()
        run.member(1).proc.kill()
        for _ in range(3):  # browsers meanwhile: nginx marks it failed, they go to r2
            assert run.get(cookie="r1")[0] == "r2"
        run.wait(lambda: run.member(1).state == "up" and run.member(1).proc.pid != first,
                 message="replica 1 was not restarted")  # fmt: skip
        restarted = time.monotonic() - killed
        assert restarted < 5
        assert [e["delay"] for e in run.events("died", 1)] == [FAST.backoff[0]]
        assert run.events("restart", 1) and run.events("up", 1)
        assert run.cluster.info()["replicas"][0]["restarts"] == 1
        # New browsers reach it again once nginx's fail_timeout is over.
        run.wait(lambda: run.get()[1] == "r1", timeout=serve.FAIL_TIMEOUT_S + 5,
                 message="no new browser reached the restarted replica")  # fmt: skip


def test_a_replica_that_keeps_dying_is_reported_and_left_down(nginx_path, tmp_path) -> None:
    with Running(tmp_path, nginx_path) as run:
        (tmp_path / "die-2").touch()  # from now on it exits as soon as it starts
        run.member(2).proc.kill()
        run.wait(lambda: run.member(2).state == "failed", timeout=20,
                 message="replica 2 was restarted for ever")  # fmt: skip
        died = run.events("died", 2)
        assert [e["delay"] for e in died] == list(FAST.backoff[: FAST.give_up_after - 1])
        failed = run.events("failed", 2)
        assert len(failed) == 1 and "keeps dying" in failed[0]["message"]
        restarts = run.member(2).restarts
        time.sleep(2 * FAST.backoff[-1])
        assert run.member(2).restarts == restarts == FAST.give_up_after - 1  # no more
        assert run.status is None and run.member(1).state == "up"  # still serving
        assert run.get(cookie="r2")[0] == "r1"
        assert "keeps dying" in (tmp_path / "events.log").read_text()


def test_a_hung_replica_is_killed_and_restarted(nginx_path, tmp_path) -> None:
    with Running(tmp_path, nginx_path) as run:
        hung = run.member(2).proc.pid
        stopped = time.monotonic()
        os.kill(hung, signal.SIGSTOP)
        run.wait(lambda: bool(run.events("hung", 2)), message="the hang was not noticed")
        noticed = time.monotonic() - stopped
        # health_failures checks, each timing out, one interval apart at most
        limit = FAST.health_failures * (FAST.health_timeout + FAST.health_interval) + 1
        assert noticed < limit
        run.wait(lambda: run.member(2).state == "up" and run.member(2).proc.pid != hung,
                 message="the hung replica was not restarted")  # fmt: skip
        with pytest.raises(ProcessLookupError):
            os.kill(hung, 0)


def test_nginx_is_restarted_when_it_dies(nginx_path, tmp_path) -> None:
    with Running(tmp_path, nginx_path) as run:
        for sig in (signal.SIGKILL, signal.SIGTERM):  # killed (its workers left) or stopped
            old = run.cluster.nginx_proc.pid
            os.kill(old, sig)
            back = lambda o=old: run.cluster.nginx_proc.pid != o and serve.healthy(run.cluster.url)  # noqa: E731
            run.wait(back, message="nginx was not restarted")
        assert run.cluster.nginx_restarts == 2
        assert run.status is None


def test_stop_ends_a_hung_replica_too(nginx_path, tmp_path) -> None:
    run = Running(tmp_path, nginx_path).__enter__()
    pids = [m.proc.pid for m in run.cluster.members]
    os.kill(pids[0], signal.SIGSTOP)
    started = time.monotonic()
    run.__exit__(None, None, None)
    assert time.monotonic() - started < 8
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_command_line_answers() -> None:
    out = subprocess.run([sys.executable, "-m", "deploy.serve", "--help"], capture_output=True,
                         text=True, cwd=serve.ROOT)  # fmt: skip
    assert out.returncode == 0 and "--health-timeout" in out.stdout
    conf = subprocess.run([sys.executable, "-m", "deploy.serve", "--print-config"],
                          capture_output=True, text=True, cwd=serve.ROOT)  # fmt: skip
    assert conf.returncode == 0 and "upstream glassbox_r2" in conf.stdout
