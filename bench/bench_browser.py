"""Browser timings of the app against the floor Streamlit itself sets.

    python bench/bench_browser.py [--start-runs 5] [--runs 10] [--page attention]
                                  [--start-page tokens] [--pages all] [--page-runs 4]
                                  [--sessions 30] [--whole-runs 12] [--whole-pages ...]
    python bench/bench_browser.py --whole-page-only [--whole-runs 12]   # only the whole page

Serves the real app (app.py) and a trivial one-widget page (bench/trivial_app.py) the same
way (`streamlit run`, headless, no file watcher, a free local port), drives both with
headless system Chromium, and prints a markdown table of medians, their ratio and the goal
ratio of issue 14 (the trivial page with Streamlit's default settings, as the issue measured
it; the last column: with the app's own .streamlit/config.toml, which skips Streamlit's full
garbage collection after each run):

  start     process start -> first Plotly chart drawn at the app's address (the default
            sentence on the first page; trivial: -> its text drawn); a fresh server and a
            fresh browser context each run, so the model load and the page's JavaScript
            download are included. Also from a shared link (a 20-token sentence in the URL
            of --start-page), which needs a forward pass before its first chart. "Drawn":
            the first animation frame in which it is visible, noted inside the page.
  sentence  a new 20-token sentence committed (Ctrl+Enter) -> a chart shows its tokens
            (attention page)
            (trivial: text committed (Enter) -> the echo shows it)
  head      another layer/head picked -> the heatmap redrawn (attention page)
            (trivial: another selectbox option picked -> the echo shows it)
  pages     on every page (--pages), each in a fresh session: a new input -> a chart shows
            different data. The shared sentence in the sidebar on the explorer pages and in
            compare mode; the English sentence on the translation pages; another digit on
            the vision page; each lecture step's own box (its "Try your own" input; the
            slider on steps 6 and 12; step 1's box updates a translation, not a chart, so
            there until the text changes). Compared with the trivial page's sentence time.
  memory    server RSS: after start, with every shipped model loaded (each page visited
            once) and after --sessions sessions, each with its own sentence on two pages.

The whole page (issue 25; --whole-runs new sentences on each page that takes the shared
sentence: tokens, positional, attention, masked, causal, and compare mode on the attention
page, each in a fresh session, the first sentence a warm-up; --whole-page-only prints only
these two tables). Table 1, medians:

  whole main area  Ctrl+Enter in the sidebar's sentence box -> the whole main area shows
            the new sentence and none of the old one. Its words (the mlm tokenizer's tokens:
            words of 3+ letters, no special tokens, numbers, word pieces or very common
            words) must each appear as a whole word (no letter or digit beside it) in some
            text node under [data-testid="stMain"] (SVG text included: Plotly's tick
            labels), and the old sentence's words not in the new one in none (compare mode:
            the second sentence's words are left out of both; so are words a page shows
            whatever its sentence, seen on the first two sentences, and printed). A
            MutationObserver checks on each callback and records (time, signature) when it
            changes; once the page is idle, the words are done at the first change from
            which the signature stayed final. The whole main area is done at the later of
            that and the last DOM change inside a chart that was there at the key press
            (Plotly draws a heatmap's colour bar in a task after its tick labels). A run that
            ends with old words shown (or new ones missing) is listed with where they are,
            not counted.
  words     the words alone (the method issue 25 measured with).
  / trivial The trivial page measured the same way (its echo; Enter in its box), before and
            after the pages, pooled. Goal 2.5x (issue 25). Its echo timed as the sentence
            row times it (the first change) is printed beside.
  first chart  the same key press -> the first chart whose data changed (the "pages" rows'
            measure), from the same runs.

Table 2, where the time goes (means over the runs, ms from the key press): the first
websocket message from the server; the script-finished message (field 6 of a ForwardMsg,
as tests/e2e/harness.py counts them); the first chart; the whole page; the server run
(first message -> script finished) and what the browser still did after it (whole page -
script finished); the messages to the main area / sidebar / other and their bytes (each
message's type and element are read from its protobuf, and listed per page below the
tables); each Plotly.react call (wrapped once Plotly is loaded: count and synchronous ms,
per chart: when it started and when its promise resolved), plotly_afterplot events and
Plots.resize calls; the sidebar's "Forward pass" figure (the server's model time). Then the
browser's main thread: long tasks and long animation frames (PerformanceObserver, >= 50 ms;
the entry types Chromium supports are printed) overlapping key press -> done; the
renderer's task / script / layout / style time (the DevTools protocol's Performance
metrics) from the key press until the page is quiet (150 ms without a DOM change); and the
cost of this benchmark's own observer callbacks (total ms and count). Then when the page
settled: the words, the last chart change, the whole page, the last Plotly promise and the
last DOM change anywhere in the main area.

"Committed" and "drawn" are timed inside the page: from the key press / click event to the
DOM mutation that shows the result (a MutationObserver), so Playwright's round trips are
not counted. Start-up is timed from just before the server process is created. Nothing is
asserted: the goals are printed next to the numbers.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import html
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

import model  # noqa: E402
from tests.e2e import harness  # noqa: E402
from ui import cpu_probe  # noqa: E402

GOALS = {"start": 2.0, "sentence": 2.5, "head": 1.5}  # app / trivial page, issue 14
LABELS = {
    "start": "server start -> first chart",
    "sentence": "new sentence -> updated chart",
    "head": "layer/head change -> updated heatmap",
}
TOKENS = 20
WORDS = (
    "teacher student river bank cash road school garden window piano castle tiger rocket "
    "violin desert library harbor bridge village mountain forest ocean summer winter doctor "
    "farmer painter writer kitchen market"
).split()

# Arms a MutationObserver: `start` is the next keydown/click (the action), `end` the first
# DOM change after it that makes `check()` true.
ARM_JS = """
([kind, arg]) => {
  const b = (window.__bench = { start: null, end: null, kind });
  const checks = {
    tokens: () => [...document.querySelectorAll('.js-plotly-plot')].some((gd) =>
      Object.entries(gd.layout || {}).some(([k, ax]) => /^[xy]axis\\d*$/.test(k) && ax &&
        Array.isArray(ax.ticktext) && ax.ticktext.join('\\u0001') === arg)),
    text: () => [...document.querySelectorAll('[data-testid="stText"]')]
      .some((e) => e.textContent.includes(arg)),
    code: () => [...document.querySelectorAll('[data-testid="stCode"]')]
      .some((e) => !codes.has(e.textContent)),
    changed: () => [...document.querySelectorAll('.js-plotly-plot')].some((gd) => {
      const was = before.get(gd);
      if (was && was.ref === gd.data) return false;
      const sig = JSON.stringify(gd.data || []);
      if (was) was.ref = gd.data;
      return !was ? sig !== '[]' : sig !== was.sig;
    }),
    image: () => {
      const img = document.querySelector(arg[0] + ' image');
      const href = img && (img.getAttribute('href') || img.getAttribute('xlink:href'));
      return !!href && href !== arg[1];
    },
  };
  const check = checks[kind];
  const codes = new Set([...document.querySelectorAll('[data-testid="stCode"]')]
    .map((e) => e.textContent));
  const before = new Map([...document.querySelectorAll('.js-plotly-plot')].map((gd) =>
    [gd, { ref: gd.data, sig: JSON.stringify(gd.data || []) }]));
  const mark = () => { if (b.start === null) b.start = performance.now(); };
  window.addEventListener('keydown', mark, { capture: true, once: true });
  window.addEventListener('pointerdown', mark, { capture: true, once: true });
  const obs = new MutationObserver(() => {
    if (b.start === null || b.end !== null || !check()) return;
    b.end = performance.now();
    obs.disconnect();
  });
  obs.observe(document.body, { subtree: true, childList: true, attributes: true,
                               characterData: true });
}
"""
DONE_JS = "() => window.__bench && window.__bench.end !== null"
ELAPSED_JS = "() => window.__bench.end - window.__bench.start"


def sentences(m: model.TransformerLM, n: int, offset: int = 0) -> list[str]:
    """n different sentences of exactly TOKENS tokens ([BOS]/[EOS] included)."""
    out = []
    for i in range(offset, offset + n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(TOKENS)]
        text = f"{i} " + " ".join(words)
        while len(m.encode(text).ids) > TOKENS:
            text = text.rsplit(" ", 1)[0]
        while len(m.encode(text).ids) < TOKENS:
            text += " the"
        out.append(text)
    return out


def median_ms(values: list[float]) -> float:
    return statistics.median(values)


def app_url(server: harness.StreamlitServer, page: str, sentence: str) -> str:
    path = "/" if page == "tokens" else f"/{page}"
    return f"{server.url}{path}?{urlencode({'sentence': sentence}, quote_via=quote)}"


def timed(pg, kind: str, arg, action, timeout: float = 60.0) -> float:
    pg.evaluate(ARM_JS, [kind, arg])
    action()
    pg.wait_for_function(DONE_JS, timeout=timeout * 1000, polling=10)
    ms = pg.evaluate(ELAPSED_JS)
    harness.wait_idle(pg, timeout=timeout)
    return ms


# -- start-up -------------------------------------------------------------------------------


# Notes (wall clock, ms) the first frame in which `selector` is visible: checked before each
# paint (requestAnimationFrame), inside the page. Playwright's own wait_for_selector polls
# at growing intervals, up to 500 ms apart, which blurred the start-up times by as much.
READY_JS = """
(selector) => {
  const poll = () => {
    const el = document.querySelector(selector);
    if (el && el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden') {
      window.__readyAt = performance.timeOrigin + performance.now();
    } else {
      requestAnimationFrame(poll);
    }
  };
  requestAnimationFrame(poll);
}
"""


def start_runs(
    browser, script: str, url_of, ready: str, runs: int, extra: tuple[str, ...] = ()
) -> tuple[list, dict]:
    """Start-up times (ms): process start -> the first frame showing `ready`, timed inside
    the page; and their parts: server healthy, first run finished, and `ready` as
    Playwright's polling saw it."""
    times, parts = [], {"healthy": [], "first run done": [], "seen by Playwright": []}
    for _ in range(runs):
        ctx = harness.new_context(browser)
        ctx.add_init_script(f"({READY_JS})({ready!r})")
        pg = ctx.new_page()
        server = harness.StreamlitServer(script, None, *extra)
        epoch = time.time()
        server.start()
        try:
            parts["healthy"].append(server.wait_healthy(timeout=120) * 1000)
            pg.goto(url_of(server), wait_until="commit")
            pg.wait_for_selector(ready, state="visible", timeout=120_000)
            parts["seen by Playwright"].append((time.time() - epoch) * 1000)
            pg.wait_for_function("() => window.__readyAt", timeout=10_000)
            times.append(pg.evaluate("() => window.__readyAt") - epoch * 1000)
            done_at = pg.evaluate("() => window.__glassbox.lastDoneAt || null")
            if done_at:
                parts["first run done"].append(done_at - epoch * 1000)
        finally:
            server.stop()
            ctx.close()
    return times, parts


