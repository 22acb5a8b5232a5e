"""Hostile input against every text page: the time of a page's first run, of a rerun and of
the slowest run that opens one of its other section tabs (Streamlit's AppTest, in this
process, shipped models on the CPU), with the lecture's sentence as the baseline in the
same run. Goal: no input makes a rerun take more than 2 s.

    .venv/bin/python bench/bench_hostile.py            # every text page, every input
    .venv/bin/python bench/bench_hostile.py --pages masked --repeat 3

Prints a markdown table; the work each page does is bounded by counting in
tests/test_bounds.py (forward passes, charts, numbers sent), not by these timings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["tokens", "positional", "attention", "masked", "causal"]


def inputs() -> dict[str, str]:
    from model.examples import DEFAULT_SENTENCE

    return {
        "lecture sentence (baseline)": DEFAULT_SENTENCE,
        "300 [MASK]": " ".join(["[MASK]"] * 300),
        "60,000 characters": ("the dog bit the man " * 3000)[:60000],
        "3,000 emoji": "😀" * 3000,
        "256 tokens": " ".join(["the dog bit the man and"] * 60),
        "HTML": "<script>alert(1)</script> " * 200,
    }


def run_page(name: str, text: str) -> tuple[float, float, int, float]:
    """(first run s, rerun s, charts, the slowest run that opens another section tab) for
    one page and one sentence."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.charts import charts as drawn_charts
    from ui.show import section_ids, section_key

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=600)
    at.session_state["sentence"] = text
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    start = time.perf_counter()
    at.run()
    rerun = time.perf_counter() - start
    charts = len(drawn_charts(at))
    tabs = 0.0
    for tab in section_ids(name)[1:]:
        at.session_state[section_key(name)] = tab
        start = time.perf_counter()
        at.run()
        tabs = max(tabs, time.perf_counter() - start)
    if at.exception:
        raise RuntimeError(f"{name} on {text[:30]!r}: {at.exception[0].message}")
    return first, rerun, charts, tabs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", nargs="+", default=PAGES, choices=PAGES)
    parser.add_argument("--repeat", type=int, default=2, help="runs per cell (median)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    run_page(args.pages[0], "warm up")  # load the models once
    print("| page | input | first run (s) | rerun (s) | charts | slowest tab opened (s) |")
    print("|---|---|---:|---:|---:|---:|")
    worst = 0.0
    for name in args.pages:
        for label, text in inputs().items():
            runs = [run_page(name, text) for _ in range(args.repeat)]
            first = statistics.median(r[0] for r in runs)
            rerun = statistics.median(r[1] for r in runs)
            tab = statistics.median(r[3] for r in runs)
            worst = max(worst, first, rerun, tab)
            cells = f"{first:.2f} | {rerun:.2f} | {runs[0][2]} | {tab:.2f}"
            print(f"| {name} | {label} | {cells} |", flush=True)
    print(f"\nslowest run: {worst:.2f} s (goal: at most 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
