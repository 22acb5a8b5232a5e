"""The toy trainer (issue 28): the tasks' data, seeded runs, the budget judged by counting
steps, training lowering the loss, the gate that lets N trainings run at once, the
background runs that stop when nobody watches, and the command line's contract."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from model.fit import Background, Budget, Fit, Gate
from model.masking import bert_masking
from model.toy import HELD_OUT, ToyModel, ToyRun, ToySetup, answer, snapshot_steps

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"layers": 1, "heads": 2, "width": 32}  # quick to train


class FakeClock:
    """Time that moves only when told (by a training step below)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_tasks_give_the_right_answers() -> None:
    x = np.array([[3, 1, 4, 1, 5, 9, 2, 6]])
    assert answer("copy", x).tolist() == [[3, 1, 4, 1, 5, 9, 2, 6]]
    assert answer("reverse", x).tolist() == [[6, 2, 9, 5, 1, 4, 1, 3]]
    assert answer("sort", x).tolist() == [[1, 1, 2, 3, 4, 5, 6, 9]]
    assert answer("histogram", x).tolist() == [[1, 2, 1, 2, 1, 1, 1, 1]]
    rng = np.random.default_rng(0)
    many = rng.integers(10, size=(200, 8))
    assert (answer("reverse", many)[:, ::-1] == many).all(), "reverse really reversed"
    counts = answer("histogram", many)
    for row, count in zip(many, counts, strict=True):  # histogram really counted
        assert [list(row).count(t) for t in row] == list(count)
    with pytest.raises(ValueError, match="unknown task"):
        answer("shuffle", many)


def test_training_never_sees_a_held_out_sequence() -> None:
    run = ToyRun(ToySetup(task="copy", length=4, symbols=4, **SMALL), Budget(steps=1))
    held_out = {row.tobytes() for row in run.test}
    assert len(run.test) == HELD_OUT
    for _ in range(20):  # 4^4 = 256 sequences: most of a batch would be held out if drawn
        x, y = run.batch()
        assert not any(row.tobytes() in held_out for row in x.numpy())
        assert (y == x).all()


def test_the_choices_are_bounded() -> None:
    for bad in ({"layers": 4}, {"heads": 5}, {"width": 256}, {"width": 48, "heads": 5},
                {"width": 64, "heads": 3}, {"positions": "rotary"}, {"task": "add"}):  # fmt: skip
        with pytest.raises(ValueError):
            ToySetup(**bad)


def test_snapshots_are_log_spaced_from_the_untrained_model() -> None:
    steps = snapshot_steps(2000)
    assert steps[:6] == [0, 1, 2, 3, 4, 5] and steps[-1] <= 2000
    assert len(steps) >= 20 and len(snapshot_steps(300)) >= 20
    ratios = np.diff(steps[8:]) / np.array(steps[8:-1])
    assert np.allclose(ratios, 0.3, atol=0.08), "each about 1.3 times the one before"


def test_the_same_setup_and_seed_give_the_same_run() -> None:
    def run(seed: int) -> ToyRun:
        r = ToyRun(ToySetup(task="sort", seed=seed, **SMALL), Budget(steps=25))
        r.train_for(float("inf"))
        return r

    a, b, c = run(3), run(3), run(4)
    assert a.step == b.step == 25
    assert a.fit.losses == b.fit.losses
    assert all(
        torch.equal(p, q) for p, q in zip(a.net.parameters(), b.net.parameters(), strict=True)
    )
    assert [s.step for s in a.snapshots] == [s.step for s in b.snapshots]
    assert all(np.array_equal(s.attention, t.attention) for s, t in
               zip(a.snapshots, b.snapshots, strict=True))  # fmt: skip
    assert a.fit.losses != c.fit.losses, "another seed, another run"


def test_the_time_budget_is_honoured_counting_steps() -> None:
    """1/8 s of (fake) time per step: a 3 s budget is exactly 24 steps, and evaluation
    (which takes no fake time here) is not training time."""
    clock = FakeClock()
    run = ToyRun(ToySetup(task="copy", **SMALL), Budget(seconds=3.0), clock=clock)
    step = run.fit.step

    def timed_step(*args, **kwargs) -> float:
        clock.now += 0.125
        return step(*args, **kwargs)

    run.fit.step = timed_step  # type: ignore[method-assign]
    run.train_for(1.0)
    assert run.step == 8 and not run.finished, "a slice of 1 s is 8 steps"
    run.train_for(60.0)
    assert run.step == 24 and run.ended == "budget"
    assert run.points[-1].step == 24 and run.snapshots[-1].step == 24
    run.train_for(60.0)
    assert run.step == 24, "an ended run does not train on"


def test_a_fixed_number_of_steps_lowers_the_loss() -> None:
    run = ToyRun(ToySetup(task="reverse", **SMALL), Budget(steps=150))
    first = run.points[0].test_loss
    run.train_for(float("inf"))
    assert run.points[-1].test_loss < 0.7 * first
    assert run.points[-1].token_accuracy > run.points[0].token_accuracy + 0.2