# -- steady state ---------------------------------------------------------------------------


def app_runs(browser, page: str, texts: list[str], m: model.TransformerLM, runs: int) -> dict:
    with harness.StreamlitServer("app.py") as server:
        server.wait_healthy(timeout=120)
        ctx = harness.new_context(browser)
        pg = ctx.new_page()
        harness.open_app(pg, app_url(server, page, texts[0]), timeout=120, charts=True)
        box = pg.get_by_test_id("stSidebar").get_by_role("textbox", name="Sentence")
        sentence_ms = []
        for i, text in enumerate(texts[1:]):  # texts[1] warms up, not counted
            box.fill(text)
            ticks = "\u0001".join(html.escape(t, quote=False) for t in m.encode(text).tokens)
            ms = timed(pg, "tokens", ticks, lambda: box.press("Control+Enter"))
            if i:
                sentence_ms.append(ms)

        head_ms = []
        heatmap = ".st-key-att_head_map"
        picks = [("att_head", str(h)) for h in (2, 3, 4, 1)]
        picks += [("att_layer", str(n)) for n in (2, 3, 4, 1)]
        if page == "attention":
            for i in range(runs + 1):
                group, choice = picks[i % len(picks)]
                img = pg.locator(f"{heatmap} image").first.get_attribute("href") or ""
                option = pg.locator(f".st-key-{group}").get_by_text(choice, exact=True)
                ms = timed(pg, "image", [heatmap, img], option.click)
                if i:
                    head_ms.append(ms)
        ctx.close()
    return {"sentence": sentence_ms, "head": head_ms}


# The trivial page as Streamlit serves it by default (a full garbage collection after every
# run, which this app's .streamlit/config.toml turns off), as issue 14 measured it; it is also
# measured with this app's own settings (TRIVIAL_SAME_CONFIG), and both ratios are printed.
TRIVIAL_DEFAULTS = ("--runner.postScriptGC", "true")


def trivial_runs(
    browser, runs: int, extra: tuple[str, ...] = TRIVIAL_DEFAULTS, head: bool = True
) -> dict:
    with harness.StreamlitServer("bench/trivial_app.py", None, *extra) as server:
        server.wait_healthy(timeout=60)
        ctx = harness.new_context(browser)
        pg = ctx.new_page()
        harness.open_app(pg, server.url)
        box = pg.get_by_label("Sentence")
        sentence_ms = []
        for i in range(runs + 1):
            text = f"sentence number {i}"
            box.fill(text)
            ms = timed(pg, "text", f"echo: {text} |", lambda: box.press("Enter"))
            if i:
                sentence_ms.append(ms)
        head_ms = []
        for i in range(runs + 1 if head else 0):
            choice = [1, 2, 3, 0][i % 4]
            pg.get_by_test_id("stSelectbox").click()
            option = pg.get_by_role("option", name=str(choice), exact=True)
            ms = timed(pg, "text", f"| head {choice}", option.click)
            if i:
                head_ms.append(ms)
        ctx.close()
    return {"sentence": sentence_ms, "head": head_ms}


# -- new input on every page ---------------------------------------------------------------

SHARED = ("tokens", "positional", "attention", "masked", "causal")
TOY = "toy"  # the translators' grammar: clauses from model.examples joined by "and"
# Each lecture step's own input: ("text", its label, what to type) or ("slider", its key).
STEP_INPUTS: dict[int, tuple[str, str, str]] = {
    1: ("text", "English (the toy grammar's words)", TOY),  # updates text, not a chart
    2: ("text", "A sentence", "sentence"),
    3: ("text", "The query", "word"),
    4: ("text", "A word", "word"),
    5: ("text", "Sentence A", "pair"),  # shares "cat" with sentence B, so a chart is drawn
    6: ("slider", "l6_t", ""),
    7: ("text", "A sentence", "sentence"),
    8: ("text", "Sentence", "sentence"),
    9: ("text", "English (the toy grammar's words)", TOY),
    10: ("text", "A sentence with [MASK]", "mask"),
    11: ("text", "A prompt", "sentence"),
    12: ("slider", "l12_image", ""),
}


def toy_sentences(n: int) -> list[str]:
    """n different inputs the translators read: two of the lecture's clauses joined."""
    from model.examples import TRANSLATION_PROBES as probes

    pairs = [(a, b) for a in probes for b in probes if a != b]
    return [f"{a} and {b}" for a, b in pairs[:n]]


def own_inputs(what: str, n: int, texts: list[str]) -> list[str]:
    """n different inputs of one sort for a page's own text box."""
    if what == TOY:
        return toy_sentences(n)
    if what == "word":
        return [WORDS[(i * 5) % len(WORDS)] for i in range(n)]
    if what == "pair":
        return [t.split(" ", 1)[1] + " the cat" for t in texts]
    if what == "mask":
        return [t.split(" ", 1)[1].replace(" bank ", " [MASK] ", 1) + " [MASK]" for t in texts]
    return [t.split(" ", 1)[1] for t in texts]


def reveal_all(pg) -> None:
    """Click every "Reveal the model's answer" button of a lecture step and open its
    "Try your own" expanders."""
    buttons = pg.get_by_role("button", name=re.compile("Reveal the model"))
    for _ in range(4):  # the step's body (a fragment) draws its questions after the run
        for _i in range(buttons.count()):  # a revealed answer takes its button's place
            harness.click_button(pg, buttons.first)  # clicked again if the click was lost
        pg.wait_for_timeout(300)
        harness.wait_idle(pg, timeout=60)
        if buttons.count() == 0:
            break
    for summary in pg.locator("summary").filter(has_text="Try your own").all():
        summary.click()


def time_inputs(pg, box, inputs: list[str], runs: int, kind: str = "changed") -> list[float]:
    """Type each input into `box` and commit it; ms until a chart shows different data
    (kind "code": until a code block shows a new text)."""
    out = []
    for i, text in enumerate(inputs[: runs + 1]):  # the first warms up, not counted
        box.fill(text)
        press = "Control+Enter" if box.evaluate("e => e.tagName") == "TEXTAREA" else "Enter"
        ms = timed(pg, kind, None, lambda p=press: box.press(p))
        if i:
            out.append(ms)
    return out


def time_slider(pg, key: str, runs: int) -> list[float]:
    """Move a slider one step right (keyboard) each time; ms until a chart changes."""
    thumb = pg.locator(f".st-key-{key} input[type=range]").first
    out = []
    for i in range(runs + 1):
        thumb.focus()
        ms = timed(pg, "changed", None, lambda: pg.keyboard.press("ArrowRight"))
        if i:
            out.append(ms)
    return out


