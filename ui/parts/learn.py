"""The "Watch it learn" page's own parts, which its lecture step shares: the choices, a
live run (this session's own model, never in the shared caches) drawn while it trains,
and its snapshots afterwards; the calibration report the page quotes.

A run trains in a thread of its own (model.fit.Background) while a fragment redraws it
every UPDATE_S seconds; the fragment's redraws are what keeps it going: when they stop (the
tab closed or left the page) the run stops within the lease. At most `trainings_at_once()`
runs train at once in one server process (model.fit.Gate); the others wait, their place in
line shown. PyTorch is imported only when a run starts (the lecture imports this module).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import streamlit as st

import viz
from ui.figures import MAX_CELLS, chart
from ui.show import layer_head
from viz.learning import learning_curve, toy_answer

UPDATE_S = 0.5  # the page redraws a training run this often
BUDGET_S = (5, 120, 30)  # a run's time budget: least, most, default
REPORT = Path(__file__).resolve().parents[2] / "assets" / "toy_report.json"
TRAININGS_ENV = "GLASSBOX_TRAININGS"  # overrides how many runs train at once per server
LIVE = {"cells": MAX_CELLS + 1}  # a live figure changes every update: built, never kept
LIVE_KEY = "toy_live"  # the session's one training: (owner, model.fit.Background)
TASK_WORDS = {
    "copy": "copy: output[i] = input[i]",
    "reverse": "reverse: output[i] = input[T−1−i]",
    "sort": "sort: output[i] = the i-th smallest",
    "histogram": "histogram: output[i] = how often input[i] occurs",
}
WIDTHS, RATES = [32, 48, 64, 96, 128], [1e-3, 3e-3, 1e-2]
POSITION_WORDS = {"sinusoidal": "sinusoidal", "learned": "learned", "none": "none (a set)"}


def trainings_at_once() -> int:
    """How many runs may train at once in this server process: GLASSBOX_TRAININGS, else
    half the cores (one PyTorch thread each; 1 on 2 cores), so the rest serve the pages."""
    if os.environ.get(TRAININGS_ENV, "").isdigit():
        return max(1, int(os.environ[TRAININGS_ENV]))
    return max(1, (os.cpu_count() or 1) // 2)


@st.cache_resource(show_spinner=False)
def gate():  # -> model.fit.Gate, one per server process
    from model.fit import Gate

    return Gate(trainings_at_once())


@st.cache_data(show_spinner=False)
def report() -> dict | None:
    """bench/bench_toy.py's measurements (assets/toy_report.json), None when missing."""
    return json.loads(REPORT.read_text()) if REPORT.is_file() else None


def measured(task: str, positions: str) -> dict | None:
    """The report's CPU run of `task` with positions "on" or "off", if measured."""
    runs = (report() or {}).get("runs", [])
    return next((r for r in runs if r["task"] == task and r.get("device", "cpu") == "cpu"
                 and (r["positions"] != "none") == (positions == "on")), None)  # fmt: skip


def choose(prefix: str, disabled: bool) -> float:
    """The task and the model's choices (widgets keyed `<prefix>_<choice>`); returns the
    time budget in seconds. `setup_of(prefix)` reads the choices back."""
    from model.toy import HEADS, LAYERS, POSITIONS, TASKS

    c1, c2 = st.columns([3, 2])
    c1.radio("Task", TASKS, key=f"{prefix}_task", index=1, format_func=TASK_WORDS.get,
             disabled=disabled)  # fmt: skip
    c2.radio("Positions", POSITIONS, key=f"{prefix}_positions", format_func=POSITION_WORDS.get,
             disabled=disabled)  # fmt: skip
    with st.expander("The model and the run", icon=":material/tune:"):
        a, b, c = st.columns(3)
        a.slider("Layers", *LAYERS, 2, key=f"{prefix}_layers", disabled=disabled)
        b.slider("Heads", *HEADS, 4, key=f"{prefix}_heads", disabled=disabled)
        c.select_slider("Width", WIDTHS, 64, key=f"{prefix}_width", disabled=disabled)
        a.select_slider("Learning rate", RATES, 3e-3, key=f"{prefix}_lr", disabled=disabled)
        b.number_input("Seed", 0, 9999, 0, key=f"{prefix}_seed", disabled=disabled)
        return c.slider("Seconds", *BUDGET_S, key=f"{prefix}_seconds", disabled=disabled,
                        help=f"The run stops after this much training (at most "
                        f"{BUDGET_S[1]} s), or at Stop.")  # fmt: skip


def setup_of(prefix: str):  # -> model.toy.ToySetup; ValueError when the choices do not fit
    """The choices `choose(prefix)` drew, as a run's setup."""
    from model.toy import ToySetup

    ss = st.session_state
    return ToySetup(task=ss.get(f"{prefix}_task", "reverse"),
                    positions=ss.get(f"{prefix}_positions", "sinusoidal"),
                    layers=ss.get(f"{prefix}_layers", 2), heads=ss.get(f"{prefix}_heads", 4),
                    width=ss.get(f"{prefix}_width", 64), lr=ss.get(f"{prefix}_lr", 3e-3),
                    seed=int(ss.get(f"{prefix}_seed", 0) or 0))  # fmt: skip


