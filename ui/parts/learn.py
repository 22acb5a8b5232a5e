"""The "Watch it learn" page's own parts, which its lecture step shares: the choices, a
live run (this session's own model, never in the shared caches) drawn while it trains,
and its snapshots afterwards; the calibration report the page quotes. Its second part,
"Cross-attention forming", trains a translator the same way (model/toy_translator.py) and
sets its cross-attention beside the shipped translator's.

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

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import N_, _, particle
from ui import cache
from ui.figures import MAX_CELLS, chart
from ui.show import layer_head
from viz.learning import alignment_match, learning_curve, toy_answer, translation_answer

UPDATE_S = 0.5  # the page redraws a training run this often
BUDGET_S = (5, 120, 30)  # a run's time budget: least, most, default
REPORT = Path(__file__).resolve().parents[2] / "assets" / "toy_report.json"
TRANSLATOR_REPORT = REPORT.with_name("toy_translator_report.json")  # python -m training.toy
XATTN = "learn_xattn"  # the cross-attention part: its run's owner and its widgets' prefix
TRAININGS_ENV = "GLASSBOX_TRAININGS"  # overrides how many runs train at once per server
LIVE = {"cells": MAX_CELLS + 1}  # a live figure changes every update: built, never kept
LIVE_KEY = "toy_live"  # the session's one training: (owner, model.fit.Background)
TASK_WORDS = {
    "copy": N_("copy: output[i] = input[i]"),
    "reverse": N_("reverse: output[i] = input[T−1−i]"),
    "sort": N_("sort: output[i] = the i-th smallest"),
    "histogram": N_("histogram: output[i] = how often input[i] occurs"),
}
WIDTHS, RATES = [32, 48, 64, 96, 128], [1e-3, 3e-3, 1e-2]
POSITION_WORDS = {"sinusoidal": N_("sinusoidal"), "learned": N_("learned"),
                  "none": N_("none (a set)")}  # fmt: skip


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
    c1.radio(_("Task"), TASKS, key=f"{prefix}_task", index=1,
             format_func=lambda t: _(TASK_WORDS[t]), disabled=disabled)  # fmt: skip
    c2.radio(_("Positional encoding"), POSITIONS, key=f"{prefix}_positions",
             format_func=lambda p: _(POSITION_WORDS[p]), disabled=disabled)  # fmt: skip
    with st.expander(_("The model and the run"), icon=":material/tune:"):
        a, b, c = st.columns(3)
        a.slider(_("Layers"), *LAYERS, 2, key=f"{prefix}_layers", disabled=disabled)
        b.slider(_("Heads"), *HEADS, 4, key=f"{prefix}_heads", disabled=disabled)
        c.select_slider(_("Width"), WIDTHS, 64, key=f"{prefix}_width", disabled=disabled)
        a.select_slider(_("Learning rate"), RATES, 3e-3, key=f"{prefix}_lr", disabled=disabled)
        b.number_input(_("Seed"), 0, 9999, 0, key=f"{prefix}_seed", disabled=disabled)
        return c.slider(_("Seconds"), *BUDGET_S, key=f"{prefix}_seconds", disabled=disabled,
                        help=_("The run stops after this much training (at most {most} s), "
                               "or at Stop.", most=BUDGET_S[1]))  # fmt: skip


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
    from model.toy import ToyRun

    launch(owner, lambda budget: [ToyRun(setup, budget) for setup in setups], seconds)


def launch(owner: str, runs: Callable, seconds: float) -> None:
    """Train the runs `runs(budget)` builds, as this session's one training (a run it had
    before is stopped first and let go), in a thread once the gate admits them."""
    import torch

    from model.fit import Background, Budget

    if "OMP_NUM_THREADS" not in os.environ:  # one PyTorch thread per run, as ui.cache's passes
        torch.set_num_threads(1)
    stop_training()
    steps = st.session_state.get("toy_steps")  # tests: a few steps, not seconds
    built = runs(Budget(steps=steps, seconds=min(float(seconds), BUDGET_S[1])))
    ticket = uuid.uuid4().hex  # its own place at the gate: the stopped run leaves its own
    st.session_state[LIVE_KEY] = (owner, Background(built, gate(), ticket).start())


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
        c1.button(_("Stop"), key=f"{owner}_stop", on_click=stop_training,
                  icon=":material/stop:")  # fmt: skip
        c2.caption(status(live))
    draw(live, not live.ended)


def status(live) -> str:
    """Where the training stands: its place in line, or its step and seconds."""
    if live.place < 0:
        return _("Starting…")
    if live.place > 0:
        return _("Waiting in line: {running} training now on this server (at most {most}), "
                 "{ahead} waiting before you. It starts by itself.", running=gate().running,
                 most=gate().limit, ahead=live.place - 1)  # fmt: skip
    run = live.runs[0]
    return _("Training: step {step:,}, {seconds:.1f} s of {budget:.0f} s.", step=run.step,
             seconds=run.seconds, budget=run.budget.seconds)  # fmt: skip


ENDED = {"budget": N_("Trained {steps:,} steps in {seconds:.1f} s; it ended because it used "
                      "its budget."),
         "stopped": N_("Trained {steps:,} steps in {seconds:.1f} s; it ended because Stop "
                       "was pressed."),
         "left": N_("Trained {steps:,} steps in {seconds:.1f} s; it ended because the page "
                    "was left.")}  # fmt: skip


def ended_note(run) -> str:
    """Why and when a run ended."""
    return _(ENDED.get(run.ended, ENDED["budget"]), steps=run.step, seconds=run.seconds)


def pick_snapshot(key: str, run):  # -> model.toy.Snapshot (or model.toy_translator's)
    """The slider over a finished run's snapshots, log-spaced from the untrained model."""
    steps = [s.step for s in run.snapshots]
    step = st.select_slider(_("Scrub through the run: {n} snapshots, from the untrained model "
                              "(step 0) on", n=len(steps)), steps, value=steps[-1],
                            key=key)  # fmt: skip
    return run.snapshots[steps.index(step)]


