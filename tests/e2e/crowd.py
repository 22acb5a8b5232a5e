"""A class of browser sessions through one URL (nginx in front of the replicas), timed.

Shared by the deploy load test (tests/e2e/test_deploy.py) and its benchmark
(bench/bench_deploy.py), so both run the same sessions and report the same table.

Each session is one browser context (its own cookies, so nginx may route it to any replica)
and walks the whole app (ui/registry.py's PAGES), timing every action from the click or key
press until its result is shown:

  open       the landing page (tokens) until its first chart is drawn
  type       its own sentence in the sidebar (Ctrl+Enter) until a chart shows its tokens
  page       each other sentence page (nav link) until a chart shows its tokens (the
             masked page: until its tabs are drawn, then, a second "page" step, its tab
             whose chart lists the tokens on an axis, harness.TOKEN_TABS)
  upload     a small .txt file (its own second sentence) in the sidebar's uploader until the
             sentence box holds it and a chart shows its tokens (causal page)
  page       the RNN translation page (nav link) until it is drawn
  translate  its own English sentence (Enter) until the charts show its words and the
             Korean translation is shown; then the cross-attention page (nav link, same
             sentence, kept in the session) and the Vision page (nav link)
  digit      its own test digit (the "Digit" menu) until the caption names it

After each step it checks that nothing of another session shows (no chart axis lists another
session's tokens or words), that the sidebar still holds its own sentence, and that the page
has no Streamlit exception box and no JavaScript error. Sessions run with bounded
concurrency (a new one starts when one ends), on Playwright's async API in one thread.

For the fault test, run_crowd() also runs a `during` coroutine beside the sessions (it may
kill a replica or nginx), and the crowd keeps what it needs to measure the sessions through
it: which sessions are in progress (their browser context, so their replica cookie), when
each step was answered, when each page's websocket closed and opened again, and whether a
page was loaded more than once (a reload).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import re
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from tests.e2e import harness
from ui.registry import PAGES

TITLES = {p.key: p.title for p in PAGES}
SENTENCE_PAGES = [p.key for p in PAGES if p.reads == "sentence"]
OWN_PAGES = [p.key for p in PAGES if p.reads == "own"]
UPLOAD_PAGE = SENTENCE_PAGES[-1]
ACTIONS = ["open", "type", "page", "upload", "translate", "digit"]
# The pages of the shared sentence's walk that read their own input, in the walk's order
WALKED_OWN = ("rnn", "cross_attention", "vision")
# One distinct word per session, so each session's token axis is its own.
WORDS = ("penguin volcano violin desert library tiger harbor castle garden rocket teacher "
         "doctor farmer painter river forest island kitchen market mountain ocean village "
         "winter summer bottle candle lantern mirror pocket ladder").split()  # fmt: skip
VIEWPORT = {"width": 1280, "height": 800}  # a laptop's window
UPLOAD_INPUT = '[data-testid="stSidebar"] [data-testid="stFileUploaderDropzoneInput"]'
POLL_MS = 25
# An action's answer, or "stalled" when nothing came from the server for `stall` ms since
# the action, its last message, or a reconnect after it: the fault cut the action off, or
# the action changed nothing (repeated after a reconnect, it asked for what the replica
# had drawn already: a text box holding the same text sends no rerun). Either way the
# result is looked for; the action is only repeated when it is not there.
IDLE_OR_STALLED_JS = f"""(a) => {{
  if (({harness.IDLE_JS})(a.minDone)) return 'idle';
  const w = window.__glassbox_ws, s = window.__glassbox || {{}};
  const opens = w ? w.opens.filter((t) => t > a.since) : [];
  const origin = performance.timeOrigin, now = origin + performance.now();
  const heard = Math.max(a.since, opens.length ? opens[opens.length - 1] : 0,
                         s.lastMsgAt ? origin + s.lastMsgAt : 0);
  const app = document.querySelector('[data-testid="stApp"]');
  const running = app?.getAttribute('data-test-script-state') === 'running';
  if (now - heard <= a.stall) return false;
  return opens.length || !running ? 'stalled' : false;  // a run in progress is waited for
}}"""
# What a failed step's page showed: its connection and script state, runs, websockets.
STATE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]'), s = window.__glassbox || {};
  const w = window.__glassbox_ws || {opens: [], closes: []}, now = Date.now();
  return {connection: app?.getAttribute('data-test-connection-state'),
          script: app?.getAttribute('data-test-script-state'), done: s.done,
          sent: s.sent, statuses: (s.statuses || []).slice(-6),
          heading: document.querySelector('h1')?.textContent,
          ws_opened_s_ago: w.opens.map((t) => Math.round((now - t) / 100) / 10),
          ws_closed_s_ago: w.closes.map((t) => Math.round((now - t) / 100) / 10),
          last_message_s_ago: Math.round(performance.now() - (s.lastMsgAt || 0)) / 1000};
}"""
HEADING_JS = """(title) => document.querySelector('h1')?.textContent.trim() === title"""
REPEAT_AFTER_S = 8  # after a reconnect, an action with no answer for this long is repeated
# An action is tried at most this often; two tries after which the page had sent the server
# something, and no answer, fail the step (a try that sent nothing never reached the app)
TRIES = 3
BOOT_S = 45  # a first page whose app frame is not there by then failed to load: reloaded
FIRST_RUN_S = 90  # ... and one not drawn by then (3x the slowest seen at a load of 32)
# Ready for a person's next action: connected and, after a reconnect, redrawn (the replica
# asks a tab that reconnects for its state: deploy/failover.py), or 10 s after it.
READY_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (app?.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  const opens = (window.__glassbox_ws || {opens: []}).opens, s = window.__glassbox;
  if (opens.length < 2) return true;
  const reopened = opens[opens.length - 1];
  return (s.lastDoneAt || 0) > reopened
    || performance.timeOrigin + performance.now() - reopened > 10000;
}"""
# Every websocket the page opens and closes, in epoch milliseconds (the clock of time.time()).
WATCH_JS = """
(() => {
  const w = (window.__glassbox_ws = { opens: [], closes: [] });
  const Native = window.WebSocket, now = () => performance.timeOrigin + performance.now();
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('open', () => w.opens.push(now()));
      this.addEventListener('close', () => w.closes.push(now()));
    }
  };
})();
"""
WAIT_S = 120  # the longest one step may take (a loaded 2-core machine, a cold replica)
Act = Callable[[], Awaitable]
# Whether some chart axis lists exactly these tokens ([MASK] may stand in for any; an axis
# of positions labels each "3 across"): harness.axes_show() in the page, on the same tick
# labels as harness.AXIS_LABELS_JS.
SHOWS_JS = f"""(tokens) => {{
  const decode = (s) => {{ const t = document.createElement('textarea'); t.innerHTML = s;
                           return t.value; }};
  return ({harness.AXIS_LABELS_JS})('').some((axis) => axis.length === tokens.length
    && axis.every((a, i) => {{
      const d = decode(a);
      return d === tokens[i] || d === `${{i}} ${{tokens[i]}}` || d === '[MASK]';
    }}));
}}"""  # how often the page is asked whether a rerun has finished


@dataclass(frozen=True)
class Visitor:
    """One session's own inputs."""

    index: int
    sentence: str  # typed into the sidebar
    upload: str  # the text of the file it uploads (becomes its sentence)
    english: str  # typed on the translation pages
    korean: str  # the toy grammar's translation of `english`
    digit: int  # picked on the Vision page

    @property
    def upload_name(self) -> str:
        return f"session-{self.index:02d}.txt"