def start(owner: str, setups: list, seconds: float) -> None:
    """Start training `setups` side by side for `seconds` each, as this session's one
    training (a run it had before is stopped and let go)."""
    import torch

    from model.fit import Background, Budget
    from model.toy import ToyRun

    if "OMP_NUM_THREADS" not in os.environ:  # one PyTorch thread per run, as ui.cache's passes
        torch.set_num_threads(1)
    stop_training()
    steps = st.session_state.get("toy_steps")  # tests: a few steps, not seconds
    budget = Budget(steps=steps, seconds=min(float(seconds), BUDGET_S[1]))
    runs = [ToyRun(setup, budget) for setup in setups]
    ticket = uuid.uuid4().hex  # its own place at the gate: the stopped run leaves its own
    st.session_state[LIVE_KEY] = (owner, Background(runs, gate(), ticket).start())


def start_page(prefix: str) -> None:
    """The Train button's callback: this page's choices, trained for its budget."""
    start(prefix, [setup_of(prefix)], st.session_state.get(f"{prefix}_seconds", BUDGET_S[2]))


def stop_training() -> None:
    """Stop this session's training, if any (the Stop button; a new run)."""
    live = st.session_state.get(LIVE_KEY)
    if live is not None:
        live[1].stop()


def current(owner: str):  # -> model.fit.Background | None
    """This session's training if `owner` (the page or the step) started it; once it has
    ended its models are let go (what it showed is kept)."""
    live = st.session_state.get(LIVE_KEY)
    if live is None or live[0] != owner:
        return None
    if live[1].ended:
        for run in live[1].runs:
            run.release()
    return live[1]


def watch(owner: str, draw: Callable) -> None:
    """Draw this session's training with `draw(background, training)`: every UPDATE_S
    seconds while it trains (a fragment), once when it has ended."""
    live = current(owner)
    if live is not None:
        every = None if live.ended else UPDATE_S
        st.fragment(_watched, run_every=every)(owner, draw, not live.ended)


def _watched(owner: str, draw: Callable, was_training: bool) -> None:
    """One update: the page still watches (the run goes on), then the drawing."""
    live = current(owner)
    if live is None:
        return
    live.watch()
    if was_training and live.ended:  # it ended since the last update: draw it as ended
        st.rerun()
    if not live.ended:
        c1, c2 = st.columns([1, 4], vertical_alignment="center")
        c1.button("Stop", key=f"{owner}_stop", on_click=stop_training, icon=":material/stop:")
        c2.caption(status(live))
    draw(live, not live.ended)


def status(live) -> str:
    """Where the training stands: its place in line, or its step and seconds."""
    if live.place < 0:
        return "Starting…"
    if live.place > 0:
        ahead = live.place - 1
        return (f"Waiting in line: {gate().running} training now on this server (at most "
                f"{gate().limit}), {ahead} waiting before you. It starts by itself.")  # fmt: skip
    run = live.runs[0]
    return (f"Training: step {run.step:,}, {run.seconds:.1f} s of "
            f"{run.budget.seconds:.0f} s.")  # fmt: skip


ENDED = {"budget": "it used its budget", "stopped": "Stop was pressed",
         "left": "the page was left"}  # fmt: skip


def ended_note(run) -> str:
    """Why and when a run ended."""
    return (f"Trained {run.step:,} steps in {run.seconds:.1f} s; it ended because "
            f"{ENDED.get(run.ended, run.ended)}.")  # fmt: skip


def pick_snapshot(key: str, run):  # -> model.toy.Snapshot
    """The slider over a finished run's snapshots, log-spaced from the untrained model."""
    steps = [s.step for s in run.snapshots]
    step = st.select_slider(f"Scrub through the run: {len(steps)} snapshots, from the "
                            "untrained model (step 0) on", steps, value=steps[-1],
                            key=key)  # fmt: skip
    return run.snapshots[steps.index(step)]


def curves(key: str, run, mark: int | None = None) -> None:
    """The run's loss and held-out accuracy, side by side (`mark`: a snapshot's step)."""
    steps = [p.step for p in run.points]
    left, right = st.columns(2)
    with left:
        chart(f"{key}_loss", None, learning_curve,
              {"training loss": (steps, [max(p.loss, 1e-4) for p in run.points]),
               "held-out loss": (steps, [max(p.test_loss, 1e-4) for p in run.points])},
              "loss", "cross-entropy", log_y=True, mark=mark, **LIVE)  # fmt: skip
    with right:
        chart(f"{key}_accuracy", None, learning_curve,
              {"whole sequences right": (steps, [p.accuracy for p in run.points]),
               "tokens right": (steps, [p.token_accuracy for p in run.points])},
              "held-out accuracy", "accuracy", percent=True, mark=mark, **LIVE)  # fmt: skip


def inside(key: str, run, snap) -> None:
    """One snapshot on the example sequence: a head's attention, and the output marked."""
    tokens = [str(int(t)) for t in run.example]
    layer, head, label = layer_head(key, run.setup.layers, run.setup.heads, average=False)
    left, right = st.columns(2)
    with left:
        chart(f"{key}_attention", None, viz.attention_heatmap, snap.attention[layer, head],
              tokens, title=f"attention at step {snap.step:,}, {label}", **LIVE)  # fmt: skip
    with right:
        chart(f"{key}_answer", None, toy_answer, tokens,
              [str(int(t)) for t in snap.output], [str(int(t)) for t in run.example_answer],
              f"its answer at step {snap.step:,}", **LIVE)  # fmt: skip
        st.metric("held-out sequences right", f"{snap.accuracy:.1%}",
                  help="Whole sequences right, of 512 the model never trained on; "
                  f"tokens right: {snap.token_accuracy:.1%}.")  # fmt: skip
