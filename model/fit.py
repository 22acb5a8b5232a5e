"""Training, one step at a time: what training/train.py's loop, training/toy.py and the
"Watch it learn" page all drive (no Streamlit here).

    fit = Fit(net, lr=3e-3)                    # AdamW, gradient clipping, a schedule
    loss = fit.step(inputs, labels, done=0.4)  # one optimizer step; done: share of the budget
    budget = Budget(steps=1000, seconds=30)    # whichever runs out first
    run_steps(fit, batches, budget)            # the closed loop, built from the two

A page drives a few steps per update with `Fit.step`, so the same model can be drawn
between steps. A model here is any module whose forward(inputs) returns (logits, record).

`Gate` admits at most N trainings at once in one server process; the others wait in
line, and a training whose holder stops renewing its place (its tab left) loses it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

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
    warmed up over `warmup` steps and, with `decay`, lowered along a cosine to 0 as the
    budget runs out. `step` counts the steps taken; `losses` keeps each step's loss."""

    def __init__(
        self,
        net: nn.Module,
        lr: float,
        *,
        warmup: int = 0,
        decay: bool = False,
        weight_decay: float = 0.01,
        betas: tuple[float, float] = (0.9, 0.98),
        clip: float = 1.0,
        loss: Callable[[nn.Module, Tensor, Tensor], Tensor] = token_loss,
    ) -> None:
        self.net, self.lr, self.warmup, self.decay, self.clip = net, lr, warmup, decay, clip
        self.loss = loss
        self.optimizer = torch.optim.AdamW(
            net.parameters(), lr=lr, weight_decay=weight_decay, betas=betas
        )
        self.step_count = 0
        self.losses: list[float] = []

    def lr_at(self, done: float) -> float:
        """The learning rate of the next step, `done` of the budget spent."""
        warm = min(1.0, (self.step_count + 1) / self.warmup) if self.warmup else 1.0
        cosine = 0.5 * (1 + math.cos(math.pi * min(done, 1.0))) if self.decay else 1.0
        return self.lr * warm * cosine

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
