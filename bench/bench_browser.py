"""Browser timings of the app against the floor Streamlit itself sets.

    python bench/bench_browser.py [--start-runs 5] [--runs 10] [--page attention]
                                  [--start-page tokens]

Serves the real app (app.py) and a trivial one-widget page (bench/trivial_app.py) the same
way (`streamlit run`, headless, no file watcher, a free local port), drives both with
headless system Chromium, and prints a markdown table of medians and their ratio:

  start     process start -> first Plotly chart drawn on the landing page (tokens)
            (trivial: -> its text drawn); a fresh server and a fresh browser context each
            run, so the model load and the page's JavaScript download are included
  sentence  a new 20-token sentence committed (Ctrl+Enter) -> a chart shows its tokens
            (attention page)
            (trivial: text committed (Enter) -> the echo shows it)
  head      another layer/head picked -> the heatmap redrawn (attention page)
            (trivial: another selectbox option picked -> the echo shows it)

"Committed" and "drawn" are timed inside the page: from the key press / click event to the
DOM mutation that shows the result (a MutationObserver), so Playwright's round trips are
not counted. Start-up is timed from just before the server process is created. Nothing is
asserted: the targets are printed next to the numbers.
"""

from __future__ import annotations

import argparse
import html
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

import model  # noqa: E402
from tests.e2e import harness  # noqa: E402

TARGETS_MS = {"start": 4000, "sentence": 500, "head": 150}
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
    image: () => {
      const img = document.querySelector(arg[0] + ' image');
      const href = img && (img.getAttribute('href') || img.getAttribute('xlink:href'));
      return !!href && href !== arg[1];
    },
  };
  const check = checks[kind];
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


def sentences(m: model.TransformerLM, n: int) -> list[str]:
    """n different sentences of exactly TOKENS tokens ([BOS]/[EOS] included)."""
    out = []
    for i in range(n):
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


def start_runs(browser, script: str, url_of, ready: str, runs: int) -> tuple[list, dict]:
    """Start-up times (ms), and their parts: server healthy, first run finished."""
    times, parts = [], {"healthy": [], "first run done": []}
    for _ in range(runs):
        ctx = harness.new_context(browser)
        pg = ctx.new_page()
        server = harness.StreamlitServer(script)
        epoch = time.time()
        server.start()
        try:
            parts["healthy"].append(server.wait_healthy(timeout=120) * 1000)
            pg.goto(url_of(server), wait_until="commit")
            pg.wait_for_selector(ready, state="visible", timeout=120_000)
            times.append((time.perf_counter() - server.started_at) * 1000)
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


def trivial_runs(browser, runs: int) -> dict:
    with harness.StreamlitServer("bench/trivial_app.py") as server:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start-runs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--page", default="attention", help="the page for sentence and head")
    parser.add_argument("--start-page", default="tokens", help="the page start-up opens")
    args = parser.parse_args()

    chromium = harness.find_chromium()
    if chromium is None:
        sys.exit("no Chromium: apt-get install chromium (or set GLASSBOX_CHROMIUM)")
    m = model.load("mlm", device="cpu")
    texts = sentences(m, args.runs + 2)

    with sync_playwright() as pw:
        browser = harness.launch(pw, chromium)
        results = {"app": {}, "trivial": {}}
        results["trivial"]["start"], trivial_parts = start_runs(
            browser, "bench/trivial_app.py", lambda s: s.url,
            '[data-testid="stText"]', args.start_runs,
        )  # fmt: skip
        results["app"]["start"], app_parts = start_runs(
            browser, "app.py", lambda s: app_url(s, args.start_page, texts[0]),
            harness.DRAWN_CHART, args.start_runs,
        )  # fmt: skip
        results["trivial"].update(trivial_runs(browser, args.runs))
        results["app"].update(app_runs(browser, args.page, texts, m, args.runs))
        browser.close()

    import streamlit
    import torch

    print(
        f"\nBrowser benchmark: start-up on page '{args.start_page}', sentence and head on "
        f"'{args.page}', {TOKENS}-token sentences; "
        f"{os.cpu_count()} CPUs, {platform.python_version()}, streamlit {streamlit.__version__}, "
        f"torch {torch.__version__}, load average {os.getloadavg()[0]:.1f}\n"
        f"medians over {args.start_runs} start-ups and {args.runs} interactions each\n"
    )
    print("| measurement | app (ms) | trivial page (ms) | app / trivial | target (ms) | met |")
    print("|---|---:|---:|---:|---:|:-:|")
    for key in ("start", "sentence", "head"):
        app, trivial = results["app"].get(key), results["trivial"].get(key)
        if not app:
            print(f"| {LABELS[key]} | n/a | | | {TARGETS_MS[key]} | |")
            continue
        a, t = median_ms(app), median_ms(trivial)
        met = "yes" if a <= TARGETS_MS[key] else "no"
        print(f"| {LABELS[key]} | {a:.0f} | {t:.0f} | {a / t:.1f}x | {TARGETS_MS[key]} | {met} |")
    print(
        "\nstart-up, median ms from process start: server healthy / first script run "
        "finished / first chart (trivial: text) drawn"
    )
    for who, parts, key in (("app", app_parts, "app"), ("trivial", trivial_parts, "trivial")):
        cells = [f"{median_ms(v):.0f}" if v else "n/a" for v in parts.values()]
        print(f"  {who:8s} " + " / ".join(cells + [f"{median_ms(results[key]['start']):.0f}"]))
    print("\nall runs (ms):")
    for who, res in results.items():
        for key, values in res.items():
            print(f"  {who:8s} {key:9s} " + " ".join(f"{v:.0f}" for v in values))


if __name__ == "__main__":
    main()