@dataclass
class Plan:
    """The sessions and what each page must show for each text."""

    visitors: list[Visitor]
    tokens: dict[tuple[str, str], list[str]]  # (page, text) -> tokens its charts list

    def others(self, key: str, me: Visitor) -> list[list[str]]:
        """Token lists of every other session's texts on page `key`."""
        if key in OWN_PAGES:
            return [words(v.english) for v in self.visitors if v is not me]
        return [self.tokens[key, t] for v in self.visitors if v is not me
                for t in (v.sentence, v.upload)]  # fmt: skip


def words(english: str) -> list[str]:
    """What the translation pages' charts list for an English sentence."""
    return ["[BOS]", *english.split(), "[EOS]"]


def make_plan(sessions: int, tokenizers: dict, seed: int = 0) -> Plan:
    """`sessions` visitors with distinct sentences, files, English sentences and digits;
    `tokenizers` maps "mlm" and "clm" to the shipped models (for the expected tokens)."""
    from training.translation_data import pair_of, random_clause, read_lexicon

    lexicon, rng = read_lexicon(), random.Random(seed)
    pairs: dict[str, str] = {}
    while len(pairs) < sessions:
        english, korean, _ = pair_of([random_clause(lexicon, rng)])
        pairs.setdefault(english, korean)
    visitors = []
    for i, (english, korean) in enumerate(pairs.items()):
        word = WORDS[i % len(WORDS)] + ("" if i < len(WORDS) else f" number {i}")
        visitors.append(Visitor(
            i, f"The {word} was seen near the old bridge at night.",
            f"A short note about the {word} came in a file.", english, korean, i % 10,
        ))  # fmt: skip
    tokens = {
        (key, text): tokenizers[harness.page_model(key)].encode(text).tokens
        for key in SENTENCE_PAGES for v in visitors for text in (v.sentence, v.upload)
    }  # fmt: skip
    return Plan(visitors, tokens)


