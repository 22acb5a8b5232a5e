"""Page rerun times through AppTest: `python bench/bench_apptest.py [--repeats 7]`.

For each page and a 20-token sentence (specials included), the median wall time of:
  full rerun    the page run again, nothing changed (every cache warm)
  new sentence  a sentence not seen before typed into the sidebar (one forward pass, new
                figures), with the page's first section tab open
  picker        the page's main picker moved (layer/head, token, positions, temperature), in
                its section tab, to
                a value not shown before, then to the same values again (figures already
                kept); AppTest reruns the whole script, so this is an upper bound on the
                fragment rerun a browser does
and a trivial one-slider page, run the same way, as a yardstick (last column: first-view
picker time over the trivial page's). A second table gives the server's CPU time for a new
sentence (the script thread's, so other jobs on the machine barely move it): the whole run,
the part spent building and writing figures (ui.figures.figure_json), and the trivial
page's run for comparison (issue 38).
The browser's own numbers (render, network) are measured by the delivery benchmarks; this
table is the server side. Prints a markdown table; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.runtime.scriptrunner import script_runner  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

import model  # noqa: E402
import ui.figures  # noqa: E402
from ui.show import section_key  # noqa: E402

BASE = "the researcher asked the assistant to run the experiment again because he was not"
NOUNS = "experiment test study trial survey analysis check model sample project lesson".split()
TRIVIAL = "import streamlit as st\nst.slider('x', 0, 100, key='x')\n"

# The picker each page is timed with: a name, and how to set its i-th distinct value.
PICKERS: dict[str, tuple[str, Callable[[AppTest, int], None]]] = {
    "tokens": ("token", lambda at, i: at.selectbox(key="tok_token").set_value(1 + i % 18)),
    "positional": ("positions", lambda at, i: at.slider(key="pos_span").set_value(16 + 8 * i)),
    "attention": (
        "layer/head",
        lambda at, i: (
            at.radio(key="att_layer").set_value(i // 4 % 4),
            at.radio(key="att_head").set_value(i % 4),
        ),
    ),
    "masked": (
        "layer/head",
        lambda at, i: (
            at.radio(key="mask_layer").set_value(i // 5 % 4),
            at.radio(key="mask_head").set_value(["average", 0, 1, 2, 3][i % 5]),
        ),
    ),
    "causal": ("temperature", lambda at, i: at.slider(key="causal_temp").set_value(0.05 * i)),
}

# The section tab each picker sits in (ui.show.lazy_sections); a new sentence is timed on
# the page's first tab, the one a visitor sees.
PICKER_TABS = {  # by id: Nearest neighbours, Sinusoidal, Where the [MASK] looked, The next token
    "tokens": "neighbours",
    "positional": "sinusoidal",
    "masked": "looked",
    "causal": "writing",
}


def sentence_of(n_tokens: int, variant: int) -> str:
    """A sentence that the mlm reads as n_tokens tokens (specials included); each variant
    is a different sentence (so its trace is not cached yet)."""
    m = model.load("mlm", "cpu")
    noun = NOUNS[variant % len(NOUNS)]
    words = f"{noun} {variant} : {BASE} satisfied with the results at all".split()
    while len(m.encode(" ".join(words)).ids) > n_tokens:
        words.pop()
    return " ".join(words)


CPU: dict[str, float] = {}  # thread CPU seconds of the last runs, by part


def _thread_cpu(part: str, function: Callable) -> Callable:
    """`function`, adding the CPU time of its thread to CPU[part]."""

    def timed(*args: object, **kwargs: object) -> object:
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            CPU[part] = CPU.get(part, 0.0) + time.thread_time() - start

    return timed


script_runner.ScriptRunner._run_script = _thread_cpu("run", script_runner.ScriptRunner._run_script)
ui.figures.figure_json = _thread_cpu("figures", ui.figures.figure_json)


def cpu_ms(action: Callable[[], None], repeats: int) -> dict[str, float]:
    """Median CPU ms of the script thread per part ("run", "figures") over `repeats` calls."""
    seen: dict[str, list[float]] = {"run": [], "figures": []}
    for _ in range(repeats):
        CPU.clear()
        action()
        for part, values in seen.items():
            values.append(1000 * CPU.get(part, 0.0))
    return {part: statistics.median(values) for part, values in seen.items()}


def median_ms(action: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def bench_page(name: str, repeats: int, tokens: int) -> dict[str, float]:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=300)
    at.session_state["sentence"] = sentence_of(tokens, 0)
    at.run()
    if at.exception:
        raise RuntimeError(f"{name}: {at.exception[0].message}")
    at.run()  # warm
    result = {"full rerun": median_ms(lambda: at.run(), repeats)}

    variants = iter(range(1, 10_000))
    fresh = [sentence_of(tokens, next(variants)) for _ in range(repeats)]
    queue = iter(fresh)
    result["new sentence"] = median_ms(
        lambda: at.text_area(key="sentence").input(next(queue)).run(), repeats
    )
    more = iter([sentence_of(tokens, next(variants)) for _ in range(repeats)])
    cpu = cpu_ms(lambda: at.text_area(key="sentence").input(next(more)).run(), repeats)
    result |= {f"cpu {part}": value for part, value in cpu.items()}

    _, pick = PICKERS[name]
    if name in PICKER_TABS:  # the picker sits in a section tab: opened (a rerun) first
        at.session_state[section_key(name)] = PICKER_TABS[name]
        at.run()
    first = iter(range(1, 1 + repeats))  # values not shown before (figures built)
    result["picker, first view"] = median_ms(lambda: (pick(at, next(first)), at.run()), repeats)
    again = iter(range(1, 1 + repeats))  # the same values again (figures kept)
    result["picker, seen before"] = median_ms(lambda: (pick(at, next(again)), at.run()), repeats)
    if at.exception:
        raise RuntimeError(f"{name}: {at.exception[0].message}")
    return result


def bench_trivial(repeats: int) -> tuple[float, float]:
    """The trivial page's rerun: wall ms, and the script thread's CPU ms."""
    at = AppTest.from_string(TRIVIAL, default_timeout=60).run()
    values = iter(range(1, 10_000))
    at.run()
    wall = median_ms(lambda: at.slider(key="x").set_value(next(values)).run(), repeats)
    return wall, cpu_ms(lambda: at.slider(key="x").set_value(next(values)).run(), repeats)["run"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--pages", nargs="*", default=list(PICKERS))
    args = parser.parse_args()

    trivial, trivial_cpu = bench_trivial(args.repeats)
    print(f"AppTest rerun, median of {args.repeats}, {args.tokens}-token sentence, CPU\n")
    columns = ["full rerun", "new sentence", "picker, first view", "picker, seen before"]
    print("| page (picker) | " + " | ".join(f"{c} (ms)" for c in columns) + " | vs trivial |")
    print("|---|" + "---:|" * (len(columns) + 1))
    results = {}
    for name in args.pages:
        r = results[name] = bench_page(name, args.repeats, args.tokens)
        cells = " | ".join(f"{r[c]:.0f}" for c in columns)
        ratio = r["picker, first view"] / trivial
        print(f"| {name} ({PICKERS[name][0]}) | {cells} | {ratio:.0f}x |")
    print(f"| trivial one-slider page | {trivial:.0f} | – | {trivial:.0f} | {trivial:.0f} | 1x |")
    print("\nA new sentence: the script thread's CPU, median ms (the whole page: AppTest reruns")
    print(f"it all); the trivial page's run took {trivial_cpu:.1f} ms\n")
    print("| page | run | figures | the rest | run / trivial |")
    print("|---|---:|---:|---:|---:|")
    for name, r in results.items():
        run, figures = r["cpu run"], r["cpu figures"]
        print(f"| {name} | {run:.0f} | {figures:.0f} | {run - figures:.0f} "
              f"| {run / max(trivial_cpu, 1e-9):.0f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
