"""N Streamlit replicas of the app behind nginx, on this machine, supervised, until Ctrl+C.

    python -m deploy.serve [--replicas 2] [--port 8080] [--threads T] [--sticky cookie|ip]
                           [--run-dir DIR] [--health-interval S] [--health-timeout S]
                           [--health-failures N] [--print-config]

1. Starts N replicas (`python -m deploy.replica app.py`: `streamlit run` with the failover
   patch of deploy/failover.py) on free loopback ports (127.0.0.1), each with
   OMP_NUM_THREADS = its share of the CPU cores (torch reads it when it starts; the app
   keeps that count, and sets one thread only when the variable is unset) and one shared
   cookie secret.
2. Waits until every replica answers /_stcore/health with "ok".
3. Renders deploy/nginx.conf.in into a run folder (a new temporary one unless --run-dir) and
   starts the system `nginx` on it in the foreground: no root needed, listening on
   --address:--port, its pid, logs and temp folders in the run folder. (Started as root,
   nginx's workers run as `nobody`, as usual.)
4. Supervises, until stopped (Policy holds the numbers):
   - asks every replica's /_stcore/health each second; one that does not answer "ok" within
     2 s three times in a row is hung: it is killed (SIGKILL), which closes its tabs'
     websockets, so they reconnect to a live replica at once;
   - restarts a replica that exited (or was killed) on its own port, after 1 s, then 2, 4,
     8, 16 s when it dies again soon after (within 60 s of becoming healthy); the fifth
     death in a row is reported and that replica is left down (nginx routes around it);
     one that stays healthy 60 s starts its count over;
   - restarts nginx when it exits, in the same way;
   - reports every exit, hang, restart and give-up on stderr and in RUN/events.log, and
     keeps RUN/cluster.json current (ports, pids, states, restarts);
   - stops (exit status 1) when every replica was given up, or nginx was.
5. Ctrl+C, SIGTERM or SIGHUP stop nginx, then every replica (SIGTERM, SIGKILL after 10 s),
   and remove a temporary run folder. Each child runs in its own session, so a Ctrl+C in
   the terminal reaches this script only, which stops them in that order.

The run folder holds nginx.conf, error.log, access.log (one line per request, with the
replica it went to), replica-<i>.log, events.log and cluster.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.in"
STICKY = ("cookie", "ip")
MAX_FAILS, FAIL_TIMEOUT_S = 1, 5  # nginx's passive health check, per replica
COOKIE = "glassbox_replica"  # names the replica a browser is pinned to: r1, r2, ...


def find_nginx() -> str | None:
    """$GLASSBOX_NGINX when set (and only it), else `nginx` on PATH or /usr/sbin/nginx."""
    forced = os.environ.get("GLASSBOX_NGINX")
    candidates = [forced] if forced else [shutil.which("nginx"), "/usr/sbin/nginx"]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def cores() -> int:
    """CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def threads_per_replica(replicas: int, n_cores: int | None = None) -> int:
    """Each replica's share of the cores (at least one torch thread)."""
    return max(1, (n_cores or cores()) // max(1, replicas))


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def port_free(port: int, address: str = "127.0.0.1") -> bool:
    """Whether a new server could listen on `port` now."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def _upstreams(ports: list[int], sticky: str) -> str:
    """The upstream blocks (and, by cookie, the maps that pick one and name the replica that
    answered) for replicas on these loopback ports."""

    def server(port: int, backup: bool = False) -> str:
        extra = " backup" if backup else ""
        return (f"        server 127.0.0.1:{port} max_fails={MAX_FAILS} "
                f"fail_timeout={FAIL_TIMEOUT_S}s{extra};")  # fmt: skip

    if sticky == "ip":
        return "\n".join(["    upstream glassbox {", "        ip_hash;",
                          *(server(p) for p in ports), "    }"])  # fmt: skip
    names = [f"r{i + 1}" for i in range(len(ports))]
    cookie = f"{COOKIE}={{}}; Path=/; HttpOnly; SameSite=Lax"
    lines = [
        '    # The replica that answered: the last of $upstream_addr ("A, B" after A failed).',
        "    map $upstream_addr $glassbox_served {",
        '        default "";',
        *(f'        "~(^|, )127\\.0\\.0\\.1:{p}$" {n};' for n, p in zip(names, ports, strict=True)),
        "    }",
        "    # The cookie, when the replica that answered is not the one it names.",
        f'    map "$cookie_{COOKIE}/$glassbox_served" $glassbox_set_replica {{',
        '        default "";',
        *(f'        "{n}/{n}" "";' for n in names),
        *(f'        "~/{n}$" "{cookie.format(n)}";' for n in names),
        "    }",
        "    # A browser's replica, named by its cookie; a new browser (or a name this config",
        "    # does not know) goes to the balanced pool.",
        f"    map $cookie_{COOKIE} $glassbox_pool {{",
        "        default glassbox;",
        *(f"        {n} glassbox_{n};" for n in names),
        "    }",
        "    upstream glassbox {",
        "        least_conn;",
        *(server(p) for p in ports),
        "    }",
    ]
    for i, (name, port) in enumerate(zip(names, ports, strict=True)):
        others = ports[i + 1 :] + ports[:i]  # each replica's backups start after it
        lines += [f"    upstream glassbox_{name} {{", server(port),
                  *(server(p, backup=True) for p in others), "    }"]  # fmt: skip
    return "\n".join(lines)


def render_config(
    ports: list[int], listen: str, run_dir: Path | str, sticky: str = "cookie"
) -> str:
    """deploy/nginx.conf.in for these replica ports, listening on `listen` (address:port)."""
    if sticky not in STICKY:
        raise ValueError(f"sticky must be one of {STICKY}, not {sticky!r}")
    by_cookie = sticky == "cookie"
    text = TEMPLATE.read_text()
    for name, value in {
        "@RUN@": str(Path(run_dir).resolve()),
        "@UPSTREAMS@": _upstreams(ports, sticky),
        "@SET_REPLICA@": "        add_header Set-Cookie $glassbox_set_replica always;"
        if by_cookie
        else "        # (--sticky ip: no replica cookie)",
        "@POOL@": "$glassbox_pool" if by_cookie else "glassbox",
        "@LISTEN@": listen,
    }.items():
        text = text.replace(name, value)
    return text


def healthy(url: str, timeout: float = 1.0) -> bool:
    """Whether `url`/_stcore/health answers "ok"."""
    with (
        contextlib.suppress(OSError),
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r,
    ):
        return r.status == 200 and r.read().strip() == b"ok"
    return False


@dataclass(frozen=True)
class Policy:
    """The supervisor's numbers (seconds unless said)."""

    health_interval: float = 1.0  # each replica's /_stcore/health is asked this often
    health_timeout: float = 2.0  # ... and must answer "ok" within this
    health_failures: int = 3  # failed checks in a row: the replica is hung, and killed
    backoff: tuple[float, ...] = (1, 2, 4, 8, 16)  # wait before the 1st, 2nd, ... restart
    give_up_after: int = 5  # deaths in a row: reported, not restarted again
    stable: float = 60.0  # healthy this long: its deaths in a row start over
    start_timeout: float = 120.0  # a (re)started replica must be healthy within this

    def delay(self, deaths: int) -> float:
        """The wait before restarting something that died `deaths` times in a row."""
        return self.backoff[min(deaths, len(self.backoff)) - 1]


@dataclass
class Replica:
    """One replica process on a loopback port, and what the supervisor knows of it."""

    index: int
    port: int
    threads: int
    log: Path
    proc: subprocess.Popen | None = None
    state: str = "starting"  # starting | up | down (restart due) | failed (given up)
    spawned_at: float = 0.0  # time.monotonic() of the current process's start
    up_since: float | None = None  # when it last became healthy
    restart_at: float = 0.0  # when down: when it is started again
    deaths: int = 0  # deaths in a row (each before it was up `stable` seconds)
    restarts: int = 0
    missed: int = 0  # failed health checks in a row
    slowest_health_s: float = 0.0  # the slowest "ok" seen while up
    check: Future | None = None
    check_started: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def name(self) -> str:
        return f"replica {self.index}"


def _stop(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
        os.kill(proc.pid, signal.SIGCONT)  # a stopped (hung) process handles nothing else
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=wait)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
    return f"status {code}"


@dataclass
class Cluster:
    """N replicas and nginx in front of them; `with Cluster(...) as c:` starts and stops,
    `supervise()` (or `tick()` now and then) keeps them up."""

    replicas: int = 2
    port: int = 8080
    address: str = "127.0.0.1"
    threads: int | None = None  # torch threads per replica; None: threads_per_replica
    sticky: str = "cookie"
    run_dir: Path | None = None  # None: a temporary folder, removed at stop()
    app: str = "app.py"
    nginx: str | None = None  # the nginx binary; None: find_nginx()
    policy: Policy = field(default_factory=Policy)
    # The command of one replica (tests use a stand-in); None: python -m deploy.replica.
    command: Callable[[Replica], list[str]] | None = None
    members: list[Replica] = field(default_factory=list)
    nginx_proc: subprocess.Popen | None = None
    nginx_deaths: int = 0
    nginx_restarts: int = 0
    nginx_restart_at: float | None = None
    nginx_up_since: float = 0.0
    events: list[dict] = field(default_factory=list)
    _env: dict = field(default_factory=dict)
    _temporary: bool = False
    _logs: dict = field(default_factory=dict)
    _pool: ThreadPoolExecutor | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    # -- starting -----------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> Cluster:
        """Start the replicas, wait until each is healthy, then start nginx and wait for it."""
        timeout = timeout or self.policy.start_timeout
        self.nginx = self.nginx or find_nginx()
        if self.nginx is None:
            raise RuntimeError("no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
        if self.run_dir is None:
            self.run_dir, self._temporary = Path(tempfile.mkdtemp(prefix="glassbox-")), True
        self.run_dir = Path(self.run_dir).resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # nginx's workers (nobody) must be able to enter it
            self.run_dir.chmod(0o755)
        threads = self.threads or threads_per_replica(self.replicas)
        self._env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
            # One secret for all replicas: a tab that fails over keeps a valid XSRF cookie.
            "STREAMLIT_SERVER_COOKIE_SECRET": os.environ.get(
                "STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32)
            ),
        }
        self._pool = ThreadPoolExecutor(max(2, self.replicas), thread_name_prefix="health")
        for i in range(self.replicas):
            member = Replica(i + 1, free_port(), threads, self.run_dir / f"replica-{i + 1}.log")
            self.members.append(member)
            self._spawn(member, fresh_log=True)
        deadline = time.monotonic() + timeout
        for member in self.members:
            while not healthy(member.url):
                if member.proc.poll() is not None:
                    raise RuntimeError(f"replica {member.index} exited:\n{tail(member.log)}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"replica {member.index} not healthy:\n{tail(member.log)}")
                time.sleep(0.1)
            member.state, member.up_since = "up", time.monotonic()
        self._start_nginx(deadline)
        return self

    def _replica_command(self, member: Replica) -> list[str]:
        if self.command is not None:
            return self.command(member)
        return [sys.executable, "-m", "deploy.replica", self.app,
                "--server.address", "127.0.0.1", "--server.port", str(member.port),
                "--server.headless", "true", "--server.fileWatcherType", "none",
                "--browser.gatherUsageStats", "false"]  # fmt: skip

    def _spawn(self, member: Replica, fresh_log: bool = False) -> None:
        old = self._logs.pop(member.index, None)
        if old is not None:
            old.close()
        log = member.log.open("w" if fresh_log else "a")
        if not fresh_log:
            log.write(f"\n----- restarted ({time.strftime('%H:%M:%S')}) -----\n")
            log.flush()
        self._logs[member.index] = log
        member.proc = subprocess.Popen(
            self._replica_command(member), cwd=ROOT, env=self._env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        member.state, member.spawned_at, member.up_since = "starting", time.monotonic(), None
        member.missed, member.check = 0, None

    def config(self) -> str:
        assert self.run_dir is not None
        return render_config([m.port for m in self.members], f"{self.address}:{self.port}",
                             self.run_dir, self.sticky)  # fmt: skip

    def _nginx_cmd(self) -> list[str]:
        assert self.run_dir is not None and self.nginx is not None
        return [self.nginx, "-p", f"{self.run_dir}/", "-c", str(self.run_dir / "nginx.conf"),
                "-e", str(self.run_dir / "error.log")]  # fmt: skip

    def _write_config(self) -> None:
        assert self.run_dir is not None
        conf = self.run_dir / "nginx.conf"
        conf.write_text(self.config())
        (self.run_dir / "tmp").mkdir(exist_ok=True)
        check = subprocess.run([*self._nginx_cmd(), "-t", "-q"], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx rejects {conf}:\n{check.stderr}")

    def _start_nginx(self, deadline: float | None = None) -> None:
        assert self.run_dir is not None
        self._write_config()
        self.nginx_proc = subprocess.Popen(
            self._nginx_cmd(), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.nginx_up_since = time.monotonic()
        self.write_info()
        if deadline is None:
            return
        while not healthy(self.url):
            if self.nginx_proc.poll() is not None:
                raise RuntimeError(f"nginx exited:\n{tail(self.run_dir / 'error.log')}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"nginx not healthy:\n{tail(self.run_dir / 'error.log')}")
            time.sleep(0.05)

    # -- what runs where ----------------------------------------------------------------

    def info(self) -> dict:
        """What runs where: nginx's URL and pid, each replica's port, pid, threads, state."""
        return {
            "url": self.url,
            "run_dir": str(self.run_dir),
            "sticky": self.sticky,
            "nginx_pid": self.nginx_proc.pid if self.nginx_proc else None,
            "nginx_restarts": self.nginx_restarts,
            "replicas": [
                {
                    "index": m.index,
                    "port": m.port,
                    "pid": m.proc.pid if m.proc else None,
                    "threads": m.threads,
                    "state": m.state,
                    "restarts": m.restarts,
                    "slowest_health_s": round(m.slowest_health_s, 3),
                }
                for m in self.members
            ],
        }

    def write_info(self) -> None:
        assert self.run_dir is not None
        path = self.run_dir / "cluster.json"
        path.with_suffix(".tmp").write_text(json.dumps(self.info(), indent=1) + "\n")
        path.with_suffix(".tmp").replace(path)  # readers never see half a file

    def report(self, what: str, **detail) -> None:
        """One event: on stderr, in RUN/events.log, in self.events."""
        event = {"t": time.time(), "what": what, **detail}
        self.events.append(event)
        line = f"[{time.strftime('%H:%M:%S')}] {detail.get('message', what)}"
        print(line, file=sys.stderr, flush=True)
        if self.run_dir is not None:
            with (self.run_dir / "events.log").open("a") as f:
                f.write(json.dumps(event) + "\n")

    def dead(self) -> list[str]:
        """The processes that are not running now: "nginx", "replica 2", ..."""
        gone = [m.name for m in self.members if m.proc is None or m.proc.poll() is not None]
        if self.nginx_proc is not None and self.nginx_proc.poll() is not None:
            gone.insert(0, "nginx")
        return gone

    # -- supervising --------------------------------------------------------------------

    def tick(self) -> int | None:
        """One round of supervision (never blocks for long); an exit status when there is
        nothing left to serve with, else None."""
        with self._lock:
            now = time.monotonic()
            for member in self.members:
                self._watch(member, now)
            if self._watch_nginx(now) or all(m.state == "failed" for m in self.members):
                return 1
            return None

    def supervise(self, until: Callable[[], bool] | None = None, every: float = 0.2) -> int:
        """tick() until it says stop, or until `until()`; the exit status."""
        while until is None or not until():
            status = self.tick()
            if status is not None:
                return status
            time.sleep(every)
        return 0

    def _watch(self, m: Replica, now: float) -> None:
        p = self.policy
        if m.state == "failed":
            return
        if m.state == "down":
            if now >= m.restart_at:
                self._restart(m)
            return
        code = m.proc.poll() if m.proc else -1
        if code is not None:
            self._died(m, now, f"exited ({_exit_text(code)})")
            return
        if m.state == "up" and m.deaths and now - (m.up_since or now) >= p.stable:
            m.deaths = 0
        if m.check is not None and m.check.done():
            ok, m.check = m.check.result(), None
            took = now - m.check_started
            if ok:
                if m.state == "starting":
                    m.state, m.up_since = "up", now
                    self.report("up", replica=m.index, pid=m.proc.pid,
                                seconds=round(now - m.spawned_at, 2),
                                message=f"{m.name} healthy {now - m.spawned_at:.1f} s after "
                                        f"its start (pid {m.proc.pid})")  # fmt: skip
                    self.write_info()
                else:
                    m.slowest_health_s = max(m.slowest_health_s, took)
                m.missed = 0
            elif m.state == "up":
                m.missed += 1
                if m.missed >= p.health_failures:
                    self.report("hung", replica=m.index, pid=m.proc.pid,
                                message=f"{m.name} hung: no 'ok' from /_stcore/health "
                                        f"{m.missed} times in a row; killed (SIGKILL)")  # fmt: skip
                    with contextlib.suppress(ProcessLookupError):
                        m.proc.kill()
                    m.proc.wait(timeout=10)
                    self._died(m, time.monotonic(), "killed after hanging")
                    return
        if m.state == "starting" and now - m.spawned_at > p.start_timeout:
            with contextlib.suppress(ProcessLookupError):
                m.proc.kill()
            m.proc.wait(timeout=10)
            self._died(m, now, f"not healthy {p.start_timeout:.0f} s after its start; killed")
            return
        interval = p.health_interval if m.state == "up" else 0.2
        if m.check is None and now - m.check_started >= interval and self._pool is not None:
            m.check_started = now
            timeout = p.health_timeout if m.state == "up" else 1.0
            m.check = self._pool.submit(healthy, m.url, timeout)

    def _died(self, m: Replica, now: float, why: str) -> None:
        p = self.policy
        was_up = m.state == "up" and m.up_since is not None and now - m.up_since >= p.stable
        m.deaths = 1 if was_up else m.deaths + 1
        m.check, m.up_since = None, None
        if m.deaths >= p.give_up_after:
            m.state = "failed"
            self.report("failed", replica=m.index, deaths=m.deaths,
                        message=f"{m.name} {why}; it keeps dying ({m.deaths} times in a row, "
                                f"each within {p.stable:.0f} s of its start): not restarted "
                                f"again; see {m.log}")  # fmt: skip
        else:
            delay = p.delay(m.deaths)
            m.state, m.restart_at = "down", now + delay
            self.report("died", replica=m.index, deaths=m.deaths, delay=delay,
                        message=f"{m.name} {why}; restarting in {delay:g} s "
                                f"({m.deaths} in a row)")  # fmt: skip
        self.write_info()

    def _restart(self, m: Replica) -> None:
        moved = ""
        if not port_free(m.port):  # someone took its port meanwhile: a new one, nginx told
            m.port, moved = free_port(), " on a new port"
        self._spawn(m)
        m.restarts += 1
        if moved and self.nginx_proc is not None and self.nginx_proc.poll() is None:
            self._write_config()
            self.nginx_proc.send_signal(signal.SIGHUP)  # reload: new workers, new ports
        self.report(
            "restart",
            replica=m.index,
            pid=m.proc.pid,
            port=m.port,
            message=f"{m.name} restarted{moved} (pid {m.proc.pid}, port {m.port})",
        )
        self.write_info()

    def _watch_nginx(self, now: float) -> bool:
        """Restart nginx when it exited (backed off as replicas are); True when given up."""
        p, proc = self.policy, self.nginx_proc
        if proc is None:
            return False
        if self.nginx_restart_at is not None:
            if now >= self.nginx_restart_at:
                self.nginx_restart_at = None
                self._start_nginx()
                self.nginx_restarts += 1
                self.report(
                    "restart",
                    replica="nginx",
                    pid=self.nginx_proc.pid,
                    message=f"nginx restarted (pid {self.nginx_proc.pid})",
                )
            return False
        code = proc.poll()
        if code is None:
            if self.nginx_deaths and now - self.nginx_up_since >= p.stable:
                self.nginx_deaths = 0
            return False
        # Its workers outlive a master that was killed (SIGKILL) and keep the port: they go
        # too (the master leads their process group).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        stable = now - self.nginx_up_since >= p.stable
        self.nginx_deaths = 1 if stable else self.nginx_deaths + 1
        if self.nginx_deaths >= p.give_up_after:
            self.report("failed", replica="nginx", deaths=self.nginx_deaths,
                        message=f"nginx exited ({_exit_text(code)}); it keeps dying: "
                                f"stopping; see {self.run_dir}/error.log")  # fmt: skip
            return True
        delay = p.delay(self.nginx_deaths)
        self.nginx_restart_at = now + delay
        self.report(
            "died",
            replica="nginx",
            deaths=self.nginx_deaths,
            delay=delay,
            message=f"nginx exited ({_exit_text(code)}); restarting in {delay:g} s",
        )
        return False

    # -- stopping -----------------------------------------------------------------------

    def stop(self) -> None:
        """nginx first (fast shutdown), then every replica; then the temporary run folder."""
        with self._lock:
            _stop(self.nginx_proc)
            for member in self.members:
                member.state = "failed"  # nothing is restarted from here on
                with contextlib.suppress(ProcessLookupError):
                    if member.proc and member.proc.poll() is None:
                        member.proc.send_signal(signal.SIGTERM)
                        os.kill(member.proc.pid, signal.SIGCONT)
            for member in self.members:
                _stop(member.proc)
            for log in self._logs.values():
                log.close()
            self._logs.clear()
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            if self._temporary and self.run_dir is not None:
                shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def tail(path: Path, n: int = 30) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    return ""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    default = Policy()
    parser = argparse.ArgumentParser(
        prog="python -m deploy.serve",
        description="Serve the app as N Streamlit replicas behind nginx on this machine, "
        "restarting a replica that dies or hangs (until Ctrl+C or SIGTERM).",
    )
    parser.add_argument("--replicas", type=int, default=2, help="Streamlit processes (2)")
    parser.add_argument("--port", type=int, default=8080, help="nginx's port (8080)")
    parser.add_argument(
        "--address",
        default="127.0.0.1",
        help="nginx's address (127.0.0.1; 0.0.0.0 for a classroom network)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help=f"torch threads per replica (default: {cores()} cores / replicas)",
    )
    parser.add_argument(
        "--sticky",
        choices=STICKY,
        default="cookie",
        help="route a browser by a cookie nginx sets (default) or by its address",
    )
    parser.add_argument(
        "--run-dir",
        type=Path,
        default=None,
        help="keep the config, logs and pid here (default: a temporary folder)",
    )
    parser.add_argument(
        "--health-interval", type=float, default=default.health_interval, metavar="S",
        help=f"ask each replica's /_stcore/health every S seconds ({default.health_interval:g})",
    )  # fmt: skip
    parser.add_argument(
        "--health-timeout", type=float, default=default.health_timeout, metavar="S",
        help=f"... and wait S seconds for its 'ok' ({default.health_timeout:g})",
    )  # fmt: skip
    parser.add_argument(
        "--health-failures", type=int, default=default.health_failures, metavar="N",
        help=f"N failed checks in a row: the replica is hung, killed and restarted "
        f"({default.health_failures})",
    )  # fmt: skip
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the nginx configuration for example ports and exit",
    )
    args = parser.parse_args(argv)
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    if args.print_config:
        ports = [8501 + i for i in range(args.replicas)]
        run = args.run_dir or Path(tempfile.gettempdir()) / "glassbox-RUN"
        print(render_config(ports, f"{args.address}:{args.port}", run, args.sticky), end="")
        return 0
    policy = Policy(args.health_interval, args.health_timeout, max(1, args.health_failures))

    # SIGINT too: a shell starting this in the background (`... &`, no job control) hands it
    # SIGINT ignored, and Ctrl+C or `kill -INT` must still stop everything.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    cluster = Cluster(args.replicas, args.port, args.address, args.threads, args.sticky,
                      args.run_dir, policy=policy)  # fmt: skip
    try:
        cluster.start()
        for m in cluster.members:
            print(f"replica {m.index}: {m.url} (pid {m.proc.pid}, {m.threads} torch threads)")
        print(f"nginx: pid {cluster.nginx_proc.pid}, run folder {cluster.run_dir}")
        print(f"serving on {cluster.url}  (Ctrl+C stops everything)", flush=True)
        status = cluster.supervise()
        print("nothing left to serve with: stopping", file=sys.stderr, flush=True)
        return status
    except KeyboardInterrupt:
        print("stopping nginx and the replicas", flush=True)
        return 0
    except (RuntimeError, TimeoutError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl+C must not cut stop() short
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