@dataclass
class Crowd:
    """The result of one run: every action's latency, the failures, the wall time."""

    sessions: int
    concurrency: int
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: list[str] = field(default_factory=list)
    completed: int = 0  # sessions that walked every page without a failure
    # For the fault test: the sessions in progress, each step answered (epoch time, session,
    # kind), the sessions that failed, and when each session started.
    active: dict = field(default_factory=dict)
    steps: list[tuple[float, int, str]] = field(default_factory=list)
    failed: set[int] = field(default_factory=set)
    started: dict[int, float] = field(default_factory=dict)
    first_replica: dict[int, str | None] = field(default_factory=dict)  # after its first page
    sockets: dict[int, dict] = field(default_factory=dict)  # Session.sockets() at its end
    repeated: list[tuple[float, int, str]] = field(default_factory=list)  # actions done again
    reopened: list[tuple[float, int]] = field(default_factory=list)  # first pages reloaded
    # JavaScript errors of the first pages that were reloaded (session, error): gone with the
    # page a person reloaded, reported beside the table, not a failure
    reloaded_errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def all_latencies(self) -> list[float]:
        return [s for values in self.latencies.values() for s in values]

    @property
    def actions(self) -> int:
        return len(self.all_latencies)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


# -- one session ------------------------------------------------------------------------------


