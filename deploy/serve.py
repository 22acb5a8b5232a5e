"""N Streamlit replicas of the app behind nginx on this machine, run by supervisord.

    python -m deploy.serve [--replicas 2] [--port 8080] [--address 127.0.0.1] [--threads T]
                           [--run-dir DIR] [--print-config]

Renders deploy/supervisord.conf.in (with a deploy/replica.conf.in per replica) and
deploy/nginx.conf.in into the run folder (default /tmp/glassbox-PORT), then runs
`supervisord -n` on it as this command's child until Ctrl+C or SIGTERM, when supervisord
stops nginx, then every replica. Every replica (`python -m deploy.replica app.py` on a free
loopback port) gets this command's environment (GLASSBOX_DATABASE_URL, ...), its share of
the cores as OMP_NUM_THREADS, and one shared cookie secret. deploy/listener.py kills a hung
replica and keeps RUN/cluster.json current. Logs, pids and supervisorctl's socket: in RUN.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COOKIE = "glassbox_replica"  # names the replica a browser is pinned to: r1, r2, ...
FAIL_TIMEOUT_S = 5  # nginx skips a replica it could not reach for this long
SERVER = f"server 127.0.0.1:{{}} max_fails=1 fail_timeout={FAIL_TIMEOUT_S}s{{}};"  # passive check


def find_nginx() -> str | None:
    """$GLASSBOX_NGINX when set (and only it), else `nginx` on PATH or /usr/sbin/nginx."""
    forced = os.environ.get("GLASSBOX_NGINX")
    for path in [forced] if forced else [shutil.which("nginx"), "/usr/sbin/nginx"]:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def threads_per_replica(replicas: int) -> int:
    """Each replica's share of the cores this process may run on (at least one)."""
    return max(1, len(os.sched_getaffinity(0)) // max(1, replicas))


def upstreams(ports: list[int]) -> str:
    """nginx's upstreams: a balanced pool for new browsers and, per replica r<i>, its own
    (the others its backups), picked by the cookie; the maps re-pin a browser that failed
    over to the replica that answered (deploy/nginx.conf.in says why)."""
    names = [f"r{i + 1}" for i in range(len(ports))]
    set_cookie = f"{COOKIE}={{}}; Path=/; HttpOnly; SameSite=Lax"
    maps = {
        "$upstream_addr $glassbox_served": [
            f'"~(^|, )127\\.0\\.0\\.1:{p}$" {n}' for n, p in zip(names, ports, strict=True)],
        f'"$cookie_{COOKIE}/$glassbox_served" $glassbox_set_replica': [
            *(f'"{n}/{n}" ""' for n in names),
            *(f'"~/{n}$" "{set_cookie.format(n)}"' for n in names)],
        f"$cookie_{COOKIE} $glassbox_pool": [f"{n} glassbox_{n}" for n in names],
    }  # fmt: skip
    lines = []
    for head, entries in maps.items():
        default = "glassbox" if head.endswith("pool") else '""'
        lines += [f"    map {head} {{", f"        default {default};",
                  *(f"        {e};" for e in entries), "    }"]  # fmt: skip
    pools = {"glassbox": ["least_conn;", *(SERVER.format(p, "") for p in ports)]}
    for i, name in enumerate(names):  # each replica's backups start after it
        others = ports[i + 1 :] + ports[:i]
        pools[f"glassbox_{name}"] = [SERVER.format(ports[i], ""),
                                     *(SERVER.format(p, " backup") for p in others)]  # fmt: skip
    for name, body in pools.items():
        lines += [f"    upstream {name} {{", *(f"        {b}" for b in body), "    }"]
    return "\n".join(lines)


def render(template: str, values: dict[str, str]) -> str:
    text = (HERE / template).read_text()
    for name, value in values.items():
        text = text.replace(f"@{name}@", value)
    return text


def write_configs(run: Path, ports: list[int], listen: str, nginx: str) -> None:
    """RUN/nginx.conf and RUN/supervisord.conf for replicas on `ports`."""
    import streamlit

    static = Path(streamlit.__file__).parent / "static"
    common = {"RUN": str(run), "ROOT": str(ROOT), "PYTHON": sys.executable}
    (run / "nginx.conf").write_text(render("nginx.conf.in", {
        **common, "UPSTREAMS": upstreams(ports), "LISTEN": listen, "POOL": "$glassbox_pool",
        "SET_REPLICA": "        add_header Set-Cookie $glassbox_set_replica always;",
        "STREAMLIT_STATIC": str(static), "APP_STATIC": str(ROOT / "static")}))  # fmt: skip
    replicas = "".join(render("replica.conf.in", {**common, "I": str(i + 1), "PORT": str(p),
                                                  "N": str(len(ports))})
                       for i, p in enumerate(ports))  # fmt: skip
    names = ",".join([*(f"replica-{i + 1}" for i in range(len(ports))), "nginx"])
    (run / "supervisord.conf").write_text(render("supervisord.conf.in", {
        **common, "REPLICAS": replicas, "PROGRAMS": names, "NGINX": nginx, "LISTEN": listen,
        "PORTS": ",".join(map(str, ports)), "URL": f"http://{listen}"}))  # fmt: skip
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):  # nginx's temp folders
        (run / "tmp" / sub).mkdir(parents=True, exist_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.serve", description=__doc__)
    parser.add_argument("--replicas", type=int, default=2, help="Streamlit processes (2)")
    parser.add_argument("--port", type=int, default=8080, help="nginx's port (8080)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="nginx's address (127.0.0.1; 0.0.0.0 for a classroom network)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per replica (default: cores / replicas)")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="configs, logs, socket (default: /tmp/glassbox-PORT)")
    parser.add_argument("--print-config", action="store_true",
                        help="print both configurations for example ports, and exit")
    args = parser.parse_args(argv)  # fmt: skip
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    if (nginx := find_nginx()) is None:
        sys.exit("error: no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
    run = (args.run_dir or Path(tempfile.gettempdir()) / f"glassbox-{args.port}").resolve()
    run.mkdir(parents=True, exist_ok=True)
    run.chmod(0o755)  # nginx's workers (nobody, when started as root) enter it
    ports = [8501 + i for i in range(args.replicas)] if args.print_config else [
        free_port() for _ in range(args.replicas)]  # fmt: skip
    write_configs(run, ports, f"{args.address}:{args.port}", nginx)
    if args.print_config:
        print((run / "supervisord.conf").read_text() + "\n" + (run / "nginx.conf").read_text())
        return 0
    threads = str(args.threads or threads_per_replica(args.replicas))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": threads,
           "MKL_NUM_THREADS": threads,  # one secret: a tab that moves keeps its XSRF cookie
           "STREAMLIT_SERVER_COOKIE_SECRET": os.environ.get(
               "STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))}  # fmt: skip
    supervisord = subprocess.Popen(  # its own session: Ctrl+C reaches this command only
        [sys.executable, "-m", "supervisor.supervisord", "-c", str(run / "supervisord.conf")],
        cwd=ROOT, env=env, start_new_session=True)  # fmt: skip

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # nginx, then every replica
        signal.signal(sig, lambda *_: supervisord.send_signal(signal.SIGTERM))
    print(f"serving on http://{args.address}:{args.port} (Ctrl+C stops everything); look: "
          f"{Path(sys.executable).parent}/supervisorctl -c {run}/supervisord.conf status",
          flush=True)  # fmt: skip
    return supervisord.wait()


if __name__ == "__main__":
    sys.exit(main())
