"""Training, one step at a time: what training/train.py's loop, training/toy.py and the
"Watch it learn" page all drive (no Streamlit here).

    fit = Fit(net, lr=3e-3)                    # AdamW, gradient clipping, a schedule
    loss = fit.step(inputs, labels, done=0.4)  # one optimizer step; done: share of the budget
    budget = Budget(steps=1000, seconds=30)    # whichever runs out first
    run_steps(fit, batches, budget)            # the closed loop, built from the two

A page drives a few steps per update with `Fit.step`, so the same model can be drawn
between steps. A model here is any module whose forward(inputs) returns (logits, record).

`Gate` admits at most N trainings at once in one server process; the others wait in
line, and a training whose holder stops renewing its place loses it. `Background` trains
runs in a thread once the gate admits them, and stops them when the page that watches them
stops asking (its tab closed or left the page).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

IGNORE = -100  # label of a position without a loss


def token_loss(net: nn.Module, inputs: Tensor, labels: Tensor) -> Tensor:
    """Mean cross-entropy of the logits (B, T, V) against labels (B, T), IGNORE skipped."""
    logits, _ = net(inputs)
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)


@dataclass(frozen=True)
class Budget:
    """Steps or seconds (of training), whichever runs out first; None: no limit of that kind."""

    steps: int | None = None
    seconds: float | None = None

    def done(self, step: int, seconds: float) -> float:
        """The share of the budget spent after `step` steps and `seconds` of training."""
        by_steps = step / self.steps if self.steps is not None else 0.0
        by_time = seconds / self.seconds if self.seconds is not None else 0.0
        return max(by_steps, by_time)


class Fit:
    """A model being trained: AdamW, gradients clipped to norm `clip`, the learning rate
    warmed up over `warmup` steps, then (`decay`) kept, lowered along a cosine to 0 as the
    budget runs out ("cosine"), or lowered as 1/sqrt(step) from step `settle` on
    ("inverse_sqrt", the paper's schedule: it depends on the step alone, so a run is the
    same whatever its budget). `step_count` counts the steps; `losses` keeps their losses."""

    def __init__(
        self,
        net: nn.Module,
        lr: float,
        *,
        warmup: int = 0,
        decay: str = "none",
        settle: int = 200,
        weight_decay: float = 0.01,
        betas: tuple[float, float] = (0.9, 0.98),
        clip: float = 1.0,
        loss: Callable[[nn.Module, Tensor, Tensor], Tensor] = token_loss,
    ) -> None:
        if decay not in ("none", "cosine", "inverse_sqrt"):
            raise ValueError(f"decay must be none, cosine or inverse_sqrt, not {decay!r}")
        self.net, self.lr, self.warmup, self.clip, self.loss = net, lr, warmup, clip, loss
        self.decay, self.settle = decay, settle
        self.optimizer = torch.optim.AdamW(
            net.parameters(), lr=lr, weight_decay=weight_decay, betas=betas
        )
        self.step_count = 0
        self.losses: list[float] = []

    def lr_at(self, done: float) -> float:
        """The learning rate of the next step, `done` of the budget spent."""
        step = self.step_count + 1
        warm = min(1.0, step / self.warmup) if self.warmup else 1.0
        if self.decay == "cosine":
            return self.lr * warm * 0.5 * (1 + math.cos(math.pi * min(done, 1.0)))
        if self.decay == "inverse_sqrt":
            return self.lr * warm * min(1.0, math.sqrt(self.settle / step))
        return self.lr * warm

    def step(self, inputs: Tensor, labels: Tensor, done: float = 0.0) -> float:
        """One optimizer step on a batch; returns its loss (before the step)."""
        self.net.train()
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr_at(done)
        loss = self.loss(self.net, inputs, labels)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.clip:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.clip)
        self.optimizer.step()
        self.step_count += 1
        self.losses.append(loss.item())
        return self.losses[-1]


def run_steps(
    fit: Fit,
    batches: Iterable[tuple[Tensor, Tensor]],
    budget: Budget,
    on_step: Callable[[Fit, float], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Step through `batches` of (inputs, labels) until the budget is spent; `on_step(fit,
    done)` after each step. Returns the seconds it trained."""
    start = clock()
    for inputs, labels in batches:
        done = budget.done(fit.step_count, clock() - start)
        if done >= 1:
            break
        fit.step(inputs, labels, done)
        if on_step is not None:
            on_step(fit, done)
    return clock() - start