class Session:
    """One browser context walking the app as one visitor."""

    def __init__(self, page, base: str, me: Visitor, plan: Plan, crowd: Crowd) -> None:
        self.page, self.base, self.me, self.plan, self.crowd = page, base, me, plan, crowd
        self.js_errors: list[str] = []
        self.loads = 0  # documents loaded: more than one is a reload
        self.reloads_allowed = 0  # a page whose scripts never loaded is reloaded, counted
        page.on("pageerror", lambda err: self.js_errors.append(str(err)))
        page.on("load", lambda _: setattr(self, "loads", self.loads + 1))

    async def sockets(self) -> dict:
        """When this page's websockets opened and closed (epoch ms lists)."""
        return await self.page.evaluate("() => window.__glassbox_ws || {opens: [], closes: []}")

    async def replica(self) -> str | None:
        """The replica nginx pins this browser to (its glassbox_replica cookie)."""
        for cookie in await self.page.context.cookies():
            if cookie["name"] == "glassbox_replica":
                return cookie["value"]
        return None

    async def runs(self) -> int:
        return await self.page.evaluate("() => (window.__glassbox ? window.__glassbox.done : 0)")

    async def sent(self) -> int:
        return await self.page.evaluate("() => (window.__glassbox ? window.__glassbox.sent : 0)")

    async def idle(self, min_runs: int, timeout: float = WAIT_S) -> None:
        await self.page.wait_for_function(
            harness.IDLE_JS, arg=min_runs, timeout=timeout * 1000, polling=POLL_MS
        )

    async def timed(self, kind: str, action: Act, until: Act, page: str | None = None) -> None:
        """Do `action` (one widget change or click), wait for the rerun it causes and for
        `until` (the result drawn); record the seconds under `kind`.

        Like a person: it acts only while the app is connected and drawn (after a fault the
        app shows it is reconnecting, then redraws), and an action that a fault cut off (the
        page reconnected after it, and then nothing came for REPEAT_AFTER_S, or not what it
        asked for) is done once more, as a student clicks again; so is a click the page
        dropped (it sent the server nothing: a click on a section button as its replica
        dies can be dropped so, the click and its repeat), up to TRIES tries. Each repeat
        is counted (crowd.repeated). An action that brought nothing for REPEAT_AFTER_S (a
        repeat that changed nothing) is answered when its result is drawn. `page`: the
        action goes to that page, whose heading must show too.
        """
        started = time.perf_counter()
        if page is not None:
            drawn, heading = until, TITLES[page]

            async def until() -> None:
                await self.page.wait_for_function(
                    HEADING_JS, arg=heading, timeout=WAIT_S * 1000, polling=POLL_MS
                )
                await drawn()

        try:
            await self._timed(kind, action, until, started)
        except Exception as err:  # say which step, and what the page's connection showed
            state = await self.page.evaluate(STATE_JS)
            raise AssertionError(f"{kind}{f' to {page}' if page else ''} at "
                                 f"{self.page.url[:200]}: {type(err).__name__}: "
                                 f"{str(err)[:300]}; the page: {state}; its JavaScript errors: "
                                 f"{[e[:300] for e in self.js_errors[:3]]}") from err

    async def _timed(self, kind: str, action: Act, until: Act, started: float) -> None:
        sent = []  # messages the page had sent to the server before each try, and after it
        reached = 0  # tries after which the page had sent the server something
        for attempt in range(TRIES):
            await self.page.wait_for_function(READY_JS, timeout=WAIT_S * 1000, polling=POLL_MS)
            before, acted = await self.runs(), time.time()
            sent.append([await self.sent()])
            await action()
            answer = await self.page.wait_for_function(
                IDLE_OR_STALLED_JS, arg={"minDone": before + 1, "since": acted * 1000,
                                         "stall": REPEAT_AFTER_S * 1000},
                timeout=WAIT_S * 1000, polling=POLL_MS,
            )  # fmt: skip
            stalled = await answer.json_value() == "stalled"
            sent[-1].append(await self.sent())
            if not stalled and not await self.reconnected_since(acted):
                await until()
                break
            with contextlib.suppress(Exception):  # is this the answer it asked for?
                await asyncio.wait_for(until(), REPEAT_AFTER_S * 2)
                break
            # not drawn: the fault cut the action off, or the page dropped it
            reached += sent[-1][1] > sent[-1][0]
            if reached == 2 or attempt == TRIES - 1:
                raise AssertionError(f"{kind}: no answer, {attempt + 1} tries (messages sent "
                                     f"before and after each: {sent})")
            self.crowd.repeated.append((time.time(), self.me.index, kind))
        self.crowd.latencies[kind].append(time.perf_counter() - started)
        self.crowd.steps.append((time.time(), self.me.index, kind))

    async def reconnected_since(self, epoch: float) -> bool:
        """Whether this page opened a websocket again after `epoch` (a fault)."""
        return any(t / 1000 > epoch for t in (await self.sockets())["opens"])

    async def axes(self) -> list[list[str]]:
        return await self.page.evaluate(harness.AXIS_LABELS_JS, "")

    async def tokens_shown(self, tokens: list[str], timeout: float = WAIT_S) -> None:
        """Wait (inside the page, no round trips) until some chart axis lists `tokens`."""
        try:
            await self.page.wait_for_function(
                SHOWS_JS, arg=tokens, timeout=timeout * 1000, polling=POLL_MS
            )
        except Exception as err:
            axes = (await self.axes())[:4]
            raise AssertionError(f"no chart shows {tokens}; axes: {axes}") from err

    async def check(self, key: str, sentence: str | None) -> None:
        """This page is `key`, shows nothing of another session, has no error; the sidebar
        holds `sentence` (on the shared sentence's pages)."""
        heading = (await self.page.locator("h1").first.inner_text()).strip()
        assert heading == TITLES[key], f"on {key}: heading {heading!r}"
        axes = await self.axes()
        leaked = [t for t in self.plan.others(key, self.me) if harness.axes_show(axes, t)]
        assert not leaked, f"on {key}: another session's tokens {leaked[0]}"
        if sentence is not None:
            # a box mounts empty for a frame, and may mount after the charts (its widget
            # code loads lazily): wait a moment for its value
            from playwright.async_api import expect

            await expect(self.sentence_box(), f"on {key}: sentence box").to_have_value(
                sentence, timeout=5000
            )
        boxes = await self.page.locator(harness.EXCEPTION).all_inner_texts()
        assert not boxes, f"on {key}: Streamlit exception {boxes[0][:300]}"
        assert not self.js_errors, f"on {key}: JavaScript error {self.js_errors[0]}"

    async def the_one(self, locator, timeout: float = 10.0):
        """`locator` once it finds exactly one element. Right after a replica's death, the
        moved tab's first runs on the new replica can show a box twice for a moment (the
        old copy, stale, until the run that replaces it ends); a person types into the
        one left. Two for `timeout` seconds is a failure."""
        deadline = time.perf_counter() + timeout
        while (n := await locator.count()) != 1 and time.perf_counter() < deadline:
            await asyncio.sleep(POLL_MS / 1000)
        if n != 1:
            raise AssertionError(f"{n} elements for {locator} after {timeout:.0f} s")
        return locator

    def sentence_box(self):
        return self.page.get_by_test_id("stSidebar").get_by_role("textbox", name="Sentence")

    def nav(self, key: str) -> Act:
        link = self.page.get_by_test_id("stSidebarNav").get_by_role(
            "link", name=TITLES[key], exact=True
        )
        return link.click

    async def first_load(self) -> None:
        """Open the app. Asked for while nginx is down (its restart fault: about a second),
        the page is refused ("connection refused"): a person tries again, counted as a
        reload (a session of the class may open in that second)."""
        deadline = time.perf_counter() + BOOT_S
        while True:
            try:
                await self.page.goto(self.base + "/", wait_until="domcontentloaded")
                return
            except PlaywrightError:
                if time.perf_counter() > deadline:
                    raise
                self.reloading()
                await asyncio.sleep(1.0)

    def reloading(self) -> None:
        """A person reloads the first page: counted, and one more document load allowed."""
        self.crowd.reopened.append((time.time(), self.me.index))
        self.reloads_allowed += 1

    async def walk(self) -> None:
        """The whole visit; raises on the first thing that is wrong."""
        me, page, plan = self.me, self.page, self.plan
        started = time.perf_counter()
        await self.first_load()
        try:  # the app's frame, then its first run: neither comes when the page's scripts
            # failed to load (nginx down), or its first run was sent to a replica that hung
            await page.wait_for_selector(harness.APP, state="attached", timeout=BOOT_S * 1000)
            await self.idle(1, timeout=FIRST_RUN_S)
        except Exception:
            self.reloading()
            # What the page that never drew threw goes with it (Streamlit's "not connected
            # to a server!", thrown by a page that never reached one); the reloaded page's
            # own errors are checked as any page's.
            self.crowd.reloaded_errors += [(me.index, e) for e in self.js_errors]
            self.js_errors.clear()
            await page.reload(wait_until="domcontentloaded")
            await self.idle(1)
        try:
            await page.wait_for_selector(harness.DRAWN_CHART)
        except Exception as err:  # say what the first page showed instead
            state = await page.evaluate(STATE_JS)
            text = await page.evaluate(
                "() => document.querySelector('[data-testid=\"stMain\"]')?.innerText.slice(0, 300)")
            raise AssertionError(f"open: no chart drawn; the page at {page.url}: {state}; "
                                 f"its main area: {text!r}; its JavaScript errors: "
                                 f"{[e[:300] for e in self.js_errors[:3]]}") from err
        self.crowd.latencies["open"].append(time.perf_counter() - started)
        self.crowd.steps.append((time.time(), me.index, "open"))
        self.crowd.first_replica[me.index] = await self.replica()

        async def typed() -> None:
            box = await self.the_one(self.sentence_box())
            await box.fill(me.sentence)
            await box.press("Control+Enter")

        first = SENTENCE_PAGES[0]
        await self.timed("type", typed, lambda: self.tokens_shown(plan.tokens[first, me.sentence]))
        await self.check(first, me.sentence)
        for key in SENTENCE_PAGES[1:]:
            shown = lambda k=key: self.tokens_shown(plan.tokens[k, me.sentence])  # noqa: E731
            if key in harness.TOKEN_TABS:  # no axis of tokens on its first tab: open the tab
                tab = harness.section(page, harness.TOKEN_TABS[key])
                await self.timed("page", self.nav(key), tab.wait_for, page=key)
                await self.timed("page", tab.click, shown)
            else:
                await self.timed("page", self.nav(key), shown, page=key)
            await self.check(key, me.sentence)

        # The upload: the file's text becomes the sentence, on the replica holding the tab.
        async def uploaded() -> None:
            await page.locator(UPLOAD_INPUT).set_input_files(files=[{
                "name": me.upload_name, "mimeType": "text/plain",
                "buffer": (me.upload + "\n").encode(),
            }])  # fmt: skip

        async def upload_shown() -> None:
            await self.tokens_shown(plan.tokens[UPLOAD_PAGE, me.upload])
            try:  # the sidebar's part is written after the page (ui.frame)
                await page.get_by_test_id("stSidebar").get_by_text(
                    f"Loaded '{me.upload_name}'"
                ).wait_for(timeout=10_000)
            except Exception as err:
                raise AssertionError("the upload is not acknowledged") from err

        await self.timed("upload", uploaded, upload_shown)
        await self.check(UPLOAD_PAGE, me.upload)

        # The translation pages read their own sentence, kept for both in the session.
        rnn, cross, vision = WALKED_OWN
        await self.timed("page", self.nav(rnn), lambda: page.wait_for_selector(
            harness.DRAWN_CHART), page=rnn)  # fmt: skip

        async def translated() -> None:
            await self.tokens_shown(words(me.english))
            code = await page.get_by_test_id("stCode").first.inner_text()
            assert me.korean in code, f"{me.english!r}: {code!r}, expected {me.korean!r}"

        async def english() -> None:
            box = await self.the_one(page.get_by_role("textbox", name="English sentence"))
            await box.fill(me.english)
            await box.press("Enter")

        await self.timed("translate", english, translated)
        await self.check(rnn, None)
        await self.timed("page", self.nav(cross), translated, page=cross)
        await self.check(cross, None)

        await self.timed("page", self.nav(vision), lambda: page.wait_for_selector(
            harness.DRAWN_CHART), page=vision)  # fmt: skip

        async def pick_digit() -> None:
            for attempt in range(2):  # a redraw (a reconnect) may close the open menu
                await page.locator(".st-key-vit_digit").click()
                option = page.get_by_role("option", name=str(me.digit), exact=True)
                try:
                    await option.click(timeout=REPEAT_AFTER_S * 1000 if attempt == 0 else None)
                    return
                except Exception:
                    if attempt:
                        raise

        async def digit_shown() -> None:
            await page.get_by_text(re.compile(rf"^test image \d+: a {me.digit}$")).wait_for()

        if me.digit == 0:  # the menu's default: no rerun to wait for
            await digit_shown()
        else:
            await self.timed("digit", pick_digit, digit_shown)
        await self.check(vision, None)


