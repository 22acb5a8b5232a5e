"""How fast a class follows its teacher: from the teacher's click on Next to each student's
tab showing that step (its address and its heading), in real browsers.

    python bench/bench_follow.py [--students 6] [--steps 6] [--lang en]

One `streamlit run app.py` on a free loopback port, a class in its database, the teacher's
tab in presenter mode (1280x720) and `--students` student tabs (each its own browser
context) that joined by the link. The teacher clicks Next `--steps` times, each once every
student shows the step before; a student follows when its poll of the store (every
ui.lecture.classroom.POLL_EVERY s) sees the teacher's step and loads it afresh. Prints a row
per click and the total p50 / p90 / worst (docs/CLASSROOM.md keeps the table). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WAIT_S = 120
NEXT = {"en": "Next", "ko": "다음"}
# When each step's heading first appeared in this tab (epoch ms, by its number)
DRAWN_AT_JS = """(() => {
  window.__drawn = {};
  new MutationObserver(() => {
    for (const h of document.querySelectorAll('h1')) {
      const m = h.textContent.trim().match(/^(\\d+)\\./);
      if (m && !(m[1] in window.__drawn)) window.__drawn[m[1]] = Date.now();
    }
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();"""
SHOWS_STEP_JS = """(n) => [...document.querySelectorAll('h1')]
  .some((h) => h.textContent.trim().startsWith(n + '.'))"""


def percentile(values: list[float], p: float) -> float:
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, round(p / 100 * (len(ranked) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--steps", type=int, default=6, help="clicks on Next")
    parser.add_argument("--lang", default="en", choices=["en", "ko"])
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    import classroom
    from tests.e2e import harness
    from ui.lecture.classroom import POLL_EVERY
    from ui.lecture.syllabus import STEPS

    chromium = harness.find_chromium()
    if chromium is None:
        sys.exit("needs Chromium: apt-get install chromium")
    server = harness.StreamlitServer("app.py", harness.ARTIFACTS / "logs" / "bench-follow.log")
    server.start()
    store = classroom.Store()
    opened = store.open()
    lang = f"&lang={args.lang}" if args.lang != "en" else ""
    rows = []
    try:
        server.wait_healthy(timeout=90)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=harness.CHROMIUM_ARGS)  # fmt: skip
            teacher = harness.new_context(browser, {"width": 1280, "height": 720}).new_page()
            first = STEPS[0]
            harness.open_app(teacher, f"{server.url}/{first.key}?class={opened.code}"
                             f"&teacher={opened.key}&present=1{lang}", timeout=WAIT_S)  # fmt: skip
            students = []
            for _ in range(args.students):
                context = harness.new_context(browser, {"width": 900, "height": 1000})
                context.add_init_script(DRAWN_AT_JS)
                tab = context.new_page()
                tab.goto(f"{server.url}/lecture?class={opened.code}{lang}")
                tab.wait_for_url(re.compile(f"/{first.key}\\?"), timeout=WAIT_S * 1000)
                tab.wait_for_function(SHOWS_STEP_JS, arg=first.number, timeout=WAIT_S * 1000)
                students.append(tab)
            for n in range(1, min(args.steps, len(STEPS) - 1) + 1):
                step = STEPS[n]
                teacher.get_by_role("button", name=NEXT[args.lang]).first.click()
                clicked = time.perf_counter()
                start = time.time() - (time.perf_counter() - clicked)  # the click, epoch s
                for tab in students:  # they follow in parallel; each tab's own times below
                    tab.wait_for_url(re.compile(f"/{step.key}\\?"), timeout=WAIT_S * 1000)
                    tab.wait_for_function(SHOWS_STEP_JS, arg=step.number, timeout=WAIT_S * 1000)
                loaded = [tab.evaluate("() => performance.timeOrigin") / 1000 for tab in students]
                shown = [tab.evaluate("(n) => window.__drawn[n]", str(step.number)) / 1000
                         for tab in students]  # fmt: skip
                own = [max(0.0, t - start) for t in loaded]
                took = [max(0.0, t - start) for t in shown]
                rows.append((step.number, own, took))
                teacher.wait_for_url(re.compile(f"/{step.key}\\?"), timeout=WAIT_S * 1000)
                teacher.wait_for_function(SHOWS_STEP_JS, arg=step.number, timeout=WAIT_S * 1000)
            browser.close()
    finally:
        store.close(opened.code, opened.key)
        server.stop()

    print(f"{args.students} students following the teacher ({args.lang}); a follower polls "
          f"every {POLL_EVERY:g} s. Seconds from the teacher's click on Next to the student's "
          "tab loading the step (its navigation start), and to the step drawn:")
    print()
    print("| step | loads: p50 | p90 | worst | drawn: p50 | p90 | worst |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    loads = [v for _, own, _ in rows for v in own]
    drawn = [v for _, _, took in rows for v in took]
    for number, own, took in rows:
        print(f"| {number} | {statistics.median(own):.1f} | {percentile(own, 90):.1f} | "
              f"{max(own):.1f} | {statistics.median(took):.1f} | {percentile(took, 90):.1f} | "
              f"{max(took):.1f} |")
    print(f"| all {len(loads)} | {statistics.median(loads):.1f} | {percentile(loads, 90):.1f} | "
          f"{max(loads):.1f} | {statistics.median(drawn):.1f} | {percentile(drawn, 90):.1f} | "
          f"{max(drawn):.1f} |")


if __name__ == "__main__":
    main()