def page_case(pg, server, case: str, texts: list[str], runs: int) -> list[float]:
    """Open one page (or mode) and time `runs` new inputs on it."""
    if case in SHARED or case == "compare":
        page = "attention" if case == "compare" else case
        url = app_url(server, page, texts[0])
        if case == "compare":
            url += "&" + urlencode({"compare_on": "true", "compare": texts[-1]}, quote_via=quote)
        harness.open_app(pg, url, timeout=120, charts=True)
        box = pg.get_by_test_id("stSidebar").get_by_role("textbox", name="Sentence")
        return time_inputs(pg, box, texts[1:], runs)
    harness.open_app(pg, f"{server.url}/{case}", timeout=120)
    if case in ("rnn", "cross_attention"):
        box = pg.get_by_role("textbox", name="English sentence")
        return time_inputs(pg, box, toy_sentences(runs + 1), runs)
    if case == "vision":
        out = []
        for i in range(runs + 1):
            option = pg.get_by_role("option", name=str(1 + i % 9), exact=True)
            for _ in range(5):  # a click while a run is starting can close the menu again
                pg.locator(".st-key-vit_digit").click()
                with contextlib.suppress(PlaywrightTimeout):
                    option.wait_for(state="visible", timeout=5000)
                    break
            ms = timed(pg, "changed", None, option.click)
            if i:
                out.append(ms)
        return out
    reveal_all(pg)
    how, label, what = STEP_INPUTS[int(case.split("_")[1])]
    if how == "slider":
        return time_slider(pg, label, runs)
    box = pg.get_by_test_id("stMain").get_by_role("textbox", name=label).first
    kind = "code" if case == "lecture_1" else "changed"
    return time_inputs(pg, box, own_inputs(what, runs + 1, texts), runs, kind)


CASES = [*SHARED, "compare", "rnn", "cross_attention", "vision"]
CASES += [f"lecture_{n}" for n in STEP_INPUTS]


def every_page(browser, cases: list[str], m: model.TransformerLM, runs: int) -> dict:
    """{case: [ms, ...]}: new input -> a chart changed, on each page in a fresh session."""
    out = {}
    with harness.StreamlitServer("app.py") as server:
        server.wait_healthy(timeout=120)
        for n, case in enumerate(cases):
            ctx = harness.new_context(browser)
            pg = ctx.new_page()
            texts = sentences(m, runs + 2, offset=100 + 20 * n)
            try:
                out[case] = time_inputs_guarded(page_case, pg, server, case, texts, runs)
            finally:
                ctx.close()
    return out


def time_inputs_guarded(fn, pg, server, case: str, texts: list[str], runs: int) -> list[float]:
    """fn(...), or [] with a note when the page could not be driven (a missing widget)."""
    try:
        return fn(pg, server, case, texts, runs)
    except Exception as err:  # noqa: BLE001 - one page's failure must not lose the table
        print(f"  {case}: not measured ({type(err).__name__}: {str(err)[:120]})", flush=True)
        return []