def curves(key: str, run, mark: int | None = None, whole: str | None = None) -> None:
    """The run's loss and held-out accuracy, side by side (`mark`: a snapshot's step;
    `whole`: the name of the exact-match curve, "whole sequences right")."""
    points = list(run.points)  # as they are now: the run's thread appends to them
    steps = [p.step for p in points]
    left, right = st.columns(2)
    with left:
        chart(f"{key}_loss", None, learning_curve,
              {_("training loss"): (steps, [max(p.loss, 1e-4) for p in points]),
               _("held-out loss"): (steps, [max(p.test_loss, 1e-4) for p in points])},
              _("loss"), _("cross-entropy"), log_y=True, mark=mark, **LIVE)  # fmt: skip
    with right:
        chart(f"{key}_accuracy", None, learning_curve,
              {whole or _("whole sequences right"): (steps, [p.accuracy for p in points]),
               _("tokens right"): (steps, [p.token_accuracy for p in points])},
              _("held-out accuracy"), _("accuracy"), percent=True, mark=mark,
              **LIVE)  # fmt: skip


def inside(key: str, run, snap) -> None:
    """One snapshot on the example sequence: a head's attention, and the output marked."""
    tokens = [str(int(t)) for t in run.example]
    layer, head, label = layer_head(key, run.setup.layers, run.setup.heads, average=False)
    left, right = st.columns(2)
    with left:
        chart(f"{key}_attention", None, viz.attention_heatmap, snap.attention[layer, head],
              tokens, title=_("attention at step {step:,}, {head}", step=snap.step,
                              head=label), **LIVE)  # fmt: skip
    with right:
        chart(f"{key}_answer", None, toy_answer, tokens,
              [str(int(t)) for t in snap.output], [str(int(t)) for t in run.example_answer],
              _("its answer at step {step:,}", step=snap.step), **LIVE)  # fmt: skip
        st.metric(_("held-out sequences right"), f"{snap.accuracy:.1%}",
                  help=_("Whole sequences right, of {n} the model never trained on; tokens "
                         "right: {tokens:.1%}.", n=len(run.test),
                         tokens=snap.token_accuracy))  # fmt: skip


