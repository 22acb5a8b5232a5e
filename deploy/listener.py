"""supervisord's event listener for the replicas (deploy/supervisord.conf.in runs it).

    python -m deploy.listener --run-dir RUN --ports 8501,8502 --url http://127.0.0.1:8080

- On TICK_5 (every 5 s) it asks each running replica's /_stcore/health, and asks once more
  at once when one does not answer "ok" within TIMEOUT_S. A replica that failed both and had
  answered before (or has run a minute) is hung: it is killed (SIGKILL, through supervisord's
  XML-RPC), and supervisord starts it again as it does any replica that exits.
- On every PROCESS_STATE event it writes RUN/cluster.json again: nginx's URL and pid, and
  each replica's index, port, pid and state, so the file is current after every restart.
  nginx's pid is the one deploy/front.py announced last (a PROCESS_COMMUNICATION event,
  "nginx PID", on each start, when it writes the file too), or, for a listener started
  since, the one in nginx's own RUN/nginx.pid.
- When a program exits, what it left behind goes with it: its process group is killed
  (supervisord starts every program as its own group's leader). nginx runs in a group of
  its own under deploy/front.py, which kills what nginx's master leaves (its workers,
  holding the port and the tabs' websockets) itself.
- Each hang and change of state is a JSON line in RUN/events.log.

supervisord speaks to it on stdin and stdout (supervisor.childutils); what it says for
people goes to stderr (RUN/listener.log).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TIMEOUT_S = 3.0  # an "ok" must come within this
GRACE_S = 60.0  # a replica that never answered yet counts as starting for this long
GROUP = "glassbox"


def healthy(url: str, timeout: float = TIMEOUT_S) -> bool:
    """Whether `url`/_stcore/health answers "ok" within `timeout` seconds."""
    with (
        contextlib.suppress(OSError),
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r,
    ):
        return r.status == 200 and r.read().strip() == b"ok"
    return False


class Listener:
    """What the listener knows: the replicas' ports, and which pids have answered."""

    def __init__(self, rpc, run_dir: Path, ports: list[int], url: str) -> None:
        self.rpc, self.run_dir, self.ports, self.url = rpc, run_dir, ports, url
        self.answered: set[int] = set()  # pids that said "ok" once
        self.killed: set[int] = set()  # pids killed for hanging (a late tick skips them)
        self.pool = ThreadPoolExecutor(max(1, len(ports)))
        self.nginx_pid: int | None = None  # nginx's master, as deploy/front.py announced it

    def log(self, what: str, **detail) -> None:
        event = {"t": time.time(), "what": what, **detail}
        with (self.run_dir / "events.log").open("a") as f:
            f.write(json.dumps(event) + "\n")
        print(json.dumps(event), file=sys.stderr, flush=True)

    def processes(self) -> dict[str, dict]:
        return {p["name"]: p for p in self.rpc.supervisor.getAllProcessInfo()}

    def write_cluster(self) -> None:
        procs = self.processes()
        replicas = []
        for i, port in enumerate(self.ports, start=1):
            p = procs.get(f"replica-{i}", {})
            replicas.append({"index": i, "port": port, "pid": p.get("pid") or None,
                             "state": p.get("statename", "UNKNOWN")})  # fmt: skip
        info = {"url": self.url, "run_dir": str(self.run_dir),
                "nginx_pid": self.nginx_pid or self.pid_file("nginx.pid"),
                "replicas": replicas}  # fmt: skip
        path = self.run_dir / "cluster.json"
        path.with_suffix(".tmp").write_text(json.dumps(info, indent=1) + "\n")
        path.with_suffix(".tmp").replace(path)  # readers never see half a file

    def pid_file(self, name: str) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.run_dir / name).read_text())
        return None

    def check(self, index: int, proc: dict) -> None:
        """Kill replica `index` when it is hung (see the module's docstring)."""
        url, pid = f"http://127.0.0.1:{self.ports[index - 1]}", proc["pid"]
        if pid in self.killed:
            return
        if healthy(url) or healthy(url):
            self.answered.add(pid)
            return
        if pid in self.answered or proc["now"] - proc["start"] > GRACE_S:
            self.log("hung", replica=index, pid=pid)
            self.killed.add(pid)
            self.rpc.supervisor.signalProcess(f"{GROUP}:replica-{index}", "KILL")

    def tick(self) -> None:
        procs = self.processes()
        running = [(i, procs[f"replica-{i}"]) for i in range(1, len(self.ports) + 1)
                   if procs.get(f"replica-{i}", {}).get("statename") == "RUNNING"]  # fmt: skip
        list(self.pool.map(lambda item: self.check(*item), running))


def main(argv: list[str] | None = None) -> None:
    from supervisor import childutils

    parser = argparse.ArgumentParser(prog="python -m deploy.listener")
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--ports", required=True, help="the replicas' ports, comma-separated")
    parser.add_argument("--url", required=True, help="nginx's URL, for cluster.json")
    args = parser.parse_args(argv)
    ports = [int(p) for p in args.ports.split(",")]
    listener = Listener(childutils.getRPCInterface(os.environ), args.run_dir, ports, args.url)
    while True:
        headers, payload = childutils.listener.wait(sys.stdin, sys.stdout)
        try:
            if headers["eventname"].startswith("TICK"):
                listener.tick()
            elif headers["eventname"].startswith("PROCESS_COMMUNICATION"):
                fields, data = childutils.eventdata(payload + "\n")
                what, _, pid = data.strip().partition(" ")
                if fields["processname"] == "nginx" and what == "nginx" and pid.isdigit():
                    listener.nginx_pid = int(pid)
                    listener.log("nginx started", name="nginx", pid=listener.nginx_pid)
                    listener.write_cluster()
            else:
                fields, _ = childutils.eventdata(payload + "\n")
                state = headers["eventname"].removeprefix("PROCESS_STATE_").lower()
                listener.log(state, name=fields["processname"], pid=fields.get("pid"))
                if fields["processname"] == "nginx" and state in ("exited", "stopped", "fatal"):
                    listener.nginx_pid = None
                if state == "exited" and fields.get("pid"):  # its orphans (nginx's workers)
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(int(fields["pid"]), signal.SIGKILL)
                listener.write_cluster()
        except Exception as err:  # a failed check must not stop the listening
            print(f"listener: {type(err).__name__}: {err}", file=sys.stderr, flush=True)
        childutils.listener.ok(sys.stdout)


if __name__ == "__main__":
    main()