def test_without_positions_the_model_sees_a_set() -> None:
    """Permuting the input only permutes the outputs: so it cannot reverse."""
    torch.manual_seed(0)
    net = ToyModel(ToySetup(positions="none")).eval()
    x = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    order = torch.tensor([7, 0, 6, 1, 5, 2, 4, 3])
    with torch.no_grad():
        assert torch.allclose(net(x)[0][:, order], net(x[:, order])[0], atol=1e-5)


def test_a_run_holds_little_memory() -> None:
    run = ToyRun(ToySetup(layers=3, width=128), Budget(steps=3))
    run.train_for(float("inf"))
    assert run.memory_bytes() < 16 * 2**20
    run.release()
    assert run.weight_bytes() == 0 and run.step == 3, "what it showed is kept"


def test_the_gate_lets_the_second_of_two_wait_with_a_limit_of_one() -> None:
    clock = FakeClock()
    gate = Gate(1, lease=5.0, clock=clock)
    assert gate.enter("a") == 0
    assert gate.enter("b") == 1 and gate.enter("c") == 2, "places in line"
    assert gate.enter("a") == 0 and gate.running == 1
    gate.leave("a")
    assert gate.enter("c") == 2, "first come, first served: b is next"
    assert gate.enter("b") == 0 and gate.enter("c") == 1
    clock.now = 4.0
    assert gate.enter("c") == 1
    clock.now = 9.5  # b has not asked for 9.5 s: its lease ran out
    assert not gate.holds("b") and gate.enter("c") == 0


def test_of_two_concurrent_starts_the_second_waits() -> None:
    gate = Gate(1)
    runs = [ToyRun(ToySetup(task="copy", seed=i, **SMALL), Budget(steps=60)) for i in (0, 1)]
    first = Background([runs[0]], gate, "first", slice_s=0.05).start()
    while first.place != 0:
        time.sleep(0.01)
    second = Background([runs[1]], gate, "second", slice_s=0.05).start()
    while second.place < 0:
        time.sleep(0.01)
    places = []
    while not first.ended:
        places.append((second.place, runs[1].step))
        second.watch()
        first.watch()
        time.sleep(0.01)
    assert places and all(p == (1, 0) for p in places), "it waited, first in line, untrained"
    assert second.wait(60) and runs[1].step == 60 and runs[1].ended == "budget"
    assert gate.running == 0


def test_a_run_stops_at_stop_or_when_nobody_watches() -> None:
    gate = Gate(2)
    unwatched = ToyRun(ToySetup(task="copy", **SMALL), Budget(seconds=60))
    Background([unwatched], gate, "gone", slice_s=0.05, lease=0.3).start().wait(30)
    assert unwatched.ended == "left" and unwatched.seconds < 5
    stopped = ToyRun(ToySetup(task="copy", **SMALL), Budget(seconds=60))
    live = Background([stopped], gate, "here", slice_s=0.05).start()
    while stopped.step < 5:
        time.sleep(0.01)
    live.stop()
    assert live.wait(30) and stopped.ended == "stopped" and stopped.seconds < 10


def test_fit_schedules() -> None:
    net = torch.nn.Linear(2, 2)
    fit = Fit(net, 1e-3, warmup=10, decay="inverse_sqrt", settle=100)
    assert fit.lr_at(0.0) == pytest.approx(1e-4)
    fit.step_count = 399
    assert fit.lr_at(0.9) == pytest.approx(5e-4), "1/sqrt(step) after the settle"
    cosine = Fit(net, 1e-3, decay="cosine")
    assert cosine.lr_at(0.5) == pytest.approx(5e-4) and cosine.lr_at(1.0) == 0
    with pytest.raises(ValueError):
        Fit(net, 1e-3, decay="linear")


def test_bert_masking_is_drawn_per_row() -> None:
    rng = np.random.default_rng(0)
    ids = rng.integers(10, 100, size=(300, 40))
    maskable = np.ones(ids.shape, dtype=bool)
    maskable[:, :2] = False  # e.g. [BOS] and a special token
    drawn = bert_masking(ids, maskable, 4, np.arange(10, 100), rng)
    assert (drawn.chosen.sum(axis=1) == 6).all(), "round(15% of 38) per row"
    assert (
        not drawn.chosen[:, :2].any() and (drawn.inputs[~drawn.chosen] == ids[~drawn.chosen]).all()
    )
    masked = (drawn.inputs == 4)[drawn.chosen].mean()
    assert masked == pytest.approx(0.8, abs=0.04)


def test_the_command_line_prints_one_json_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "training.toy", "--task", "reverse", "--positions", "off",
         "--seconds", "1", "--seed", "7", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert {"task", "positions", "steps", "seconds", "accuracy", "token_accuracy", "loss"} <= set(
        out
    )
    assert out["task"] == "reverse" and out["positions"] == "none" and out["steps"] > 0
    assert 1.0 <= out["seconds"] < 2.0 and out["accuracy"] <= 0.05
    bad = subprocess.run([sys.executable, "-m", "training.toy", "--heads", "3"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "heads" in bad.stderr