# --- Cross-attention forming: a translator trained live (model/toy_translator.py) -----------


@st.cache_data(show_spinner=False)
def translator_report() -> dict | None:
    """`python -m training.toy --translator --report`'s calibration, None when missing."""
    path = TRANSLATOR_REPORT
    return json.loads(path.read_text()) if path.is_file() else None


def start_translator() -> None:
    """The cross-attention part's Train button: a translator from scratch for its budget."""
    from model.toy_translator import MAX_SECONDS, TranslatorRun, TranslatorSetup

    setup = TranslatorSetup(seed=int(st.session_state.get(f"{XATTN}_seed", 0) or 0))
    launch(XATTN, lambda budget: [TranslatorRun(setup, budget)], MAX_SECONDS)


def translator_expected() -> None:
    """What the calibration measured (assets/toy_translator_report.json), in sentences."""
    r = translator_report()
    if r is None:
        st.caption(_("No calibration report yet (`OMP_NUM_THREADS=1 python -m training.toy "
                     "--translator --report assets/toy_translator_report.json` writes "
                     "it)."))  # fmt: skip
        return
    said = [_("Measured on {date} with one thread ({cpus} cores, load average {load}): after "
              "{seconds:.0f} s of training ({steps:,} steps) it translated {accuracy:.0%} of "
              "{n} held-out pairs exactly.", date=r["measured"], cpus=r["cpus"],
              load=r["load_average"], seconds=r["seconds"], steps=r["steps"],
              accuracy=r["accuracy"], n=r["held_out"])]  # fmt: skip
    if r["seconds_to_95"] is not None:
        said.append(_("It got 95% of them right after {seconds:.0f} s ({steps:,} steps).",
                      seconds=r["seconds_to_95"], steps=r["steps_to_95"]))  # fmt: skip
    alike = sum(a["live"] == a["shipped"] for a in r["alignment"])
    said.append(_("At the end, for {alike} of the {n} Korean words of “{sentence}” its last "
                  "layer's cross-attention (heads averaged) read most the English token the "
                  "shipped translator reads most.", alike=alike, n=len(r["alignment"]),
                  sentence=r["sentence"]))  # fmt: skip
    if r["aligned_from_step"] is not None:
        said.append(_("All of them first did at step {step:,}.", step=r["aligned_from_step"]))
    st.caption(" ".join(said))


def shipped_cross(sentence: str, device: str, run) -> np.ndarray | None:
    """The shipped translator's cross-attention [L, H, T, S] on `sentence`, where it writes
    the same Korean tokens as the run's rows (else None)."""
    t = cache.get_trace(sentence, "translate", device)
    same = [str(x) for x in t.tokens[1:]] == run.reference_tokens and [
        str(x) for x in t.encoder.tokens] == run.source_tokens  # fmt: skip
    return np.stack([c.attention for c in t.cross_layers]) if same else None


