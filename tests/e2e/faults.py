"""Faults in the middle of a class, and what each cost the students.

Run beside the deploy test's crowd (crowd.run_crowd's `during`) against `python -m
deploy.serve --replicas 2` (tests/e2e/cluster.py): while the crowd walks the app, one fault
after another, each once the class is mid-walk (while any session is left to walk) and the
cluster is whole again after the previous one:

  kill   SIGKILL to the replica that holds the most sessions in progress
  nginx  SIGTERM to nginx (it closes every websocket; supervisord starts it again)
  hang   SIGSTOP to the replica that holds the most sessions (it accepts connections and
         never answers; deploy/listener.py finds it, kills it, and supervisord restarts it)

Besides the crowd, a few lesson tabs sit idle on the Attention page, each with its own
sentence and a chosen head (the issue's scenario). Once a lesson tab on what a fault hit has
reconnected, it types a new sentence: it must answer, on the same page, with the same
model, its head still chosen, and the URL holding the new sentence.

Per fault, for the tabs on what it hit (the crowd's sessions in progress and the lesson
tabs; all of them for nginx): recovered (it reconnected without a reload and its walk, or
its next input, ended without a failure) or lost; seconds from the fault until its
websocket was open again (median, worst); for the crowd's sessions, seconds until it was
answered next; and for a replica, seconds until it was healthy again (from RUN/events.log).
A session whose walk ended as the fault struck (its last step drawn, every check passed)
never needed the server again: it is not counted as on what the fault hit.

Every wait ends on its event (a websocket opened again, a health answer, a step drawn),
within generous limits for a loaded machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import statistics
import time
from dataclasses import dataclass, field

from deploy.listener import healthy
from tests.e2e import crowd as crowds
from tests.e2e import harness
from tests.e2e.cluster import Cluster

KINDS = ("kill", "nginx", "hang")
SIGNALS = {"kill": signal.SIGKILL, "nginx": signal.SIGTERM, "hang": signal.SIGSTOP}
SETTLE_S = 90.0  # the longest a fault is waited on (a cold replica's first pages are slow)
HEAD = "2"  # the lesson tabs' chosen head (layer 1): its option in the Head picker
HEAD_TITLE = "layer 1, head 2"


@dataclass
class Fault:
    kind: str
    at: float  # epoch seconds
    target: str  # "replica 1", "nginx"
    class_s: float  # seconds into the class
    tabs: list = field(default_factory=list)  # what it hit: crowd indices and Lesson objects
    back_s: float | None = None  # until the replica (or nginx) served again
    reconnect_s: dict = field(default_factory=dict)  # tab -> seconds (None: never)
    answered_s: dict = field(default_factory=dict)  # crowd index -> seconds to next answer
    lost: dict = field(default_factory=dict)  # tab name -> why
    lessons_ok: int = 0
    lessons_hit: int = 0
    repeated: int = 0  # actions of the sessions it hit that were done once more
    settled_s: float | None = None  # until the driver moved on
    reloaded: int = 0  # first pages loading at the fault that never booted and were reloaded
    pid: int | None = None  # the process it hit

    def row(self) -> dict:
        rec = [v for v in self.reconnect_s.values() if v is not None]
        ans = [v for v in self.answered_s.values() if v is not None]

        def r(values: list[float], how) -> float | None:
            return round(how(values), 1) if values else None

        return {
            "fault": self.kind,
            "target": self.target,
            "at_s": round(self.class_s, 1),
            "tabs": len(self.tabs),
            "recovered": len(self.tabs) - len(self.lost),
            "lost": len(self.lost),
            "reconnect_median_s": r(rec, statistics.median),
            "reconnect_worst_s": r(rec, max),
            "answer_median_s": r(ans, statistics.median),
            "answer_worst_s": r(ans, max),
            "back_s": None if self.back_s is None else round(self.back_s, 1),
            "lesson_tabs": f"{self.lessons_ok}/{self.lessons_hit}",
            "repeated": self.repeated,
            "reloaded": self.reloaded,
            "settled_s": None if self.settled_s is None else round(self.settled_s, 1),
            "lost_why": self.lost,
        }


def table(rows: list[dict]) -> str:
    head = ("| fault | hit | at (s into the class) | tabs on it | recovered | lost "
            "| reconnected, median / worst (s) | next answer, median / worst (s) "
            "| back up (s) | lesson tabs kept and answered | actions repeated "
            "| first pages reloaded |")  # fmt: skip
    lines = [head, "|---|---|" + "---:|" * 10]

    def pair(a, b) -> str:
        return "-" if a is None else f"{a} / {b}"

    for r in rows:
        lines.append(
            f"| {r['fault']} | {r['target']} | {r['at_s']} | {r['tabs']} | {r['recovered']} "
            f"| {r['lost']} | {pair(r['reconnect_median_s'], r['reconnect_worst_s'])} "
            f"| {pair(r['answer_median_s'], r['answer_worst_s'])} "
            f"| {r['back_s'] if r['back_s'] is not None else '-'} | {r['lesson_tabs']} "
            f"| {r['repeated']} | {r['reloaded']} |"
        )
    return "\n".join(lines)


class Lesson:
    """An idle tab on the Attention page with its own sentence and a chosen head."""

    def __init__(self, index: int, base: str, mlm) -> None:
        self.index, self.base, self.mlm = index, base, mlm
        self.name = f"lesson tab {index}"
        self.loads, self.typed = 0, 0
        self.page = None

    async def open(self, browser) -> Lesson:
        context = await browser.new_context(viewport=crowds.VIEWPORT)
        await context.add_init_script(harness.INIT_SCRIPT)
        await context.add_init_script(crowds.WATCH_JS)
        context.set_default_timeout(crowds.WAIT_S * 1000)
        self.page = page = await context.new_page()
        page.on("load", lambda _: setattr(self, "loads", self.loads + 1))
        sentence = self.sentence()
        await page.goto(f"{self.base}/attention?sentence={sentence.replace(' ', '+')}&model=mlm")
        await page.wait_for_function(harness.IDLE_JS, arg=1, timeout=crowds.WAIT_S * 1000)
        await self.shown(sentence)
        before = await self.runs()
        await page.get_by_role("radiogroup", name="Head").get_by_text(HEAD, exact=True).click()
        await page.wait_for_function(harness.IDLE_JS, arg=before + 1)
        await page.get_by_text(HEAD_TITLE).first.wait_for()
        return self

    def sentence(self) -> str:
        return f"The lesson {self.index} sentence number {self.typed} is here."

    async def runs(self) -> int:
        return await self.page.evaluate("() => window.__glassbox.done")

    async def shown(self, sentence: str, timeout: float = crowds.WAIT_S) -> None:
        tokens = self.mlm.encode(sentence).tokens
        await self.page.wait_for_function(crowds.SHOWS_JS, arg=tokens, timeout=timeout * 1000,
                                          polling=crowds.POLL_MS)  # fmt: skip

    async def answer(self) -> None:
        """Type a new sentence; it must be drawn with the page, model and head kept."""
        self.typed += 1
        sentence, page = self.sentence(), self.page
        box = page.get_by_test_id("stSidebar").get_by_role("textbox", name="Sentence")
        await box.fill(sentence)
        await box.press("Control+Enter")
        await self.shown(sentence, timeout=30)
        await page.get_by_text(HEAD_TITLE).first.wait_for(timeout=10_000)
        heading = (await page.locator("h1").first.inner_text()).strip()
        assert heading == crowds.TITLES["attention"], f"heading {heading!r}"
        # The URL is the tab's state: the page, the head and the sentence (the model is the
        # default, mlm, which a bound menu leaves out of the URL).
        wanted = ["/attention?", f"att_head={HEAD}", f"sentence={sentence.replace(' ', '+')}"]
        try:  # the browser writes a bound widget's value into the URL: wait for it
            await page.wait_for_function(
                "(parts) => parts.every((p) => location.href.includes(p))", arg=wanted,
                timeout=10_000,
            )
        except Exception as err:
            raise AssertionError(f"the URL {page.url} lacks one of {wanted}") from err
        assert await box.input_value() == sentence
        assert self.loads == 1, f"loaded {self.loads} times (a reload)"

    async def sockets(self) -> dict:
        return await self.page.evaluate("() => window.__glassbox_ws")

    async def reconnected(self, since: float, timeout: float = SETTLE_S) -> None:
        """Until its websocket opened again after `since` (epoch s) and it is ready."""
        await self.page.wait_for_function(
            "(t) => (window.__glassbox_ws?.opens || []).some((o) => o > t)", arg=since * 1000,
            timeout=timeout * 1000, polling=crowds.POLL_MS)  # fmt: skip
        await self.page.wait_for_function(crowds.READY_JS, timeout=timeout * 1000,
                                          polling=crowds.POLL_MS)  # fmt: skip

    async def replica(self) -> str | None:
        for cookie in await self.page.context.cookies():
            if cookie["name"] == "glassbox_replica":
                return cookie["value"]
        return None

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.page.context.close()


class Driver:
    """The faults, beside the crowd (`await Driver(...)(crowd, browser)`)."""

    def __init__(self, cluster: Cluster, mlm, kinds=KINDS, lessons: int = 2) -> None:
        self.cluster, self.mlm, self.kinds = cluster, mlm, kinds
        self.run_dir, self.base = cluster.run_dir, cluster.url
        self.n_lessons = lessons
        self.faults: list[Fault] = []
        self.lessons: list[Lesson] = []
        self.class_started = 0.0

    def info(self) -> dict:
        return self.cluster.info()

    def events(self) -> list[dict]:
        path = self.run_dir / "events.log"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    async def __call__(self, crowd: crowds.Crowd, browser) -> None:
        self.class_started = time.time()
        self.lessons = [await Lesson(i, self.base, self.mlm).open(browser)
                        for i in range(self.n_lessons)]  # fmt: skip
        try:
            for kind in self.kinds:
                await self.mid_walk(crowd, kind)
                fault = await self.inflict(kind, crowd)
                self.faults.append(fault)
                await self.settle(fault, crowd)
                await asyncio.to_thread(self.cluster.wait, self.cluster.ready, SETTLE_S,
                                        "whole again")  # fmt: skip
        finally:
            for lesson in self.lessons:
                await lesson.close()

    async def pins(self, crowd: crowds.Crowd) -> dict:
        """Each tab in progress (crowd index or Lesson) and the replica it is pinned to."""
        pins = {}
        for index, session in list(crowd.active.items()):
            if any(i == index and kind != "open" for _, i, kind in crowd.steps):
                with contextlib.suppress(Exception):
                    pins[index] = await session.replica()
        for lesson in self.lessons:
            pins[lesson] = await lesson.replica()
        return pins

    async def mid_walk(self, crowd: crowds.Crowd, kind: str, timeout: float = 120) -> None:
        """Wait until one of the crowd's sessions is past its first page (while any session
        is left: after the class, the lesson tabs alone are on what a fault hits)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if crowd.completed + len(crowd.failed) >= crowd.sessions:
                return
            pins = await self.pins(crowd)
            if any(isinstance(t, int) and r for t, r in pins.items()):
                return
            await asyncio.sleep(0.2)
        raise AssertionError(f"{kind}: the class was not mid-walk within {timeout:.0f} s")

    async def inflict(self, kind: str, crowd: crowds.Crowd) -> Fault:
        info, pins = self.info(), await self.pins(crowd)
        if kind == "nginx":
            target, pid, tabs = "nginx", info["nginx_pid"], list(pins)
        else:  # the replica of the most sessions in progress (or of a lesson tab)
            walking = [r for t, r in pins.items() if isinstance(t, int) and r]
            busiest = max(sorted(set(walking or [r for r in pins.values() if r])),
                          key=walking.count)  # "r1", "r2"  # fmt: skip
            member = info["replicas"][int(busiest[1:]) - 1]
            target, pid = f"replica {member['index']}", member["pid"]
            tabs = [t for t, r in pins.items() if r == busiest]
        at = time.time()
        os.kill(pid, SIGNALS[kind])
        fault = Fault(kind, at, target, at - self.class_started, tabs)
        fault.pid = pid
        return fault

    def back(self, fault: Fault) -> bool:
        """Whether what `fault` hit runs again (another pid) and answers "ok"."""
        info = self.info()
        if fault.kind == "nginx":
            pid, url = info.get("nginx_pid"), self.base
        else:
            member = info["replicas"][int(fault.target.split()[-1]) - 1]
            pid, url = member["pid"], f"http://127.0.0.1:{member['port']}"
        return pid not in (None, fault.pid) and healthy(url, 2)

    async def settle(self, fault: Fault, crowd: crowds.Crowd) -> None:
        """Measure the fault: each lesson tab it hit answers a new sentence once it has
        reconnected; wait until what it hit is back and every session it hit answered again
        or failed."""
        deadline = fault.at + SETTLE_S
        hit_lessons = [t for t in fault.tabs if isinstance(t, Lesson)]
        hit_sessions = [t for t in fault.tabs if isinstance(t, int)]

        async def answer(lesson: Lesson) -> None:
            try:
                await lesson.reconnected(fault.at)
                await lesson.answer()
                fault.lessons_ok += 1
            except Exception as err:
                fault.lost[lesson.name] = f"{type(err).__name__}: {str(err)[:300]}"

        async def back_up() -> None:
            while fault.back_s is None and time.time() < deadline:
                if await asyncio.to_thread(self.back, fault):
                    fault.back_s = time.time() - fault.at
                    return
                await asyncio.sleep(0.2)

        fault.lessons_hit = len(hit_lessons)
        await asyncio.gather(back_up(), *(answer(lesson) for lesson in hit_lessons))
        while time.time() < deadline:
            pending = [i for i in hit_sessions if self.answered(crowd, i, fault) is None
                       and i not in crowd.failed and i in crowd.active]  # fmt: skip
            if not pending:
                break
            await asyncio.sleep(0.2)
        # A session that ended its walk right at the fault, with nothing after it, was not
        # on what the fault hit any more.
        done = [i for i in hit_sessions if i not in crowd.active and i not in crowd.failed
                and self.answered(crowd, i, fault) is None]  # fmt: skip
        fault.tabs = [t for t in fault.tabs if t not in done]
        hit_sessions = [i for i in hit_sessions if i not in done]
        for i in hit_sessions:
            fault.answered_s[i] = self.answered(crowd, i, fault)
        fault.settled_s = time.time() - fault.at
        ended = []  # walks that ended, every step answered, with no need of the server again
        for tab in fault.tabs:
            reconnect = await self.reconnected(crowd, tab, fault)
            if reconnect is None and isinstance(tab, int) and tab not in crowd.active \
                    and tab not in crowd.failed:  # fmt: skip
                ended.append(tab)  # its last step was drawn as the fault struck
                continue
            fault.reconnect_s[tab] = reconnect
            name = tab.name if isinstance(tab, Lesson) else f"session {tab}"
            if reconnect is None:
                fault.lost[name] = f"no websocket opened again within {SETTLE_S:.0f} s"
        fault.tabs = [t for t in fault.tabs if t not in ended]
        for i in ended:
            fault.answered_s.pop(i, None)

    @staticmethod
    def answered(crowd: crowds.Crowd, index: int, fault: Fault) -> float | None:
        times = [t for t, i, _ in crowd.steps if i == index and t > fault.at]
        return min(times) - fault.at if times else None

    async def reconnected(self, crowd: crowds.Crowd, tab, fault: Fault) -> float | None:
        if isinstance(tab, Lesson):
            sockets = await tab.sockets()
        elif tab in crowd.active:
            sockets = await crowd.active[tab].sockets()
        else:
            sockets = crowd.sockets.get(tab, {"opens": []})
        opens = [t / 1000 for t in sockets["opens"] if t / 1000 > fault.at]
        return min(opens) - fault.at if opens else None

    def finish(self, crowd: crowds.Crowd) -> list[dict]:
        """The rows, once the crowd has ended (a session that failed later is lost too)."""
        rows = []
        for fault in self.faults:
            hit = {t for t in fault.tabs if isinstance(t, int)}
            fault.repeated = sum(1 for t, i, _ in crowd.repeated
                                 if i in hit and fault.at < t < fault.at + SETTLE_S)  # fmt: skip
            fault.reloaded = sum(1 for t, _ in crowd.reopened
                                 if fault.at - crowds.BOOT_S < t < fault.at + SETTLE_S)  # fmt: skip
            for i in fault.tabs:
                if isinstance(i, int) and i in crowd.failed:
                    why = next((f for f in crowd.failures if f.startswith(f"session {i}:")), "")
                    fault.lost.setdefault(f"session {i}", why[:800] or "failed")
            rows.append(fault.row())
        return rows