async def _one(browser, base: str, me: Visitor, plan: Plan, crowd: Crowd, shots: Path | None):
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(harness.INIT_SCRIPT)
    await context.add_init_script(WATCH_JS)
    context.set_default_timeout(WAIT_S * 1000)
    page = await context.new_page()
    session = Session(page, base, me, plan, crowd)
    crowd.active[me.index], crowd.started[me.index] = session, time.time()
    try:
        await session.walk()
        if session.loads > 1 + session.reloads_allowed:
            raise AssertionError(f"the page was loaded {session.loads} times (a reload)")
        crowd.completed += 1
    except Exception as err:  # every session's failure is reported, not only the first
        crowd.failed.add(me.index)
        crowd.failures.append(f"session {me.index}: {type(err).__name__}: {str(err)[:600]}")
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(Exception):  # a screenshot is a courtesy
                await page.screenshot(path=str(shots / f"FAILED-deploy-{me.index:02d}.png"))
    finally:
        with contextlib.suppress(Exception):
            crowd.sockets[me.index] = await session.sockets()
        crowd.active.pop(me.index, None)
        await context.close()


async def run_crowd(
    base: str,
    plan: Plan,
    chromium: str,
    concurrency: int = 6,
    timeout: float = 300.0,
    screenshots: Path | None = None,
    during: Callable[[Crowd, object], Awaitable] | None = None,
) -> Crowd:
    """Every visitor of `plan` against `base`, `concurrency` at a time, within `timeout`;
    `during(crowd, browser)` beside them, when given (its failure is the crowd's too)."""
    from playwright.async_api import async_playwright

    crowd = Crowd(len(plan.visitors), concurrency)
    gate = asyncio.Semaphore(concurrency)

    async def gated(browser, me: Visitor) -> None:
        async with gate:
            await _one(browser, base, me, plan, crowd, screenshots)

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium, headless=True, args=harness.CHROMIUM_ARGS
        )
        started = time.perf_counter()
        beside = asyncio.ensure_future(during(crowd, browser)) if during else None
        try:
            await asyncio.wait_for(
                asyncio.gather(*(gated(browser, v) for v in plan.visitors)), timeout
            )
        except TimeoutError:
            crowd.failures.append(
                f"the crowd did not finish within {timeout:.0f} s "
                f"({crowd.completed} of {crowd.sessions} sessions done)"
            )
        crowd.seconds = time.perf_counter() - started
        if beside is not None:
            try:
                await asyncio.wait_for(beside, 120)
            except Exception as err:
                crowd.failures.append(f"beside the crowd: {type(err).__name__}: {err}"[:800])
        await browser.close()
    return crowd