class Gate:
    """At most `limit` trainings at once; the others wait in line, first come first served.

    A holder (any hashable: a run's id) asks with `enter`, which admits it or keeps its
    place in line, and renews its lease; it calls `leave` when it is done. A holder that
    has not asked for `lease` seconds (its tab closed, it left the page) loses its slot or
    its place, so a class's abandoned runs never block the server.
    """

    def __init__(self, limit: int, lease: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.limit, self.lease, self.clock = max(1, limit), lease, clock
        self._lock = threading.Lock()
        self._running: dict[Hashable, float] = {}  # holder -> when it last asked
        self._waiting: dict[Hashable, float] = {}  # in order of arrival

    def _expire(self, now: float) -> None:
        for seen in (self._running, self._waiting):
            for who in [w for w, t in seen.items() if now - t > self.lease]:
                del seen[who]

    def enter(self, who: Hashable) -> int:
        """0 when `who` may train now (admitted, or already running), else its place in
        line (1: next). Asking again renews its lease."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            if who in self._running or (
                len(self._running) < self.limit and next(iter(self._waiting), who) == who
            ):
                self._waiting.pop(who, None)
                self._running[who] = now
                return 0
            self._waiting[who] = now
            return list(self._waiting).index(who) + 1

    def holds(self, who: Hashable) -> bool:
        """Whether `who` is running and its lease has not run out."""
        with self._lock:
            self._expire(self.clock())
            return who in self._running

    def leave(self, who: Hashable) -> None:
        """`who` is done (or gives up its place in line)."""
        with self._lock:
            self._running.pop(who, None)
            self._waiting.pop(who, None)

    @property
    def running(self) -> int:
        """How many trainings run now."""
        with self._lock:
            self._expire(self.clock())
            return len(self._running)


class Trainable(Protocol):
    """What `Background` drives: a run that trains a slice at a time (model.toy.ToyRun)."""

    @property
    def finished(self) -> bool: ...

    def train_for(self, seconds: float) -> None: ...

    def stop(self, why: str = "stopped") -> None: ...


class SlicedRun:
    """What a run trained a slice at a time shares (model.toy.ToyRun,
    model.toy_translator.TranslatorRun): how a slice ends, Stop, and letting the model go.
    The run has `ended`, `seconds`, `budget`, `points`, `snapshots`, `net`, `fit`,
    `train_for`, `_point(since)` and `_keep()`."""

    @property
    def step(self) -> int:
        """Steps taken (once released: the last snapshot's)."""
        return self.fit.step_count if self.fit is not None else self.snapshots[-1].step

    @property
    def done(self) -> float:
        """The share of the budget spent."""
        return self.budget.done(self.step, self.seconds)

    @property
    def finished(self) -> bool:
        return bool(self.ended) or self.done >= 1

    def _end_slice(self, since: int) -> None:
        """After a slice of `train_for`: ended by the budget when it is spent, and an ended
        run's last point and snapshot taken at its last step."""
        if self.done >= 1 and not self.ended:
            self.ended = "budget"
        if self.ended and self.points[-1].step != self.step:
            self._point(since)
        if self.ended and self.snapshots[-1].step != self.step:
            self._keep()

    def stop(self, why: str = "stopped") -> None:
        """End the run now (Stop pressed, the tab left the page)."""
        if not self.ended:
            self.ended = why
            self.train_for(0)

    def release(self) -> None:
        """Let the model and its optimizer go (a page keeps only what it shows)."""
        self.net = self.fit = None


class Background:
    """Trains `runs` in a thread of their own once `gate` admits `ticket`, a slice of each
    in turn (side by side), until each is finished; so a page can redraw them while they
    train. It stops them when `stop` is called, or when nobody has `watch`ed them for
    `lease` seconds (the tab closed, or left the page)."""

    def __init__(self, runs: list[Trainable], gate: Gate, ticket: Hashable,
                 slice_s: float = 0.25, lease: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.runs, self.gate, self.ticket = runs, gate, ticket
        self.slice_s, self.lease, self.clock = slice_s, lease, clock
        self.place = -1  # -1 not asked yet; 0 training; n > 0: n-th in line
        self._watched = clock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._train, name="glassbox-train", daemon=True)

    def start(self) -> Background:
        self._thread.start()
        return self

    def watch(self) -> None:
        """Someone still looks at the runs (each redraw of the page calls it)."""
        self._watched = self.clock()

    def stop(self) -> None:
        """End the runs at the next slice (Stop pressed)."""
        self._stop.set()

    @property
    def ended(self) -> bool:
        """The thread is done: every run finished, stopped or left."""
        return self.place >= 0 and not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the runs ended (tests, the command line); whether they did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _why_not(self) -> str:
        """Why the runs must stop now, or "" if they may go on."""
        if self._stop.is_set():
            return "stopped"
        return "left" if self.clock() - self._watched > self.lease else ""

    def _train(self) -> None:
        try:
            while not all(run.finished for run in self.runs):
                why = self._why_not()
                if why:
                    for run in self.runs:
                        run.stop(why)
                    break
                self.place = self.gate.enter(self.ticket)
                if self.place:
                    time.sleep(min(self.slice_s, 0.2))
                    continue
                for run in self.runs:
                    if not run.finished:
                        run.train_for(self.slice_s / len(self.runs))
        finally:
            self.place = max(self.place, 0)
            self.gate.leave(self.ticket)