def cross_part(device: str) -> None:
    """The part "Cross-attention forming": Train, then the live translator drawn while it
    learns and scrubbed after; the shipped translator beside it."""
    from model.toy_translator import MAX_SECONDS, SENTENCE, architecture

    cfg = architecture()
    st.markdown(_(
        "An encoder-decoder with the shipped translator's architecture ({enc} encoder and "
        "{dec} decoder layers, {heads} heads, width {width}) starts untrained and learns the "
        "toy grammar's English → Korean sentences of one and two clauses here, live, in up "
        "to {seconds:.0f} s of training. Watch its cross-attention on “{sentence}” (a "
        "lecture sentence it never trains on) become the alignment the shipped translator "
        "has: Korean puts the verb last, so 간다 reads “go” out of order.",
        enc=cfg.n_layers, dec=cfg.n_decoder_layers, heads=cfg.n_heads, width=cfg.d_model,
        seconds=MAX_SECONDS, sentence=SENTENCE))  # fmt: skip
    live = current(XATTN)
    training = live is not None and not live.ended
    c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
    c1.number_input(_("Seed"), 0, 9999, 0, key=f"{XATTN}_seed", disabled=training)
    c2.button(_("Train"), key=f"{XATTN}_train", type="primary", icon=":material/play_arrow:",
              disabled=training, on_click=start_translator)  # fmt: skip
    if live is None:
        translator_expected()
        st.info(_("Press **Train**: the curves, the cross-attention and the translation update "
                  "twice a second while it learns."), icon="🏋️")  # fmt: skip
        return
    watch(XATTN, lambda live, training: translator_drawn(live, training, device))


def translator_drawn(live, training: bool, device: str) -> None:
    """The translator's run: while it trains, the latest update; after, the snapshot the
    slider picks. Its cross-attention beside the shipped translator's, and how alike."""
    from model.toy_translator import agreement

    run = live.runs[0]
    snap, mark = run.latest, None
    if not training:
        st.success(ended_note(run), icon="🏁")
        snap = pick_snapshot(f"{XATTN}_snapshot", run)
        mark = snap.step
    curves(XATTN, run, mark, whole=_("pairs translated exactly"))
    n_layers, n_heads = snap.cross.shape[:2]
    layer, head, label = layer_head(XATTN, n_layers, n_heads, layer=n_layers - 1)
    mine = analysis.head_pattern(snap.cross[layer], head)
    sentence, rows, keys = run.setup.sentence, run.written, run.source_tokens
    shipped = shipped_cross(sentence, device, run)
    left, right = st.columns(2)
    with left:
        chart(f"{XATTN}_cross", None, viz.attention_heatmap, mine, rows, key_tokens=keys,
              title=_("this run at step {step:,}, {head}", step=snap.step, head=label),
              **LIVE)  # fmt: skip
    with right:
        if shipped is None:
            st.warning(_("The shipped translator translates “{sentence}” otherwise: its map "
                         "has other rows.", sentence=sentence), icon="⚠️")  # fmt: skip
        else:
            theirs = analysis.head_pattern(shipped[layer], head)
            chart(f"{XATTN}_shipped", (sentence, device, layer, head), viz.attention_heatmap,
                  theirs, rows, key_tokens=keys, filename="shipped_cross",
                  title=_("the shipped translator, {head}", head=label))  # fmt: skip
    chart(f"{XATTN}_answer", None, translation_answer, snap.output, run.reference_tokens,
          _("its translation of “{sentence}” at step {step:,}", sentence=sentence,
            step=snap.step), **LIVE)  # fmt: skip
    if shipped is None:
        return
    alike = agreement(mine, theirs)
    words = run.reference_tokens  # the rows but the last, which writes [EOS]
    chart(f"{XATTN}_match", None, alignment_match, words,
          [keys[i] for i in mine[: len(words)].argmax(-1)],
          [keys[i] for i in theirs[: len(words)].argmax(-1)],
          _("the English token each Korean word reads most, {head}", head=label),
          **LIVE)  # fmt: skip
    st.caption(_(
        "In both maps each row is one step of the decoder, named by the Korean token it "
        "writes (it reads the grammar's translation, {reference}, so far), and each column "
        "an English token it reads. At "
        "step {step:,}, for {alike} of the {n} Korean words this run reads most the English "
        "token the shipped translator reads most ({head}). Two separately trained models "
        "need not number their heads alike: the heads' average compares them best.",
        reference=particle(run.reference, "을/를"), step=snap.step, alike=sum(alike), n=len(alike),
        head=label))  # fmt: skip