# -- what nginx saw ---------------------------------------------------------------------------

LOG_LINE = re.compile(
    r'"(?P<method>\S+) (?P<uri>\S+)" (?P<status>\d+) key=(?P<key>\S+) upstream=(?P<up>.*?) time='
)


def routing(access_log: Path) -> dict:
    """Per browser key (the glassbox_replica cookie), the replicas its requests reached:
    sessions per replica (a key that opened a websocket), keys that reached two replicas,
    uploads (PUT /_stcore/upload_file) and those that reached another replica than their
    tab's websocket, or failed."""
    ups: dict[str, set[str]] = defaultdict(set)
    stream: dict[str, set[str]] = defaultdict(set)
    uploads = []
    for line in access_log.read_text(errors="replace").splitlines():
        m = LOG_LINE.search(line)
        if not m:
            continue
        reached = {u.strip() for u in re.split(r",| : ", m["up"])} - {"", "-"}
        ups[m["key"]] |= reached
        if m["uri"] == "/_stcore/stream":
            stream[m["key"]] |= reached
        elif m["uri"].startswith("/_stcore/upload_file") and m["method"] == "PUT":
            uploads.append((m["key"], reached, int(m["status"])))
    per_replica: dict[str, int] = defaultdict(int)
    for key in stream:
        for up in stream[key]:
            per_replica[up] += 1
    return {
        "sessions_per_replica": dict(sorted(per_replica.items())),
        "split_keys": sorted(k for k, v in ups.items() if len(v) > 1),
        "uploads": len(uploads),
        "uploads_elsewhere": [k for k, up, _ in uploads if up != stream.get(k)],
        "uploads_failed": [k for k, _, status in uploads if status >= 400],
    }


