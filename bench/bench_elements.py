"""What a page's element count costs: `python bench/bench_elements.py [--runs 16]`.

A synthetic Streamlit page per case, each served from the repository (so with the app's
.streamlit/config.toml) and driven by headless Chromium: a text box inside a fragment, N
elements that the fragment draws again on each new input (each a line of markdown), an
echo of the input. A new input is timed by bench/bench_browser.py's own measurement of a
page with its own input (`measure`): from the Enter key to the main area's last change once
the run is over and the page quiet, on the page's own clock. Cases:

  re-sent N     N lines drawn again by each fragment run (N elements, N messages)
  one element   the same N lines as one markdown element (one message)
  static N      N lines drawn once, outside the fragment (sent on the first run only)

With --kinds, N elements of other kinds, re-sent by each run: radio (four options, none
picked), button, container (a container holding one line: two messages) and columns (two
columns, one line in the first: four messages).

The per-element columns are the cost per re-sent element over the case with none, in the
browser's whole page and in the server's CPU time (the process's, every thread, from
/proc: 10 ms ticks, the mean of the runs). Issue 38: the app's pages send 7-40 messages
a new input, the trivial page 4. Prints a markdown table; asserts nothing. Needs Chromium,
as the browser tests do.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import harness  # noqa: E402
from bench_browser import WHOLE_INIT_JS, devtools, measure  # noqa: E402

# Its arguments: MODE ("resent", "one", "static" or a kind of --kinds) and N, how many.
PAGE = """\
import sys

import streamlit as st

MODE, N = sys.argv[1], int(sys.argv[2])
LINE = "**Line {i}.** The quick brown fox jumps over the lazy dog{end}"
if MODE == "static":
    for i in range(N):
        st.markdown(LINE.format(i=i, end="."))


@st.fragment
def body() -> None:
    text = st.text_input("text", key="text")
    if MODE == "resent":
        for i in range(N):
            st.markdown(LINE.format(i=i, end=f", {text}."))
    elif MODE == "radio":
        for i in range(N):
            st.radio(f"Question {i}", ["A", "B", "C", "D"], index=None, key=f"r{i}",
                     horizontal=True)
    elif MODE == "button":
        for i in range(N):
            st.button(f"Reveal {i}", key=f"b{i}")
    elif MODE == "container":
        for i in range(N):
            with st.container():
                st.markdown(LINE.format(i=i, end=f", {text}."))
    elif MODE == "columns":
        for i in range(N):
            st.columns(2)[0].markdown(LINE.format(i=i, end=f", {text}."))
    elif MODE == "one":
        st.markdown("\\n\\n".join(LINE.format(i=i, end=f", {text}.") for i in range(N)))
    st.text(f"echo {text}")


body()
"""


KINDS = "radio, button, container, columns"


class Case:
    """One case: its server (`MODE N` as the script's arguments) and its page."""

    def __init__(self, browser, mode: str, n: int, script: Path) -> None:
        args = ("--", mode, str(n))  # after the options: the script's own sys.argv
        self.server = harness.StreamlitServer(str(script), None, *args).start()  # app config
        self.server.wait_healthy(timeout=60)
        self.ctx = harness.new_context(browser)
        self.ctx.add_init_script(WHOLE_INIT_JS)
        self.page = self.ctx.new_page()
        harness.open_app(self.page, self.server.url, timeout=60)
        self.box = self.page.get_by_role("textbox", name="text")
        self.box.wait_for(timeout=60_000)
        self.cdp, self.frames = devtools(self.page)
        self.times: list[float] = []
        self.cpu: list[float] = []  # the server's CPU time per input (ms, 10 ms ticks)
        self.inputs = 0

    def new_input(self, timed: bool) -> None:
        """Type a new word, then time it until the main area settles (bench_browser's
        `measure`, as for a page with its own input)."""
        self.box.fill(f"word{self.inputs}")
        self.inputs += 1
        act = lambda: self.box.press("Enter")  # noqa: E731
        r = measure(self.page, self.cdp, self.frames, [[], [], True], act, self.server.proc.pid)
        if timed:
            self.times.append(r["mainAt"])
            self.cpu.append(r["server_cpu"])

    def close(self) -> None:
        self.ctx.close()
        self.server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=16, help="new inputs per case")
    parser.add_argument("--sizes", default="5,10,20,40", help="N, comma separated")
    parser.add_argument("--kinds", default="", help="other kinds, comma separated: " + KINDS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    executable = harness.find_chromium()
    if executable is None:
        sys.exit("no Chromium found (see docs/TESTING.md)")
    from playwright.sync_api import sync_playwright

    kinds = [k for k in args.kinds.split(",") if k]
    if set(kinds) - set(KINDS.split(", ")):
        sys.exit(f"--kinds: one or more of {KINDS}")
    cases = [("resent", 0), *(("resent", n) for n in sizes), ("one", max(sizes)),
             ("static", max(sizes)), *((kind, n) for kind in kinds for n in sizes)]  # fmt: skip
    names = {"resent": "re-sent {n}", "one": "{n} lines as one element", "static": "static {n}"}
    names |= {kind: f"{kind} x {{n}}" for kind in kinds}
    load = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        script = Path(tmp) / "elements_page.py"
        script.write_text(PAGE)
        browser = harness.launch(pw, executable)
        running = {case: Case(browser, *case, script) for case in cases}
        try:
            for i in range(args.runs + 2):  # the cases in turn, so that load drifts hit all
                for case in running.values():
                    case.new_input(timed=i >= 2)  # two warm-up inputs each
                load.append(os.getloadavg()[0])
        finally:
            for case in running.values():
                case.close()
            browser.close()
        results = {key: statistics.median(case.times) for key, case in running.items()}
        cpu = {key: statistics.fmean(case.cpu) for key, case in running.items()}
    base, base_cpu = results[("resent", 0)], cpu[("resent", 0)]
    print(f"\nA new input -> the whole main area (median of {args.runs}, ms); "
          f"{os.cpu_count()} CPUs, load average {min(load):.1f}-{max(load):.1f}; the cases "
          f"in turn; "
          f"{time.strftime('%Y-%m-%d')}\n")  # fmt: skip
    print("| case | elements re-sent | whole page (ms) | over none (ms) | per element (ms) "
          "| server CPU (ms) | per element (ms) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (mode, n), ms in results.items():
        resent = {"one": 1, "static": 0}.get(mode, n)  # an element of a kind, as one
        each = resent and mode not in ("one", "static")
        per = f"{(ms - base) / resent:.2f}" if each else "–"
        c = cpu[(mode, n)]
        per_cpu = f"{(c - base_cpu) / resent:.2f}" if each else "–"
        print(f"| {names[mode].format(n=n)} | {resent} | {ms:.0f} | {ms - base:+.0f} | {per} "
              f"| {c:.1f} | {per_cpu} |")  # fmt: skip


if __name__ == "__main__":
    main()
