"""Hugging Face adapter: `python bench/bench_hf.py [--models ...] [--repeats 5] [--threads 1]`.

For tiny random models (built in a temporary folder) and the packaged real ones when they
are installed (requirements-extra.txt: minilm, smollm2), at 16, 128 and 512 tokens (as many
as the model reads): the median time of the plain transformers call with
`output_attentions=True` on the same ids and of the adapter's `trace_ids` (hooks, the
scores kept, rotary Q/K recomputed, everything copied out as numpy), and their ratio (goal:
at most 1.2x). Times are CPU time of this process (`--clock wall` for wall time): on a
machine shared with other jobs wall time swings with their load, CPU time much less; with
one thread on a quiet machine the two agree. Then each
model's load time and the process's memory (RSS) after loading it and at its peak.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import model  # noqa: E402

TINY = ("bert", "gpt2", "llama")
WORDS = "the researcher asked the assistant to run the experiment again near the river bank"


def rss_mb() -> float:
    """The process's resident memory now, in MB (Linux /proc; else the peak)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return peak_mb()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ids_of(m: model.Model, n: int) -> list[int]:
    """n token ids of a long plain text, as the model's tokenizer reads it."""
    text = " ".join([WORDS] * (n // 4 + 8))
    return m.encode(text).ids[:n]


def medians_ms(fns: list, repeats: int, clock=time.process_time) -> list[float]:  # noqa: ANN001
    """Median time of each function, calls interleaved so noise hits all alike."""
    for fn in fns:  # warm up
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times, strict=True):
            start = clock()
            fn()
            out.append(clock() - start)
    return [statistics.median(t) * 1000 for t in times]


def plain(m: model.Model, ids: list[int]):
    """transformers' own forward pass with output_attentions, nothing recorded."""
    with torch.inference_mode():
        return m.module(input_ids=torch.tensor([ids], device=m.device), output_attentions=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python bench/bench_hf.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--models", nargs="*", default=None,
        help="catalogue names or folders (default: tiny bert, gpt2, llama and the packaged "
        "models that are installed)",
    )  # fmt: skip
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per cell")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    start = time.perf_counter()
    import transformers  # its import time is reported apart from the loads

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"threads {torch.get_num_threads()}; import transformers "
          f"{time.perf_counter() - start:.1f} s")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        names: list[str | Path] = list(args.models or [])
        if args.models is None:
            from tests.hf_models import save

            names = [save(Path(tmp) / f"tiny-{f}", f) for f in TINY]
            names += list(model.registry.packaged())
        rows, loads = [], []
        for name in names:
            before = rss_mb()
            start = time.perf_counter()
            m = model.load(name, "cpu")
            seconds = time.perf_counter() - start
            after = rss_mb()
            label = Path(str(name)).name
            shape = f"{len(m.stack)} x {m.n_heads}"
            for n in args.tokens:
                if n > m.max_len:
                    continue
                ids = ids_of(m, n)
                base, traced = medians_ms(
                    [lambda m=m, ids=ids: plain(m, ids), lambda m=m, ids=ids: m.trace_ids(ids)],
                    args.repeats, clock,
                )  # fmt: skip
                rows.append(f"| {label} | {shape} | {len(ids)} | {base:.1f} | {traced:.1f} | "
                            f"{traced / base:.2f} |")  # fmt: skip
            loads.append(f"| {label} | {shape} | {seconds:.1f} | {after - before:.0f} | "
                         f"{after:.0f} | {peak_mb():.0f} |")  # fmt: skip
            del m
    print(f"\n| model | layers x heads | tokens | plain call ({args.clock}, ms) | "
          f"trace ({args.clock}, ms) | trace / plain |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    print("\n| model | layers x heads | load (s) | RSS added by the load (MB) | RSS after (MB) "
          "| peak RSS so far (MB) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    print("\n".join(loads))


if __name__ == "__main__":
    main()