# -- the table --------------------------------------------------------------------------------


def row(replicas: int, threads: int, crowd: Crowd, route: dict | None = None) -> dict:
    """One line of the table: throughput and latency percentiles of every action."""
    values = crowd.all_latencies
    spread = "/".join(str(n) for n in (route or {}).get("sessions_per_replica", {}).values())
    return {
        "replicas": replicas,
        "threads": threads,
        "sessions": crowd.sessions,
        "concurrency": crowd.concurrency,
        "completed": crowd.completed,
        "actions": len(values),
        "seconds": round(crowd.seconds, 1),
        "actions_per_s": round(len(values) / crowd.seconds, 2) if crowd.seconds else 0.0,
        "sessions_per_min": round(60 * crowd.completed / crowd.seconds, 1) if crowd.seconds else 0,
        "p50_ms": round(1000 * percentile(values, 50)),
        "p90_ms": round(1000 * percentile(values, 90)),
        "p99_ms": round(1000 * percentile(values, 99)),
        "max_ms": round(1000 * max(values)) if values else 0,
        "p50_ms_by_action": {
            k: round(1000 * percentile(v, 50)) for k, v in crowd.latencies.items()
        },
        "sessions_per_replica": spread,
        "failures": len(crowd.failures),
    }


def table(rows: list[dict]) -> str:
    """A markdown table of `row()`s."""
    head = ("| replicas | torch threads each | sessions (at once) | actions | wall (s) "
            "| actions/s | sessions/min | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) "
            "| sessions per replica | failures |")  # fmt: skip
    lines = [head, "|" + "---:|" * 12 + "---:|"]
    for r in rows:
        lines.append(
            f"| {r['replicas']} | {r['threads']} | {r['sessions']} ({r['concurrency']}) "
            f"| {r['actions']} | {r['seconds']} | {r['actions_per_s']} | {r['sessions_per_min']} "
            f"| {r['p50_ms']} | {r['p90_ms']} | {r['p99_ms']} | {r['max_ms']} "
            f"| {r['sessions_per_replica'] or '-'} | {r['failures']} |"
        )
    return "\n".join(lines)
