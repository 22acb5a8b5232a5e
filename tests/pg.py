"""A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` and `pg_ctl` (Debian's
postgresql package) in a temporary folder, on a free port of 127.0.0.1, trust auth, as an
unprivileged user (PostgreSQL refuses root: as root the commands run as `postgres`).

    with cluster() as url:   # postgresql+psycopg://glassbox@127.0.0.1:PORT/postgres
        ...

`missing()` says why there is none here (no binaries, no unprivileged user), or "".
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BIN_DIRS = [Path(p) for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)]
USER = "postgres"  # the unprivileged user a root process runs the cluster as
ROLE = "glassbox"  # the database's superuser name


def binary(name: str) -> str | None:
    """`initdb`, `pg_ctl`: on PATH, else in Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name)
    if found:
        return found
    return next((str(d / name) for d in BIN_DIRS if (d / name).is_file()), None)


def missing() -> str:
    """Why no cluster can start here, or "" when one can."""
    if not (binary("initdb") and binary("pg_ctl")):
        return "no initdb and pg_ctl here (Debian: apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(USER)
        except KeyError:
            return f"running as root and there is no user {USER!r} to run PostgreSQL as"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args: list[str], folder: Path) -> None:
    """Run a PostgreSQL command as the unprivileged user when this process is root."""
    if os.geteuid() == 0:
        args = ["runuser", "-u", USER, "--", *args]
    done = subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): "
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")  # fmt: skip


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster, yield its SQLAlchemy URL, stop it and delete its folder."""
    why = missing()
    if why:
        raise RuntimeError(why)
    folder = Path(tempfile.mkdtemp(prefix="glassbox-pg-"))
    if os.geteuid() == 0:
        entry = pwd.getpwnam(USER)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    data, port = folder / "data", free_port()
    try:
        _run([binary("initdb"), "-D", str(data), "-U", ROLE, "--auth=trust", "-E", "UTF8",
              "--no-sync", "--locale=C"], folder)  # fmt: skip
        options = f"-p {port} -k {folder} -h 127.0.0.1 -c fsync=off -c max_connections=200"
        _run([binary("pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"),
              "-w", "-t", "60", "start"], folder)  # fmt: skip
        try:
            yield f"postgresql+psycopg://{ROLE}@127.0.0.1:{port}/postgres"
        finally:
            _run([binary("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
