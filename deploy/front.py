"""nginx on a port that stays open while nginx restarts (supervisord runs it as "nginx").

    python -m deploy.front --listen 127.0.0.1:8080 -- /usr/sbin/nginx -p RUN -c RUN/nginx.conf

It opens the port once and runs nginx on it: nginx takes a listening socket it is handed in
its NGINX environment variable (as under systemd's socket activation) instead of opening
its own. When nginx dies, the socket stays open and nginx is started again at once on it: a
browser's request in that moment (a page, one of the scripts Streamlit's frontend loads
as a page first needs a widget, a tab reconnecting) waits in the socket's queue and is
answered by the next nginx, instead of being refused. A script refused that way stays
failed in the tab (Streamlit's frontend does not retry a failed dynamic import): its widget,
or every chart, shows an error until the page is reloaded.

- nginx runs in a process group of its own, so what its master leaves behind when it is
  killed (its workers, which would keep answering on the socket) is killed with it; it is
  told to stop (SIGTERM) if this process dies first.
- Each nginx started is announced to supervisord (a PROCESS_COMMUNICATION event, "nginx
  PID"): deploy/listener.py then logs it and writes its pid into RUN/cluster.json.
- SIGTERM, SIGINT or SIGQUIT (supervisord stopping it) goes to nginx, and this process
  exits once nginx has; SIGHUP (reload the configuration) goes to nginx.
- nginx that exits within FAST_S of its start, RETRIES times in a row, is given up: this
  process exits with its status, and supervisord's own retries take over.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time

FAST_S = 1.0  # nginx that exits this soon after its start failed to start
RETRIES = 5
PR_SET_PDEATHSIG = 1  # prctl(2): a signal for the child when its parent dies


def open_port(listen: str) -> socket.socket:
    """A listening TCP socket on `listen` ("host:port")."""
    host, _, port = listen.rpartition(":")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), int(port)))
    sock.listen(511)  # nginx's own backlog on Linux
    sock.set_inheritable(True)
    return sock


def _die_with_parent() -> None:
    """In nginx's process, before it runs: SIGTERM to it when this process dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def announce(pid: int) -> None:
    """Tell supervisord (and so deploy/listener.py) that nginx runs as `pid`."""
    from supervisor.events import ProcessCommunicationEvent as Event

    # supervisor.childutils.pcomm writes these bytes to a text stream, which Python 3 refuses
    sys.stdout.buffer.write(Event.BEGIN_TOKEN + f"nginx {pid}".encode() + Event.END_TOKEN)
    sys.stdout.buffer.flush()


def run(sock: socket.socket, command: list[str]) -> int:
    """Run `command` (nginx) on `sock` until told to stop; its exit status."""
    env = {**os.environ, "NGINX": f"{sock.fileno()};"}
    stopping, nginx = [], None

    def forward(sig, _frame) -> None:
        if sig != signal.SIGHUP:
            stopping.append(sig)
        if nginx is not None and nginx.poll() is None:
            nginx.send_signal(sig)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, forward)
    fast = 0
    while not stopping:
        started = time.monotonic()
        nginx = subprocess.Popen(command, env=env, pass_fds=(sock.fileno(),),
                                 process_group=0, preexec_fn=_die_with_parent)  # fmt: skip
        announce(nginx.pid)
        status = nginx.wait()
        with_group(nginx.pid, signal.SIGKILL)  # its workers, when its master was killed
        if stopping:
            return 0 if status in (0, -signal.SIGTERM, -signal.SIGINT, -signal.SIGQUIT) else status
        fast = fast + 1 if time.monotonic() - started < FAST_S else 0
        print(f"nginx (pid {nginx.pid}) exited with {status}; starting it again", file=sys.stderr,
              flush=True)  # fmt: skip
        if fast >= RETRIES:
            return status or 1
        time.sleep(0.05 * fast)
    return 0


def with_group(pgid: int, sig: int) -> None:
    """Send `sig` to process group `pgid`, if anything is left in it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.front",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--listen", required=True, help="nginx's address, host:port")
    parser.add_argument("command", nargs="+", help="nginx and its arguments (after --)")
    args = parser.parse_args(argv)  # fmt: skip
    return run(open_port(args.listen), args.command)


if __name__ == "__main__":
    sys.exit(main())
