"""The benchmark's exact CPU reading (ui/cpu_probe.py): a server started with
GLASSBOX_CPU_PROBE answers with its CPU time, which grows as it works; without it, none."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ui import cpu_probe

CHILD = """
import sys, time
from ui import cpu_probe
cpu_probe.start()
print("ready", flush=True)
while sys.stdin.readline().strip() == "work":
    sum(i * i for i in range(300_000))
    print("done", flush=True)
"""


def _child(probe: bool) -> subprocess.Popen:
    env = {**os.environ, "GLASSBOX_CPU_PROBE": "1" if probe else ""}
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    assert child.stdout.readline().strip() == "ready"
    return child


def test_a_probed_process_tells_its_cpu_time_and_it_grows_with_work() -> None:
    child = _child(probe=True)
    try:
        before = cpu_probe.read_ns(child.pid)
        assert before is not None and before > 0
        child.stdin.write("work\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "done"
        after = cpu_probe.read_ns(child.pid)
        assert after - before > 5_000_000, "300k squares take more than 5 ms of CPU"
        time.sleep(0.2)
        idle = cpu_probe.read_ns(child.pid) - after
        assert idle < 5_000_000, "waiting for a question costs nothing"
    finally:
        child.stdin.close()
        child.wait(timeout=10)
    assert not cpu_probe.ask_path(child.pid).exists(), "its FIFOs go with it"


def test_without_the_setting_nothing_answers() -> None:
    child = _child(probe=False)
    try:
        assert cpu_probe.read_ns(child.pid) is None
    finally:
        child.stdin.close()
        child.wait(timeout=10)
