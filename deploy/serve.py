"""N Streamlit replicas of the app behind nginx, on this machine, until Ctrl+C or SIGTERM.

    python -m deploy.serve [--replicas 2] [--port 8080] [--threads T] [--sticky cookie|ip]
                           [--run-dir DIR] [--print-config]

1. Starts N `streamlit run app.py` replicas on free loopback ports (127.0.0.1), each with
   OMP_NUM_THREADS = its share of the CPU cores (torch reads it when it starts; the app
   keeps that count, and sets one thread only when the variable is unset) and one shared
   cookie secret.
2. Waits until every replica answers /_stcore/health with "ok" (the active health check;
   nginx itself only checks passively, see deploy/nginx.conf.in).
3. Renders deploy/nginx.conf.in into a run folder (a new temporary one unless --run-dir) and
   starts the system `nginx` on it in the foreground: no root needed, listening on
   --address:--port, its pid, logs and temp folders in the run folder. (Started as root,
   nginx's workers run as `nobody`, as usual.)
4. Prints the URL, then watches: a replica that dies is reported (nginx routes its browsers
   to the others); when nginx or every replica is gone, it stops.
5. Ctrl+C, SIGTERM or SIGHUP stop nginx, then every replica (SIGTERM, SIGKILL after 10 s),
   and remove a temporary run folder. Each child runs in its own session, so a Ctrl+C in
   the terminal reaches this script only, which stops them in that order.

The run folder holds nginx.conf, error.log, access.log (one line per request, with the
replica it went to), replica-<i>.log and cluster.json (the ports and process ids).
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
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.in"
STICKY = {"cookie": "hash $glassbox_key consistent;", "ip": "ip_hash;"}
MAX_FAILS, FAIL_TIMEOUT_S = 2, 10  # nginx's passive health check, per replica


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


def render_config(
    ports: list[int], listen: str, run_dir: Path | str, sticky: str = "cookie"
) -> str:
    """deploy/nginx.conf.in for these replica ports, listening on `listen` (address:port)."""
    servers = "\n".join(
        f"        server 127.0.0.1:{p} max_fails={MAX_FAILS} fail_timeout={FAIL_TIMEOUT_S}s;"
        for p in ports
    )
    text = TEMPLATE.read_text()
    for name, value in {
        "@RUN@": str(Path(run_dir).resolve()),
        "@STICKY@": STICKY[sticky],
        "@SERVERS@": servers,
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


@dataclass
class Replica:
    """One `streamlit run` process on a loopback port."""

    index: int
    port: int
    threads: int
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _stop(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=wait)


@dataclass
class Cluster:
    """N replicas and nginx in front of them; `with Cluster(...) as c:` starts and stops."""

    replicas: int = 2
    port: int = 8080
    address: str = "127.0.0.1"
    threads: int | None = None  # torch threads per replica; None: threads_per_replica
    sticky: str = "cookie"
    run_dir: Path | None = None  # None: a temporary folder, removed at stop()
    app: str = "app.py"
    nginx: str | None = None  # the nginx binary; None: find_nginx()
    members: list[Replica] = field(default_factory=list)
    nginx_proc: subprocess.Popen | None = None
    _temporary: bool = False
    _logs: list = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def start(self, timeout: float = 120.0) -> Cluster:
        """Start the replicas, wait until each is healthy, then start nginx and wait for it."""
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
        env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "OMP_NUM_THREADS": str(threads),
            "MKL_NUM_THREADS": str(threads),
            # One secret for all replicas: a tab that fails over keeps a valid XSRF cookie.
            "STREAMLIT_SERVER_COOKIE_SECRET": os.environ.get(
                "STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32)
            ),
        }
        for i in range(self.replicas):
            member = Replica(i + 1, free_port(), threads, self.run_dir / f"replica-{i + 1}.log")
            log = member.log.open("w")
            self._logs.append(log)
            member.proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", self.app,
                 "--server.address", "127.0.0.1", "--server.port", str(member.port),
                 "--server.headless", "true", "--server.fileWatcherType", "none",
                 "--browser.gatherUsageStats", "false"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            self.members.append(member)
        deadline = time.monotonic() + timeout
        for member in self.members:
            while not healthy(member.url):
                if member.proc.poll() is not None:
                    raise RuntimeError(f"replica {member.index} exited:\n{tail(member.log)}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"replica {member.index} not healthy:\n{tail(member.log)}")
                time.sleep(0.1)
        self._start_nginx(deadline)
        return self

    def _start_nginx(self, deadline: float) -> None:
        assert self.run_dir is not None and self.nginx is not None
        conf = self.run_dir / "nginx.conf"
        ports = [m.port for m in self.members]
        conf.write_text(render_config(ports, f"{self.address}:{self.port}", self.run_dir,
                                      self.sticky))  # fmt: skip
        (self.run_dir / "tmp").mkdir(exist_ok=True)
        cmd = [self.nginx, "-p", f"{self.run_dir}/", "-c", str(conf),
               "-e", str(self.run_dir / "error.log")]  # fmt: skip
        check = subprocess.run([*cmd, "-t", "-q"], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx rejects {conf}:\n{check.stderr}")
        self.nginx_proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.write_info()
        while not healthy(self.url):
            if self.nginx_proc.poll() is not None:
                raise RuntimeError(f"nginx exited:\n{tail(self.run_dir / 'error.log')}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"nginx not healthy:\n{tail(self.run_dir / 'error.log')}")
            time.sleep(0.05)

    def info(self) -> dict:
        """What runs where: nginx's URL and pid, each replica's port, pid and threads."""
        return {
            "url": self.url,
            "run_dir": str(self.run_dir),
            "sticky": self.sticky,
            "nginx_pid": self.nginx_proc.pid if self.nginx_proc else None,
            "replicas": [
                {
                    "index": m.index,
                    "port": m.port,
                    "pid": m.proc.pid if m.proc else None,
                    "threads": m.threads,
                }
                for m in self.members
            ],
        }

    def write_info(self) -> None:
        assert self.run_dir is not None
        (self.run_dir / "cluster.json").write_text(json.dumps(self.info(), indent=1) + "\n")

    def dead(self) -> list[str]:
        """The processes that have exited: "nginx", "replica 2", ..."""
        gone = [f"replica {m.index}" for m in self.members if m.proc and m.proc.poll() is not None]
        if self.nginx_proc is not None and self.nginx_proc.poll() is not None:
            gone.insert(0, "nginx")
        return gone

    def stop(self) -> None:
        """nginx first (fast shutdown), then every replica; then the temporary run folder."""
        _stop(self.nginx_proc)
        for member in self.members:
            with contextlib.suppress(ProcessLookupError):
                if member.proc and member.proc.poll() is None:
                    member.proc.send_signal(signal.SIGTERM)
        for member in self.members:
            _stop(member.proc)
        for log in self._logs:
            log.close()
        self._logs.clear()
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
    parser = argparse.ArgumentParser(
        prog="python -m deploy.serve",
        description="Serve the app as N Streamlit replicas behind nginx on this machine "
        "(until Ctrl+C or SIGTERM).",
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
        choices=sorted(STICKY),
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

    # SIGINT too: a shell starting this in the background (`... &`, no job control) hands it
    # SIGINT ignored, and Ctrl+C or `kill -INT` must still stop everything.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    cluster = Cluster(args.replicas, args.port, args.address, args.threads, args.sticky,
                      args.run_dir)  # fmt: skip
    try:
        cluster.start()
        for m in cluster.members:
            print(f"replica {m.index}: {m.url} (pid {m.proc.pid}, {m.threads} torch threads)")
        print(f"nginx: pid {cluster.nginx_proc.pid}, run folder {cluster.run_dir}")
        print(f"serving on {cluster.url}  (Ctrl+C stops everything)", flush=True)
        reported: set[str] = set()
        while True:
            gone = cluster.dead()
            for name in sorted(set(gone) - reported):
                print(f"{name} exited; see {cluster.run_dir}", file=sys.stderr, flush=True)
            reported |= set(gone)
            if "nginx" in gone or len(gone) >= len(cluster.members):
                return 1
            time.sleep(0.5)
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
