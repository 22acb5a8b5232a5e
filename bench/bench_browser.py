"""Browser timings of the app against the floor Streamlit itself sets.

    python bench/bench_browser.py [--start-runs 5] [--runs 10] [--page attention]
                                  [--start-page tokens] [--pages all] [--page-runs 4]
                                  [--sessions 30]

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

"Committed" and "drawn" are timed inside the page: from the key press / click event to the
DOM mutation that shows the result (a MutationObserver), so Playwright's round trips are
not counted. Start-up is timed from just before the server process is created. Nothing is
asserted: the goals are printed next to the numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

import model  # noqa: E402
from tests.e2e import harness  # noqa: E402

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
        picks = [("att_head", f"head {h}") for h in (2, 3, 4, 1)]
        picks += [("att_layer", f"layer {n}") for n in (2, 3, 4, 1)]
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


def trivial_runs(browser, runs: int, extra: tuple[str, ...] = TRIVIAL_DEFAULTS) -> dict:
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
        for i in range(runs + 1):
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
    hidden = pg.get_by_text("Pick an answer with the class, then reveal.")
    for _ in range(4):  # a click that lands while a run is still starting can be lost
        for i in range(buttons.count()):  # a revealed step keeps its button: harmless
            harness.after_rerun(pg, buttons.nth(i).click, timeout=60)
        pg.wait_for_timeout(300)
        harness.wait_idle(pg, timeout=60)
        if hidden.count() == 0:
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
            url += "&" + urlencode({"compare": texts[-1]}, quote_via=quote)
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
    args = parser.parse_args()
    cases = {"all": list(CASES), "none": []}.get(args.pages, args.pages.split(","))

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


if __name__ == "__main__":
    main()