def memory(browser, m: model.TransformerLM, sessions: int) -> dict[str, float]:
    """Server RSS (MiB): idle after start, with every shipped model loaded (each page visited
    once), and after `sessions` more sessions each typed its own sentence on two pages."""
    out = {}
    with harness.StreamlitServer("app.py") as server:
        server.wait_healthy(timeout=120)
        out["started"] = server.rss_mb()
        ctx = harness.new_context(browser)
        pg = ctx.new_page()
        for page in ("tokens", "masked", "causal", "rnn", "cross_attention", "vision"):
            harness.open_app(pg, f"{server.url}/{page}", timeout=120, charts=True)
        ctx.close()
        out["every model loaded"] = server.rss_mb()
        texts = sentences(m, sessions, offset=500)
        for i, text in enumerate(texts):
            ctx = harness.new_context(browser)
            pg = ctx.new_page()
            for page in ("tokens", "attention"):
                harness.open_app(pg, app_url(server, page, text), timeout=120, charts=True)
            ctx.close()
            if i in (sessions // 2 - 1, sessions - 1):
                out[f"after {i + 1} sessions"] = server.rss_mb()
    return out


# -- the whole main area after a new sentence (issue 25) ------------------------------------

# Added to a context after harness.INIT_SCRIPT: every websocket message's arrival time and
# size, and the browser's long tasks and long animation frames (where Chromium has them).
WHOLE_INIT_JS = """
(() => {
  const log = (window.__benchLog = { ws: [], perf: [], types: [] });
  const CAP = 20000;
  const varint = (b, i) => {
    let v = 0, mul = 1;
    for (;;) { const x = b[i++]; v += (x & 0x7f) * mul; if (x < 0x80) return [v, i]; mul *= 128; }
  };
  // Calls fn(field, wire, start, end) for each field of the protobuf message in b[i:end]
  // (a varint's value as start); stops where fn returns false.
  const walk = (b, i, end, fn) => {
    while (i < end) {
      let tag, v;
      [tag, i] = varint(b, i);
      const field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { [v, i] = varint(b, i); if (fn(field, wire, v, v) === false) return; }
      else if (wire === 2) {
        [v, i] = varint(b, i);
        if (fn(field, wire, i, i + v) === false) return;
        i += v;
      } else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return;
    }
  };
  const CONFIG = new Set([57, 58, 61, 65]);  // Element fields that are not its type
  // [ForwardMsg field of its type, delta_path[0] (0 main, 1 sidebar), Element field or
  // 'block' / 'transient']
  const what = (b) => {
    let type = null, root = null, el = null;
    walk(b, 0, b.length, (f, w, s, e) => {
      if (f === 2 && w === 2) {
        walk(b, s, e, (g, w2, s2) => {
          if (g !== 2) return true;
          root = w2 === 2 ? varint(b, s2)[0] : s2;
          return false;
        });
      } else if (f !== 1) {
        type = f;
        if (f === 5 && w === 2) walk(b, s, e, (g, w2, s2, e2) => {
          if (g === 3 && w2 === 2) {
            walk(b, s2, e2, (h) => (CONFIG.has(h) ? true : ((el = h), false)));
            return false;
          }
          if (g === 6 || g === 9) { el = g === 6 ? 'block' : 'transient'; return false; }
          return true;
        });
      }
      return true;
    });
    return [type, root, el];
  };
  const Base = window.WebSocket;
  class Logged extends Base {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const d = e.data, t = performance.now();
        if (log.ws.length >= CAP) return;
        if (!(d instanceof ArrayBuffer)) {
          log.ws.push([t, String(d).length, null, null, null]);
          return;
        }
        let kind = [null, null, null];
        try { kind = what(new Uint8Array(d)); } catch (err) { log.error = String(err); }
        log.ws.push([t, d.byteLength, ...kind]);
      });
    }
  }
  window.WebSocket = Logged;
  const supported = (window.PerformanceObserver && PerformanceObserver.supportedEntryTypes) || [];
  log.types = ['longtask', 'long-animation-frame'].filter((t) => supported.includes(t));
  for (const type of log.types) {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (log.perf.length < CAP)
          log.perf.push([type, e.startTime, e.duration, e.blockingDuration || 0]);
      }
    }).observe({ type, buffered: true });
  }
})();
"""

# Arms one measurement: the start is the next Enter keydown (onEnter false: the next key or
# pointer press: a slider's arrow key, a menu's option); a MutationObserver then checks,
# on every callback, which of the new sentence's words `neu` are missing from the text
# nodes under stMain and which of the old one's `old` are still there (whole words:
# letters and digits around them do not count), and records (time, signature) whenever
# that changes. Also: the first chart whose data changed (the first-chart figure), every
# Plotly.react and Plots.resize call (timed), plotly_afterplot events, the callbacks' cost.
WHOLE_ARM_JS = """
([neu, old, onEnter = true]) => {
  const L = window.__benchLog;
  L.ws.length = 0;
  L.perf.length = 0;
  const keyOf = (el) => {
    const box = el && el.closest && el.closest('[class*="st-key-"]');
    const m = box && box.className.match(/st-key-(\\S+)/);
    return m ? m[1] : '?';
  };
  const P = window.Plotly;
  if (P && !P.__benchWrapped) {
    P.__benchWrapped = true;
    const react = P.react, resize = P.Plots.resize;
    P.react = function (gd, ...rest) {
      const rec = { key: keyOf(gd), t0: performance.now(), sync: 0, end: null };
      if (window.__whole) window.__whole.reacts.push(rec);
      const out = react.call(this, gd, ...rest);
      rec.sync = performance.now() - rec.t0;
      Promise.resolve(out).then(() => { rec.end = performance.now(); }, () => {});
      return out;
    };
    P.Plots.resize = function (gd, ...rest) {
      if (window.__whole) window.__whole.resizes += 1;
      return resize.call(this, gd, ...rest);
    };
  }
  const b = (window.__whole = {
    start: null, firstChart: null, changes: [], lastMutation: 0, cbMs: 0, cbN: 0,
    reacts: [], resizes: 0, afterplots: 0,
  });
  const main = () => document.querySelector('[data-testid="stMain"]');
  const WORD = /[\\p{L}\\p{N}]+/gu;
  const words = () => {
    const set = new Set(), root = main();
    if (!root) return set;
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const p = n.parentNode.nodeName;
      if (p === 'STYLE' || p === 'SCRIPT') continue;
      const m = n.data.toLowerCase().match(WORD);
      if (m) for (const w of m) set.add(w);
    }
    return set;
  };
  b.signature = () => {
    const s = words();
    const missing = neu.filter((w) => !s.has(w)), stale = old.filter((w) => s.has(w));
    return { missing, stale, key: missing.join(',') + '|' + stale.join(',') };
  };
  // Where a word is still shown: the closest element key or test id of each text node.
  b.where = (word) => {
    const out = new Set(), root = main(), re = new RegExp('(^|[^\\\\p{L}\\\\p{N}])' + word +
      '($|[^\\\\p{L}\\\\p{N}])', 'iu');
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (!re.test(n.data)) continue;
      const el = n.parentElement;
      const tid = el.closest('[data-testid]');
      out.add(keyOf(el) + '/' + (tid ? tid.getAttribute('data-testid') : '?'));
    }
    return [...out];
  };
  const charts = () => [...document.querySelectorAll('.js-plotly-plot')];
  const before = new Map(charts().map((gd) =>
    [gd, { ref: gd.data, sig: JSON.stringify(gd.data || []) }]));
  const chartChanged = () => charts().some((gd) => {
    const was = before.get(gd);
    if (was && was.ref === gd.data) return false;
    const sig = JSON.stringify(gd.data || []);
    if (was) was.ref = gd.data;
    return !was ? sig !== '[]' : sig !== was.sig;
  });
  let last = b.signature().key;
  b.initial = last;
  for (const gd of charts()) gd.on && gd.on('plotly_afterplot', () => { b.afterplots += 1; });
  const mark = (e) => {
    if ((onEnter && e.key !== 'Enter') || b.start !== null) return;
    b.start = performance.now();
    window.removeEventListener('keydown', mark, { capture: true });
    window.removeEventListener('pointerdown', mark, { capture: true });
  };
  window.addEventListener('keydown', mark, { capture: true });
  if (!onEnter) window.addEventListener('pointerdown', mark, { capture: true });
  b.observer = new MutationObserver(() => {
    if (b.start === null) return;
    const t0 = performance.now();
    b.lastMutation = t0;
    if (b.firstChart === null && chartChanged()) b.firstChart = t0;
    const sig = b.signature();
    if (sig.key !== last) { last = sig.key; b.changes.push([t0, sig.key]); }
    b.cbMs += performance.now() - t0;
    b.cbN += 1;
  });
  const ALL = { subtree: true, childList: true, attributes: true, characterData: true };
  b.observer.observe(document.body, ALL);
  // When the charts and the main area last changed at all (a chart that shows none of the
  // sentence's words, a caption): only stamped, nothing checked.
  b.chartsAt = null;
  b.mainAt = null;
  const stamp = (key) => () => { if (b.start !== null) b[key] = performance.now(); };
  b.stamps = charts().map((gd) => {
    const o = new MutationObserver(stamp('chartsAt'));
    o.observe(gd, ALL);
    return o;
  });
  const mainObserver = new MutationObserver(stamp('mainAt'));
  if (main()) mainObserver.observe(main(), ALL);
  b.stamps.push(mainObserver);
}
"""

# Quiet: the measurement started and no DOM change for 150 ms.
QUIET_JS = """() => { const b = window.__whole;
  return b.start !== null && performance.now() - Math.max(b.lastMutation, b.start) > 150; }"""

# The measurement's result, after the page is idle: "words" is the first change from which
# the signature stayed as it is now (null when new words are missing or old ones remain);
# "done" the later of that and the last DOM change inside a chart (Plotly draws a heatmap's
# colour bar in a later task than its tick labels, 30-80 ms after them here).
WHOLE_RESULT_JS = """
() => {
  const b = window.__whole, L = window.__benchLog, g = window.__glassbox;
  b.observer.disconnect();
  b.stamps.forEach((o) => o.disconnect());
  const final = b.signature();
  let words = null;
  const lastChange = b.changes[b.changes.length - 1];
  if (!final.missing.length && !final.stale.length) {
    words = lastChange && lastChange[1] === final.key ? lastChange[0] : null;
  }
  const done = words === null ? null : Math.max(words, b.chartsAt === null ? words : b.chartsAt);
  const rel = (t) => (t === null || t === undefined ? null : t - b.start);
  const finishedAt = g.lastDoneAt ? g.lastDoneAt - performance.timeOrigin : null;
  const end = done === null ? performance.now() : done;
  const overlap = (type) => {
    let ms = 0, n = 0, blocking = 0;
    for (const [t, s, d, blk] of L.perf) {
      if (t !== type) continue;
      const cut = Math.min(s + d, end) - Math.max(s, b.start);
      if (cut > 0) { ms += cut; n += 1; blocking += blk; }
    }
    return { ms, n, blocking };
  };
  const ws = L.ws.filter(([t]) => t >= b.start);
  const stale = {};
  for (const w of final.stale) stale[w] = b.where(w);
  return {
    done: rel(done), words: rel(words), firstChart: rel(b.firstChart),
    missing: final.missing, stale,
    initial: b.initial, changes: b.changes.length,
    firstMsg: ws.length ? rel(ws[0][0]) : null,
    lastMsg: ws.length ? rel(ws[ws.length - 1][0]) : null,
    msgs: ws.length, bytes: ws.reduce((a, [, n]) => a + n, 0),
    census: ws.map(([t, n, type, root, el]) => [n, type, root, el, rel(t)]),
    finished: finishedAt !== null && finishedAt >= b.start ? rel(finishedAt) : null,
    longtask: overlap('longtask'), loaf: overlap('long-animation-frame'), types: L.types,
    reacts: b.reacts.map((r) => ({ key: r.key, t0: rel(r.t0), sync: r.sync, end: rel(r.end) })),
    resizes: b.resizes, afterplots: b.afterplots, cbMs: b.cbMs, cbN: b.cbN,
    chartsAt: rel(b.chartsAt), mainAt: rel(b.mainAt),
  };
}
"""

# The words of `vocab` that some text node under stMain shows (whole words).
PRESENT_JS = """
(vocab) => {
  const set = new Set(), root = document.querySelector('[data-testid="stMain"]');
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const m = n.data.toLowerCase().match(/[\\p{L}\\p{N}]+/gu);
    if (m) for (const w of m) set.add(w);
  }
  return vocab.filter((w) => set.has(w));
}
"""
# Too common to tell two sentences apart (the sentences are padded with "the").
COMMON = frozenset(
    "the a an and or of to in on at by for with from is was are be it its this that as not "
    "no he she they we you his her their".split()
)
# Compare mode's second sentence: its own words, and one word of each of the three word
# groups the benchmark's sentences cycle through (sentences()), so every new sentence shares
# one word with it and the page draws its comparison of that word.
SECOND = "the king walked along the river to the bank with cash"
CHART_ELEMENT = 59  # Element.bidi_component: a st.components.v2 element (ui.plot's charts)
CDP_METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


def shown_words(m: model.TransformerLM, text: str) -> set[str]:
    """The words of `text` that the pages show as whole tokens: its tokens that are words
    of three letters or more, not the first piece of a word cut into pieces, not special
    tokens or numbers, and not too common to tell sentences apart (lower case)."""
    tokens = m.encode(text).tokens
    out = set()
    for k, tok in enumerate(tokens):
        after = tokens[k + 1] if k + 1 < len(tokens) else ""
        if tok.isalpha() and len(tok) >= 3 and not after.startswith("##"):
            out.add(tok.lower())
    return out - COMMON


def cdp_metrics(cdp) -> dict[str, float]:
    """The renderer's cumulative task, script, layout and style times (s), from the
    DevTools protocol's Performance domain."""
    got = {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: got.get(k, 0.0) for k in CDP_METRICS}


def forward_ms(pg) -> float | None:
    """The sidebar's "Forward pass" figure (ms), where the page shows one."""
    value = pg.get_by_test_id("stSidebar").get_by_test_id("stMetricValue")
    with contextlib.suppress(Exception):
        if value.count():
            return float(value.first.text_content(timeout=2000).split()[0].replace(",", ""))
    return None


class Frames:
    """The websocket's frames as Chromium's network stack saw them (the DevTools protocol's
    Network events): unlike the page's own clock, their times are not held back while the
    page's main thread is busy drawing. `server_ms`: the first frame sent after `reset` (the
    rerun the key press asked for) -> the first script-finished message after it."""

    def __init__(self, cdp) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.forward_msg = ForwardMsg
        self.sent: list[float] = []
        self.finished: list[float] = []
        cdp.send("Network.enable")
        cdp.on("Network.webSocketFrameSent", lambda e: self.sent.append(e["timestamp"]))
        cdp.on("Network.webSocketFrameReceived", self._received)

    def _received(self, event: dict) -> None:
        frame = event["response"]
        if frame.get("opcode") != 2:  # Streamlit's messages are binary
            return
        msg = self.forward_msg()
        msg.ParseFromString(base64.b64decode(frame["payloadData"]))
        if msg.WhichOneof("type") == "script_finished":
            self.finished.append(event["timestamp"])

    def reset(self) -> None:
        self.sent.clear()
        self.finished.clear()

    def server_ms(self) -> float | None:
        if not self.sent:
            return None
        after = [t for t in self.finished if t >= self.sent[0]]
        return (after[0] - self.sent[0]) * 1000 if after else None


# The servers started here answer for their CPU time exactly (ui/cpu_probe.py), the app and
# the trivial page alike.
os.environ["GLASSBOX_CPU_PROBE"] = "1"


def cpu_ms(pid: int) -> float:
    """The CPU time process `pid` has used so far, every thread (ms): as its probe tells it
    (ui.cpu_probe, to the nanosecond), else as the kernel counts it, in clock ticks of 10 ms
    (a mean over several runs is needed then)."""
    exact = cpu_probe.read_ns(pid)
    if exact is not None:
        return exact / 1e6
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


# The app's record of its model work (ui/cache.py's GLASSBOX_MODEL_LOG): set for the app's
# servers this benchmark starts, a line of seconds per model computation that ran.
MODEL_LOG = Path(tempfile.gettempdir()) / f"glassbox-model-work-{os.getpid()}.txt"


@contextlib.contextmanager
def model_work_logged():
    """The app servers started inside log their model work into MODEL_LOG."""
    os.environ["GLASSBOX_MODEL_LOG"] = str(MODEL_LOG)
    try:
        yield
    finally:
        os.environ.pop("GLASSBOX_MODEL_LOG", None)
        MODEL_LOG.unlink(missing_ok=True)


def model_log_size() -> int:
    return MODEL_LOG.stat().st_size if MODEL_LOG.is_file() else 0


def model_work_ms(since: int) -> float | None:
    """The model work (ms) the app logged after byte `since` of MODEL_LOG; None if no log."""
    if not MODEL_LOG.is_file():
        return None
    with MODEL_LOG.open(encoding="utf-8") as log:
        log.seek(since)
        return sum(float(line) for line in log.read().split()) * 1000


def measure(pg, cdp, frames: Frames, arm: list, act, server_pid: int) -> dict:
    """One measurement: arm WHOLE_ARM_JS with `arm`, `act()`, wait for the run to end and the
    page to be quiet, and return WHOLE_RESULT_JS's result with the renderer's times, the
    server's time (Frames) and CPU time (all its threads, from the key press until the page
    was quiet), the sidebar's forward pass, the model work the app logged (MODEL_LOG) and the
    number of runs it caused."""
    done_before = harness.runs(pg)
    cpu_before, work_before = cpu_ms(server_pid), model_log_size()
    pg.evaluate(WHOLE_ARM_JS, arm)
    before = cdp_metrics(cdp)
    frames.reset()
    act()
    harness.wait_idle(pg, done_before + 1, timeout=60)
    pg.wait_for_function(QUIET_JS, timeout=30_000, polling=50)
    after = cdp_metrics(cdp)
    r = pg.evaluate(WHOLE_RESULT_JS)
    r["cdp"] = {k: (after[k] - before[k]) * 1000 for k in CDP_METRICS}
    r["server"] = frames.server_ms()
    r["server_cpu"] = cpu_ms(server_pid) - cpu_before
    r["forward"] = forward_ms(pg)
    r["model"] = model_work_ms(work_before)
    r["runs"] = harness.runs(pg) - done_before
    return r


def devtools(pg) -> tuple[object, Frames]:
    cdp = pg.context.new_cdp_session(pg)
    cdp.send("Performance.enable")
    return cdp, Frames(cdp)


def whole_inputs(pg, box, texts: list[str], runs: int, m, skip: set[str], press: str,
                 server_pid: int) -> dict:  # fmt: skip
    """Commit each of texts[1:runs + 2] in `box` (texts[0] is shown; the first new one warms
    up, not counted) and measure each until the whole main area shows it (WHOLE_ARM_JS).
    Words the page shows whatever its sentence (a caption's, a prediction's: seen on the
    first two sentences) and `skip` are left out of the check."""
    vocab = sorted(set().union(*(shown_words(m, t) for t in texts)))
    ambient = set(pg.evaluate(PRESENT_JS, vocab)) - shown_words(m, texts[0])
    cdp, frames = devtools(pg)
    out = []
    for i, text in enumerate(texts[1 : runs + 2]):
        now, was = shown_words(m, text), shown_words(m, texts[i])
        box.fill(text)
        left_out = skip | ambient
        arm = [sorted(now - left_out), sorted(was - now - left_out)]
        r = measure(pg, cdp, frames, arm, lambda: box.press(press), server_pid)
        if i == 0:
            ambient |= set(pg.evaluate(PRESENT_JS, vocab)) - now
        else:
            out.append(r)
    cdp.detach()
    return {"runs": out, "ambient": sorted(ambient - skip)}


def whole_case(browser, server, case: str, texts: list[str], runs: int, m) -> dict:
    """One page (or compare mode) in a fresh session: `runs` new sentences, each measured
    until the whole main area shows it."""
    ctx = harness.new_context(browser)
    ctx.add_init_script(WHOLE_INIT_JS)
    try:
        pg = ctx.new_page()
        page = "attention" if case == "compare" else case
        url = app_url(server, page, texts[0])
        skip = set()
        if case == "compare":
            url += "&" + urlencode({"compare_on": "true", "compare": SECOND}, quote_via=quote)
            skip = shown_words(m, SECOND)
        harness.open_app(pg, url, timeout=120, charts=True)
        box = pg.get_by_test_id("stSidebar").get_by_role("textbox", name="Sentence")
        return whole_inputs(pg, box, texts, runs, m, skip, "Control+Enter", server.proc.pid)
    finally:
        ctx.close()


WHOLE_CASES = [*SHARED, "build", "compare"]  # the shared sentence: words checked
# The rest of the explorer pages and every lecture step but "Watch it learn" (its only input
# trains for 30 s): the main area settled
NO_INPUT = {"lecture-watch-it-learn": "its only input trains two models for 30 s"}


def warmed(browser, server) -> None:
    """Open the app once and wait until its server is idle: the background warm-up (PyTorch
    and every shipped model, ui/cache.py) starts after a first page and would otherwise
    run beside the first page measured. Idle: no CPU used for 2 s (at most 3 minutes)."""
    ctx = harness.new_context(browser)
    try:
        harness.open_app(ctx.new_page(), server.url, timeout=120)
        deadline, was = time.monotonic() + 180, -1.0
        while time.monotonic() < deadline:
            now = cpu_ms(server.proc.pid)
            if now - was < 20:  # two ticks at most in 2 s
                return
            was = now
            time.sleep(2)
    finally:
        ctx.close()


# Pages with their own input (issue 38: every explorer page and every lecture step): a new
# input, and the main area's last change once the run is over (nothing of the shared
# sentence to look for). (how, widget key, what): "text" boxes get own_inputs(what), a
# "slider" one step right, a "select" the next option.
OWN_INPUTS: dict[str, tuple[str, str, str]] = {
    "learn": ("radio", "learn_task", ""),  # its own input trains; the task picked is drawn
    "rnn": ("text", "english", TOY),
    "cross_attention": ("text", "english", TOY),
    "vision": ("select", "vit_digit", ""),
    "lecture-rnn-bottleneck": ("text", "l1_own", TOY),
    "lecture-attention": ("text", "l2_own", "sentence"),
    "lecture-query-key-value": ("text", "l3_query", "word"),
    "lecture-tokens-and-embeddings": ("text", "l4_own", "word"),
    "lecture-positional-encoding": ("text", "l5_a", "pair"),
    "lecture-similarity-and-softmax": ("text", "l6_a", "word"),
    "lecture-multi-head-attention": ("text", "l7_own", "sentence"),
    "lecture-transformer-layer": ("text", "l8_text", "sentence"),
    "lecture-cross-attention": ("text", "l9_text", TOY),
    "lecture-bert": ("text", "l10_text", "mask"),
    "lecture-gpt": ("text", "l11_text", "sentence"),
    "lecture-vision-transformer": ("slider", "l12_image", ""),
    "lecture-build-it-yourself": ("text", "l13_text", "sentence"),
}


EVERY_WHOLE = [*WHOLE_CASES, *OWN_INPUTS]
SELECT_NEW = 9  # a "select" input's new options: the vision page's digits 1-9 (0 is shown)


def own_whole_case(browser, server, case: str, texts: list[str], runs: int) -> dict:
    """One page with its own input, in a fresh session: `runs` new inputs (the first one a
    warm-up), each timed from the key or pointer press to the main area's last change
    (WHOLE_ARM_JS's mainAt, once the run is over and the page quiet for 150 ms)."""
    how, key, what = OWN_INPUTS[case]
    ctx = harness.new_context(browser)
    ctx.add_init_script(WHOLE_INIT_JS)
    out = []
    try:
        pg = ctx.new_page()
        harness.open_app(pg, f"{server.url}/{case}", timeout=120)
        if case.startswith("lecture-"):
            reveal_all(pg)
        widget = pg.locator(f".st-key-{key}")
        widget.wait_for(state="visible", timeout=60_000)
        inputs = own_inputs(what, runs + 1, texts) if how == "text" else [""] * (runs + 1)
        if how == "select" and len(inputs) > SELECT_NEW:  # a digit again would be cached
            print(f"  {case}: {SELECT_NEW - 1} runs timed, not {runs}: its picker has "
                  f"{SELECT_NEW} other options, the first a warm-up", flush=True)  # fmt: skip
            inputs = inputs[:SELECT_NEW]
        cdp, frames = devtools(pg)
        for i, text in enumerate(inputs):
            if how == "text":
                box = widget.locator("input, textarea").first
                box.fill(text)
                act = lambda box=box: box.press("Enter")  # noqa: E731
            elif how == "slider":
                thumb = widget.locator("[role=slider], input[type=range]").first
                thumb.focus()
                act = lambda: pg.keyboard.press("ArrowRight")  # noqa: E731
            elif how == "radio":
                labels = widget.locator('[role="radiogroup"] label')  # its options
                labels.first.wait_for(timeout=60_000)  # drawn by the body, after the run
                act = labels.nth((i + 2) % labels.count()).click  # never the one shown (1)
            else:
                option = pg.get_by_role("option", name=str(1 + i), exact=True)
                for _ in range(5):  # a click while a run is starting can close the menu
                    widget.click()
                    with contextlib.suppress(PlaywrightTimeout):
                        option.wait_for(state="visible", timeout=5000)
                        break
                act = option.click
            r = measure(pg, cdp, frames, [[], [], how == "text"], act, server.proc.pid)
            r["done"] = r["mainAt"]  # the main area settled: the whole page shows the input
            if i:
                out.append(r)
        cdp.detach()
    finally:
        ctx.close()
    return {"runs": out, "ambient": []}


def whole_pages(browser, cases: list[str], m, runs: int) -> dict:
    """{case: its runs} for every case, each in a fresh session of one warmed server: the
    pages of the shared sentence by `whole_case`, the others by `own_whole_case`; an empty
    result, with a note, for a page that could not be driven."""
    out = {}
    with model_work_logged(), harness.StreamlitServer("app.py") as server:
        server.wait_healthy(timeout=120)
        warmed(browser, server)
        for n, case in enumerate(cases):
            texts = sentences(m, runs + 2, offset=300 + 20 * n)
            try:
                if case in OWN_INPUTS:
                    out[case] = own_whole_case(browser, server, case, texts, runs)
                else:
                    out[case] = whole_case(browser, server, case, texts, runs, m)
            except Exception as err:  # noqa: BLE001 - one page's failure must not lose the table
                print(f"  {case}: not measured ({type(err).__name__}: {str(err)[:160]})",
                      flush=True)  # fmt: skip
                out[case] = {"runs": [], "ambient": []}
    return out


def trivial_whole(browser, m, runs: int, extra: tuple[str, ...] = TRIVIAL_DEFAULTS) -> dict:
    """The trivial page measured the same way: its text box, Enter, until the main area
    (its echo) shows the new sentence's words and none of the old one's. `extra`: its
    server's options (default: Streamlit's own settings; () the app's config)."""
    with harness.StreamlitServer("bench/trivial_app.py", None, *extra) as server:
        server.wait_healthy(timeout=60)
        ctx = harness.new_context(browser)
        ctx.add_init_script(WHOLE_INIT_JS)
        try:
            pg = ctx.new_page()
            harness.open_app(pg, server.url)
            box = pg.get_by_label("Sentence")
            texts = sentences(m, runs + 2, offset=700)
            harness.after_rerun(pg, lambda: (box.fill(texts[0]), box.press("Enter")), 60)
            return whole_inputs(pg, box, texts, runs, m, set(), "Enter", server.proc.pid)
        finally:
            ctx.close()


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def _ms(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def why_not(r: dict) -> str:
    """Why a run has no "done": the new words missing, the old ones left (and where)."""
    parts = []
    if r["missing"]:
        parts.append("new words missing: " + ", ".join(r["missing"]))
    if r["stale"]:
        parts.append("old words left: " + "; ".join(
            f"{w} in {', '.join(where)}" for w, where in r["stale"].items()))  # fmt: skip
    return " / ".join(parts) or "no final change seen"


def _median_of(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if r[key] is not None]
    return median_ms(values) if values else None


def whole_table(whole: dict, trivial: dict, echo: list[float], same: dict) -> None:
    """Table 1: the whole main area (the words, and every chart drawn to its end), the words
    alone and the first chart, medians, each against the trivial page measured the same
    way (served with Streamlit's own settings, and with the app's config); the runs that
    never showed the whole new sentence, and why."""
    t, t_settled = _median_of(trivial["runs"], "done"), _median_of(trivial["runs"], "mainAt")
    s, s_settled = _median_of(same["runs"], "done"), _median_of(same["runs"], "mainAt")
    goal = GOALS["sentence"]

    def cell(values: list, t: float | None) -> str:
        values = [v for v in values if v is not None]
        if not values or not t:
            return "n/a | n/a"
        return f"{median_ms(values):.0f} | {median_ms(values) / t:.1f}x"

    print(
        f"\nA new sentence -> the whole main area shows it (medians). The trivial page measured "
        f"the same way, served with Streamlit's own settings: {_ms(t)} ms, its main area "
        f"settled in {_ms(t_settled)} ms ({len(trivial['runs'])} runs; its echo timed as the "
        f"sentence row times it: {_ms(median_ms(echo) if echo else None)} ms); served with "
        f"the app's .streamlit/config.toml (no full garbage collection after each run): "
        f"{_ms(s)} ms, settled in {_ms(s_settled)} ms ({len(same['runs'])} runs). Whole main "
        "area: the new sentence's words shown, none of the old one's, and every redrawn chart "
        "drawn to its end (its last DOM change: a heatmap's colour bar comes after its "
        "labels); words: the words alone; first chart: the first chart whose data changed. "
        "The pages with their own input (a translation's English, a digit, a lecture step's "
        "box or slider, a task; no shared sentence to look for): the key or pointer press -> "
        "the main area's last change once the run is over (its settled time), against the "
        "trivial page's settled time. Met: within the goal against each trivial page\n"
    )
    print("| page | whole main area (ms) | / trivial | / trivial, app's config | goal "
          "| met | words (ms) | / trivial | first chart (ms) | / trivial | runs | not done |")
    print("|---|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|---|")
    notes = []
    for case, res in whole.items():
        runs = res["runs"]
        ref = t_settled if case in OWN_INPUTS else t
        ref_same = s_settled if case in OWN_INPUTS else s
        done = [r["done"] for r in runs if r["done"] is not None]
        d = median_ms(done) if done else None
        met = " / ".join(("yes" if d / x <= goal else "no") if d and x else "n/a"
                         for x in (ref, ref_same))  # fmt: skip
        same_ratio = f"{d / ref_same:.1f}x" if d and ref_same else "n/a"
        missed = [r for r in runs if r["done"] is None]
        print(f"| {case} | {cell(done, ref)} | {same_ratio} | {goal:.1f}x | {met} "
              f"| {cell([r['words'] for r in runs], t)} "
              f"| {cell([r['firstChart'] for r in runs], ref)} "
              f"| {len(runs)} | {len(missed) or ''} |")  # fmt: skip
        notes += [f"  {case}, run {runs.index(r) + 1}: {why_not(r)}" for r in missed]
    for case, why in NO_INPUT.items():
        print(f"| {case} | not measured: {why} |")
    if notes:
        print("\nruns with no whole-page time (reported, not counted):")
        print("\n".join(notes))
    print(
        "\nwords left out of the check because the page shows them whatever its sentence: "
        + "; ".join(f"{c}: {', '.join(r['ambient']) or '-'}" for c, r in whole.items())
    )


def census(r: dict) -> dict[str, dict[str, list]]:
    """One run's websocket messages by where they go: {"main" | "sidebar" | "other":
    {element or message type: [count, bytes]}}."""
    from streamlit.proto.Element_pb2 import Element
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    elements = {f.number: f.name for f in Element.DESCRIPTOR.fields}
    types = {f.number: f.name for f in ForwardMsg.DESCRIPTOR.fields}
    out: dict[str, dict[str, list]] = {"main": {}, "sidebar": {}, "other": {}}
    for n, kind, root, el, _ in r["census"]:
        if kind == 5:  # a delta
            part = {0: "main", 1: "sidebar"}.get(root, "other")
            name = elements.get(el, str(el)) if isinstance(el, int) else str(el)
        else:
            part, name = "other", types.get(kind, str(kind))
        cell = out[part].setdefault(name, [0, 0])
        cell[0] += 1
        cell[1] += n
    return out


def census_lines(rows: dict) -> None:
    """Each page's messages for one new sentence (means over the runs): what they carry."""
    print("\nwebsocket messages for one new sentence (means over the runs: count, KiB):")
    for case, res in rows.items():
        runs = res["runs"]
        if not runs:
            continue
        where = [census(r) for r in runs]
        cells = []
        for part in ("main", "sidebar", "other"):
            names = sorted({k for w in where for k in w[part]})
            items = []
            for name in names:
                count = statistics.fmean([w[part].get(name, [0, 0])[0] for w in where])
                kib = statistics.fmean([w[part].get(name, [0, 0])[1] for w in where]) / 1024
                items.append((kib, f"{name} {count:.1f} ({kib:.1f})"))
            cells.append(f"{part}: " + ", ".join(x for _, x in sorted(items, reverse=True)))
        print(f"  {case}: " + " | ".join(cells))


def _over(server: float | None, work: float | None, floor: float | None) -> str:
    """The server run over its floor (the page's model work + the trivial page's run), as
    "1.8x"."""
    if server is None or floor is None:
        return "n/a"
    return f"{server / ((work or 0.0) + floor):.1f}x"


def parts_table(whole: dict, trivial: dict, same: dict) -> None:
    """Table 2: where the time goes, means over the runs (ms from the Enter key press)."""
    print(
        "\nWhere the time goes (means over the runs; ms from the key press). Server run (page "
        "clock): the first message -> the script-finished message as the page handled them; "
        "after it: whole page - script finished (the browser's work left once the server is "
        "done); msgs: websocket "
        "messages from the server, to the main area / the sidebar / other (session, status, "
        "script finished); charts: Plotly.react calls and their synchronous ms in all, "
        "plotly_afterplot events, Plots.resize calls; forward pass: the sidebar's figure "
        "(n/a while its 'Device, timing, sharing' is folded, as here); "
        "model work: the CPU time of every model computation the input caused, as the app's "
        "server logged it (ui/cache.py, GLASSBOX_MODEL_LOG: each trace, translation, "
        "prediction and the lab's passes that ran, not read from a cache); "
        "server: the rerun's request sent -> its script-finished message received, on the "
        "network's clock (DevTools' websocket frames: not delayed by the page's main thread, "
        "but the browser shares the cores); server CPU: the server process's CPU time, every "
        "thread, from the key press until the page was quiet (read to the nanosecond from "
        "the server itself, ui/cpu_probe.py; averaged over the runs); / floor: each over "
        "(the model work + the trivial page's, "
        "served with the app's config: 'trivial, app's config'), goal 2x (issue 38)\n"
    )
    print(
        "| page | first msg | script finished | first chart | whole page | server run "
        "| after it | msgs | KiB | charts: react n, ms / afterplot / resize | forward pass "
        "| model work | server | / floor | server CPU | / floor |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = {"trivial": trivial, "trivial, app's config": same, **whole}
    floor = _mean([r["server"] for r in same["runs"]])
    floor_cpu = _mean([r["server_cpu"] for r in same["runs"]])
    for case, res in rows.items():
        runs = res["runs"]
        if not runs:
            print(f"| {case} | n/a |")
            continue

        def g(key: str, runs: list = runs) -> float | None:
            return _mean([r[key] for r in runs])

        def gap(a: str, b: str, runs: list = runs) -> float | None:
            return _mean([r[b] - r[a] for r in runs if r[a] is not None and r[b] is not None])

        work = _mean([r.get("model") for r in runs])
        where = [census(r) for r in runs]
        msgs = " / ".join(
            _ms(_mean([sum(n for n, _ in w[part].values()) for w in where]), 1)
            for part in ("main", "sidebar", "other")
        )
        charts = (
            f"{_ms(_mean([len(r['reacts']) for r in runs]), 1)}, "
            f"{_ms(_mean([sum(x['sync'] for x in r['reacts']) for r in runs]))} / "
            f"{_ms(g('afterplots'), 1)} / {_ms(g('resizes'), 1)}"
        )
        print(
            f"| {case} | {_ms(g('firstMsg'))} | {_ms(g('finished'))} | {_ms(g('firstChart'))} "
            f"| {_ms(g('done'))} | {_ms(gap('firstMsg', 'finished'))} "
            f"| {_ms(gap('finished', 'done'))} | {msgs} "
            f"| {_ms(_mean([r['bytes'] / 1024 for r in runs]), 1)} | {charts} "
            f"| {_ms(g('forward'), 1)} | {_ms(work, 1)} "
            f"| {_ms(g('server'))} | {_over(g('server'), work, floor)} "
            f"| {_ms(g('server_cpu'))} | {_over(g('server_cpu'), work, floor_cpu)} |"
        )
    types = next((r["types"] for res in rows.values() for r in res["runs"]), [])
    print("\nThe browser's main thread (means over the runs, ms): long tasks (>= 50 ms) and "
          "long animation frames between the key press and the whole page shown, with their "
          "count; the renderer's task / script / layout / style time (DevTools Performance "
          "metrics) from the key press until the page was quiet (150 ms without a DOM "
          "change); this benchmark's own MutationObserver callbacks: their total and count. "
          f"Entry types Chromium has: {', '.join(types) or 'none'}\n")  # fmt: skip
    print("| page | long tasks | long animation frames (blocking) | task | script | layout "
          "| style | observer callbacks |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, res in rows.items():
        runs = res["runs"]
        if not runs:
            continue
        lt = [r["longtask"] for r in runs]
        lf = [r["loaf"] for r in runs]
        cdp = {k: _mean([r["cdp"][k] for r in runs]) for k in CDP_METRICS}
        loaf = (f"{_ms(_mean([x['ms'] for x in lf]))} ({_ms(_mean([x['n'] for x in lf]), 1)}; "
                f"{_ms(_mean([x['blocking'] for x in lf]))})")  # fmt: skip
        print(f"| {case} | {_ms(_mean([x['ms'] for x in lt]))} "
              f"({_ms(_mean([x['n'] for x in lt]), 1)}) | {loaf} | "
              + " | ".join(_ms(cdp[k]) for k in CDP_METRICS)
              + f" | {_ms(_mean([r['cbMs'] for r in runs]), 1)} "
              f"({_ms(_mean([r['cbN'] for r in runs]))}) |")  # fmt: skip
    print(
        "\nWhen the page settled (means over the runs, ms from the key press): the words "
        "shown (table 1's words column), the last DOM change inside a chart, the whole page "
        "(the later of the two, table 1's first column), the last Plotly.react promise "
        "resolved, the last DOM change anywhere under stMain (before the 150 ms of quiet)\n"
    )
    print("| page | words | last chart change | whole page | last Plotly promise "
          "| last main-area change |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    for case, res in rows.items():
        runs = res["runs"]
        if not runs:
            continue
        promise = _mean([max((x["end"] for x in r["reacts"] if x["end"] is not None),
                             default=None) for r in runs])  # fmt: skip
        print(f"| {case} | {_ms(_mean([r['words'] for r in runs]))} "
              f"| {_ms(_mean([r['chartsAt'] for r in runs]))} "
              f"| {_ms(_mean([r['done'] for r in runs]))} | {_ms(promise)} "
              f"| {_ms(_mean([r['mainAt'] for r in runs]))} |")  # fmt: skip
    print(
        "\neach chart's redraw (Plotly.react, means per run: calls x synchronous ms; "
        "started / drawn, ms from the key press):"
    )
    for case, res in whole.items():
        per: dict[str, list] = {}
        for r in res["runs"]:
            for x in r["reacts"]:
                per.setdefault(x["key"], []).append(x)
        n = len(res["runs"]) or 1
        cells = [
            f"{key} {len(xs) / n:.1f}x {_mean([x['sync'] for x in xs]):.0f} ms "
            f"({_ms(_mean([x['t0'] for x in xs]))} / {_ms(_mean([x['end'] for x in xs]))})"
            for key, xs in per.items()
        ]
        print(f"  {case}: " + ("; ".join(cells) or "none"))
        arrived = [[c[4] for c in r["census"] if c[1] == 5 and c[3] == CHART_ELEMENT]
                   for r in res["runs"]]  # fmt: skip
        if arrived and all(len(a) == len(arrived[0]) for a in arrived):
            times = ", ".join(_ms(_mean(list(col))) for col in zip(*arrived, strict=True))
            print(f"    its chart payloads arrived at {times or '-'} ms (in the order sent)")
    census_lines(rows)
    print("\nall runs (ms, whole page / words / first chart; * where a key press ran the script "
          "other than once):")  # fmt: skip
    for case, res in rows.items():
        cells = [
            f"{_ms(r['done'])}/{_ms(r['words'])}/{_ms(r['firstChart'])}"
            f"{'' if r['runs'] == 1 else '*'}"
            for r in res["runs"]
        ]
        print(f"  {case:10s} " + " ".join(cells))
    print("\nserver CPU of each run (ms; model work in brackets):")
    for case, res in rows.items():
        cells = [f"{r['server_cpu']:.1f}" + ("" if r.get("model") is None else
                                              f"[{r['model']:.1f}]") for r in res["runs"]]
        print(f"  {case:10s} " + " ".join(cells))


def ratio_row(
    label: str, app: list[float], trivial: list[float], goal: float, same: list[float]
) -> str:
    """One markdown row: medians, their ratio, the goal ratio, whether it is met, and the
    ratio to the trivial page served with the app's own settings (`same`)."""
    if not app or not trivial:
        return f"| {label} | n/a | | | {goal:.1f}x | | |"
    a, t = median_ms(app), median_ms(trivial)
    met = "yes" if a / t <= goal else "no"
    other = f"{a / median_ms(same):.1f}x" if same else ""
    return f"| {label} | {a:.0f} | {t:.0f} | {a / t:.1f}x | {goal:.1f}x | {met} | {other} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start-runs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--page", default="attention", help="the page for sentence and head")
    parser.add_argument("--start-page", default="tokens", help="the page a shared link opens")
    parser.add_argument("--pages", default="all", help="'all', 'none' or a comma list "
                        f"of {', '.join(CASES)}")  # fmt: skip
    parser.add_argument("--page-runs", type=int, default=4, help="new inputs per page")
    parser.add_argument("--sessions", type=int, default=30, help="0: no memory measurement")
    parser.add_argument("--whole-runs", type=int, default=12, help="new sentences per page "
                        "for the whole-page tables (0: none)")  # fmt: skip
    parser.add_argument("--whole-pages", default="all", help="'all' or a comma list "
                        f"of {', '.join(EVERY_WHOLE)}")  # fmt: skip
    parser.add_argument("--whole-page-only", action="store_true", help="only the whole-page "
                        "tables (and the trivial page they are compared with)")  # fmt: skip
    args = parser.parse_args()
    cases = {"all": list(CASES), "none": []}.get(args.pages, args.pages.split(","))
    whole_cases = EVERY_WHOLE if args.whole_pages == "all" else args.whole_pages.split(",")
    if unknown := [c for c in whole_cases if c not in EVERY_WHOLE]:
        parser.error(f"--whole-pages: unknown {', '.join(unknown)}")
    if args.whole_page_only:
        whole_only(args, whole_cases)
        return

    chromium = harness.find_chromium()
    if chromium is None:
        sys.exit("no Chromium: apt-get install chromium (or set GLASSBOX_CHROMIUM)")
    m = model.load("mlm", device="cpu")
    texts = sentences(m, args.runs + 2)
    load = [os.getloadavg()[0]]

    with sync_playwright() as pw:
        browser = harness.launch(pw, chromium)
        results = {"app": {}, "trivial": {}, "same config": {}}
        results["trivial"]["start"], trivial_parts = start_runs(
            browser, "bench/trivial_app.py", lambda s: s.url,
            '[data-testid="stText"]', args.start_runs, TRIVIAL_DEFAULTS,
        )  # fmt: skip
        results["app"]["start"], app_parts = start_runs(
            browser, "app.py", lambda s: s.url, harness.DRAWN_CHART, args.start_runs
        )
        results["app"]["link"], link_parts = start_runs(
            browser, "app.py", lambda s: app_url(s, args.start_page, texts[0]),
            harness.DRAWN_CHART, args.start_runs,
        )  # fmt: skip
        load.append(os.getloadavg()[0])
        results["trivial"].update(trivial_runs(browser, args.runs))
        results["same config"].update(trivial_runs(browser, args.runs, ()))
        results["app"].update(app_runs(browser, args.page, texts, m, args.runs))
        load.append(os.getloadavg()[0])
        pages = every_page(browser, cases, m, args.page_runs)
        load.append(os.getloadavg()[0])
        whole = measure_whole(browser, m, whole_cases, args.whole_runs, load)
        rss = memory(browser, m, args.sessions) if args.sessions else {}
        load.append(os.getloadavg()[0])
        browser.close()

    import streamlit
    import torch

    print(
        f"\nBrowser benchmark: start-up on the app's address (the default sentence) and on a "
        f"shared link to '{args.start_page}', sentence and head on '{args.page}', "
        f"{TOKENS}-token sentences; {os.cpu_count()} CPUs, {platform.python_version()}, "
        f"streamlit {streamlit.__version__}, torch {torch.__version__}, load average (1 min) "
        f"during the run {min(load):.1f}-{max(load):.1f}\n"
        f"medians over {args.start_runs} start-ups, {args.runs} interactions, "
        f"{args.page_runs} new inputs per page\n"
    )
    print(
        "trivial page: Streamlit's default settings (as issue 14 measured it); last column: "
        "the app over the trivial page served with the app's own .streamlit/config.toml "
        "(no full garbage collection after each run)\n"
    )
    print("| measurement | app (ms) | trivial page (ms) | app / trivial | goal | met "
          "| app / trivial, same config |")  # fmt: skip
    print("|---|---:|---:|---:|---:|:-:|---:|")
    app, trivial, same = results["app"], results["trivial"], results["same config"]
    start = trivial["start"]  # start-up: no run has finished before the first chart
    print(ratio_row(LABELS["start"], app["start"], start, GOALS["start"], start))
    link = f"server start -> first chart, a shared link to {args.start_page} (20 tokens)"
    print(ratio_row(link, app["link"], start, GOALS["start"], start))
    for key in ("sentence", "head"):
        print(ratio_row(LABELS[key], app.get(key, []), trivial[key], GOALS[key], same[key]))
    for case, values in pages.items():
        label = f"new input -> updated chart: {case}"
        row = ratio_row(label, values, trivial["sentence"], GOALS["sentence"], same["sentence"])
        print(row)
    if rss:
        print("\nserver memory (RSS, MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in rss.items()))
    print(
        "\nstart-up, median ms from process start: server healthy / first script run "
        "finished / first chart (trivial: text) seen by Playwright's polling / drawn (timed "
        "in the page: the table's figure)"
    )
    for who, parts, key in (
        ("app", app_parts, ("app", "start")), ("link", link_parts, ("app", "link")),
        ("trivial", trivial_parts, ("trivial", "start")),
    ):  # fmt: skip
        cells = [f"{median_ms(v):.0f}" if v else "n/a" for v in parts.values()]
        total = median_ms(results[key[0]][key[1]])
        print(f"  {who:8s} " + " / ".join(cells + [f"{total:.0f}"]))
    print("\nall runs (ms):")
    for who, res in [*results.items(), ("pages", pages)]:
        for key, values in res.items():
            print(f"  {who:8s} {key:16s} " + " ".join(f"{v:.0f}" for v in values))
    if whole:
        report_whole(whole)


def measure_whole(browser, m, cases: list[str], runs: int, load: list[float]) -> dict:
    """The whole-page measurements: the trivial page before and after the pages (pooled),
    its echo as the first-chart column times it, and each page; the load averages seen."""
    if not runs or not cases:
        return {}
    trivial = trivial_whole(browser, m, runs)
    same = trivial_whole(browser, m, runs, ())
    echo = trivial_runs(browser, runs, head=False)["sentence"]
    load.append(os.getloadavg()[0])
    pages = whole_pages(browser, cases, m, runs)
    load.append(os.getloadavg()[0])
    again, same_again = trivial_whole(browser, m, runs), trivial_whole(browser, m, runs, ())
    load.append(os.getloadavg()[0])
    trivial = {"runs": trivial["runs"] + again["runs"], "ambient": []}
    same = {"runs": same["runs"] + same_again["runs"], "ambient": []}
    return {"echo": echo, "trivial": trivial, "same": same, "pages": pages}


def report_whole(whole: dict) -> None:
    whole_table(whole["pages"], whole["trivial"], whole["echo"], whole["same"])
    parts_table(whole["pages"], whole["trivial"], whole["same"])


def whole_only(args, cases: list[str]) -> None:
    """--whole-page-only: the two whole-page tables, nothing else."""
    chromium = harness.find_chromium()
    if chromium is None:
        sys.exit("no Chromium: apt-get install chromium (or set GLASSBOX_CHROMIUM)")
    m = model.load("mlm", device="cpu")
    load = [os.getloadavg()[0]]
    with sync_playwright() as pw:
        browser = harness.launch(pw, chromium)
        whole = measure_whole(browser, m, cases, args.whole_runs, load)
        browser.close()
    import streamlit

    print(
        f"\nBrowser benchmark, whole page: {args.whole_runs} new {TOKENS}-token sentences per "
        f"page, each page in a fresh session; {os.cpu_count()} CPUs, "
        f"{platform.python_version()}, streamlit {streamlit.__version__}, load average (1 min) "
        f"during the run {min(load):.1f}-{max(load):.1f} ({' '.join(f'{x:.1f}' for x in load)})"
    )
    if whole:
        report_whole(whole)


if __name__ == "__main__":
    main()
