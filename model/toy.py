"""Toy tasks and the tiny Transformer encoders that learn them in seconds: what "Watch it
learn" trains live and `python -m training.toy` runs from the command line.

A task turns a sequence of T symbols into T answers, one per position:
    copy       output[i] = input[i]
    reverse    output[i] = input[T-1-i]           needs positions: which token is at T-1-i?
    sort       output[i] = the i-th smallest token  needs positions: which rank is i?
    histogram  output[i] = how often input[i] occurs in the sequence   a set is enough

The model is model/transformer.py's own encoder `Stack` (pre-norm, no dropout) with a
linear read-out per position. A run (`ToyRun`) trains it on fresh random sequences, never
on its held-out ones, through model.fit, and keeps what the page shows: the curves, and
snapshots of the model at log-spaced steps from the untrained one on. The same setup and
seed give the same run, step for step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from model.fit import Budget, Fit, SlicedRun
from model.transformer import Config, Stack

TASKS = ("copy", "reverse", "sort", "histogram")
POSITIONS = ("sinusoidal", "learned", "none")
LAYERS, HEADS, WIDTHS = (1, 3), (1, 4), (32, 128)  # the choices' ranges (inclusive)
LENGTHS, SYMBOLS = (4, 12), (4, 16)
MAX_SECONDS = 120.0  # the longest run
HELD_OUT = 512  # test sequences, never trained on
SETTLE = 200  # steps at the full learning rate before it falls as 1/sqrt(step)
EVAL_EVERY = 0.5  # seconds of training between two points of the curves
SNAPSHOT_RATIO = 1.3  # snapshots at steps 0, 1, 2, ... growing by this factor (log-spaced)
_SEEDING = threading.Lock()  # torch's global generator: one seeded model built at a time


def answer(task: str, x: np.ndarray) -> np.ndarray:
    """The right output (B, T) for each input sequence of x (B, T)."""
    if task == "copy":
        return x.copy()
    if task == "reverse":
        return x[:, ::-1].copy()
    if task == "sort":
        return np.sort(x, axis=1)
    if task == "histogram":
        return (x[:, :, None] == x[:, None, :]).sum(axis=2)
    raise ValueError(f"unknown task {task!r}; one of {', '.join(TASKS)}")


def snapshot_steps(last: int, ratio: float = SNAPSHOT_RATIO) -> list[int]:
    """The steps a run keeps a snapshot at, up to `last`: 0, 1, 2, 3, 4, 5, 7, 9, ... each
    about `ratio` (1.3) times the one before."""
    steps, x = [0], 1.0
    while x <= last:
        if round(x) > steps[-1]:
            steps.append(round(x))
        x *= ratio
    return steps


def _within(name: str, value: float, bounds: tuple[float, float]) -> None:
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{name} must be from {bounds[0]} to {bounds[1]}, not {value}")


@dataclass(frozen=True)
class ToySetup:
    """The choices of one run; the defaults are the shipped ones (docs/MODELS.md)."""

    task: str = "reverse"
    positions: str = "sinusoidal"  # "sinusoidal" | "learned" | "none"
    layers: int = 2
    heads: int = 4
    width: int = 64  # D; each head has D / H dimensions
    lr: float = 3e-3
    seed: int = 0
    length: int = 8  # T: tokens per sequence
    symbols: int = 10  # the vocabulary: symbols 0 .. symbols-1
    batch: int = 128

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}; one of {', '.join(TASKS)}")
        if self.positions not in POSITIONS:
            raise ValueError(f"positions must be one of {', '.join(POSITIONS)}")
        for name, bounds in (("layers", LAYERS), ("heads", HEADS), ("width", WIDTHS),
                             ("length", LENGTHS), ("symbols", SYMBOLS)):  # fmt: skip
            _within(name, getattr(self, name), bounds)
        _within("lr", self.lr, (1e-5, 0.1))
        _within("batch", self.batch, (1, 512))
        if self.width % self.heads:
            raise ValueError(f"width {self.width} does not split into {self.heads} heads")

    @property
    def outputs(self) -> int:
        """How many answers a position chooses from: a symbol, or a count 0..T."""
        return self.length + 1 if self.task == "histogram" else self.symbols

    def config(self) -> Config:
        """The encoder's Config (no [PAD]: every symbol, 0 included, is a real token)."""
        return Config(kind="encoder", vocab_size=self.symbols, d_model=self.width,
                      n_heads=self.heads, n_layers=self.layers, d_mlp=4 * self.width,
                      max_len=self.length, positional=self.positions, norm="pre",
                      dropout=0.0, pad_id=-1, tie_embeddings=False)  # fmt: skip


class ToyModel(nn.Module):
    """The encoder stack of model/transformer.py and a read-out: one answer per position."""

    def __init__(self, setup: ToySetup) -> None:
        super().__init__()
        cfg = setup.config()
        self.stack = Stack(cfg, cfg.n_layers, causal=False)
        self.read_out = nn.Linear(cfg.d_model, setup.outputs)

    def forward(self, ids: Tensor):
        """ids (B, T) -> logits (B, T, outputs) and the record of the pass."""
        h, record = self.stack(ids)
        return self.read_out(h), record


@dataclass(frozen=True)
class Point:
    """One point of the curves: the held-out scores after `step` steps."""

    step: int
    seconds: float  # of training so far
    loss: float  # mean training loss since the previous point (the held-out one at step 0)
    test_loss: float  # on the held-out sequences
    accuracy: float  # whole sequences right, on the held-out sequences
    token_accuracy: float  # positions right


@dataclass(frozen=True)
class Snapshot:
    """The model at one step, on the example sequence (one held-out sequence)."""

    step: int
    attention: np.ndarray  # [L, H, T, T] every head's weights
    output: np.ndarray  # [T] its answer at each position
    accuracy: float  # on all held-out sequences
    token_accuracy: float
    loss: float  # held-out loss


@dataclass
class ToyRun(SlicedRun):
    """One training run of a toy model, a slice at a time (`train_for`), with its held-out
    scores, curves and snapshots. `budget` bounds it (steps and/or seconds of training);
    `clock` is the time it is measured by."""

    setup: ToySetup
    budget: Budget = field(default_factory=lambda: Budget(seconds=30.0))
    clock: Callable[[], float] = time.perf_counter
    device: str = "cpu"
    seconds: float = 0.0  # of training so far
    ended: str = ""  # why it ended: "" while it may go on; "budget", "stopped", "left"
    points: list[Point] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.setup
        with _SEEDING:
            torch.manual_seed(s.seed)
            self.net = ToyModel(s).to(self.device)
        self.fit = Fit(self.net, s.lr, warmup=20, decay="inverse_sqrt", settle=SETTLE)
        held_out = np.random.default_rng([s.seed, 1])  # apart from the training stream
        self.test = held_out.integers(s.symbols, size=(HELD_OUT, s.length))
        self.test_answer = answer(s.task, self.test)
        self._test = (torch.from_numpy(self.test).to(self.device),
                      torch.from_numpy(self.test_answer).to(self.device))  # fmt: skip
        self._unseen = {row.tobytes() for row in self.test}
        self._rng = np.random.default_rng([s.seed, 0])
        self._next_snapshot = iter(snapshot_steps(10**7))
        self._snap_at = next(self._next_snapshot)
        self._since_point = 0.0
        self._keep()
        self.latest = self.snapshots[0]  # the model as the last point of the curves saw it

    @property
    def example(self) -> np.ndarray:
        """The sequence the page shows: the first held-out one."""
        return self.test[0]

    @property
    def example_answer(self) -> np.ndarray:
        return self.test_answer[0]

    def batch(self) -> tuple[Tensor, Tensor]:
        """Fresh random sequences (none of the held-out ones) and their answers."""
        s = self.setup
        x = self._rng.integers(s.symbols, size=(s.batch, s.length))
        seen = [i for i, row in enumerate(x) if row.tobytes() in self._unseen]
        while seen:
            x[seen] = self._rng.integers(s.symbols, size=(len(seen), s.length))
            seen = [i for i in seen if x[i].tobytes() in self._unseen]
        y = answer(s.task, x)
        return torch.from_numpy(x).to(self.device), torch.from_numpy(y).to(self.device)

    @torch.no_grad()
    def evaluate(self) -> Snapshot:
        """The model now: its held-out loss and accuracies, and the example's attention and
        output."""
        self.net.eval()
        inputs, labels = self._test
        logits, record = self.net(inputs)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
        right = (logits.argmax(-1) == labels).cpu().numpy()
        attention = torch.stack([rec.self_attn.attention[0] for rec in record.layers])
        return Snapshot(
            self.step,
            attention.cpu().numpy(),
            logits[0].argmax(-1).cpu().numpy(),
            float(right.all(axis=1).mean()),
            float(right.mean()),
            float(loss),
        )

    def _keep(self) -> None:
        """A snapshot now (at step 0, the untrained model, also the curves' first point)."""
        snap = self.evaluate()
        self.snapshots.append(snap)
        if not self.points:
            self.points.append(Point(0, 0.0, snap.loss, snap.loss, snap.accuracy,
                                     snap.token_accuracy))  # fmt: skip
        self._snap_at = next(self._next_snapshot)

    def _point(self, since: int) -> None:
        snap = self.latest = self.evaluate()
        recent = self.fit.losses[since:] or [snap.loss]
        self.points.append(Point(self.step, round(self.seconds, 3), float(np.mean(recent)),
                                 snap.loss, snap.accuracy, snap.token_accuracy))  # fmt: skip

    def train_for(self, seconds: float) -> None:
        """Train for about `seconds` (or until the budget is spent), keeping snapshots at
        their steps and a point of the curves every EVAL_EVERY seconds of training."""
        start = last = self.clock()
        since = self.step
        while not self.finished and self.clock() - start < seconds:
            inputs, labels = self.batch()
            self.fit.step(inputs, labels)
            now = self.clock()
            self.seconds += now - last
            last = now
            if self.step == self._snap_at:
                self._keep()
            if self.seconds - self._since_point >= EVAL_EVERY or self.finished:
                self._point(since)
                since, self._since_point = self.step, self.seconds
            last = self.clock()  # evaluation is not training time
        self._end_slice(since)

    def weight_bytes(self) -> int:
        """The memory the model holds while it trains: weights, gradients and AdamW's two
        moments (4 floats per parameter)."""
        if self.net is None:
            return 0
        return 4 * sum(p.numel() * p.element_size() for p in self.net.parameters())

    def memory_bytes(self) -> int:
        """What the run holds: the model while it trains, the held-out sequences and what
        it keeps (snapshots, points)."""
        kept = sum(s.attention.nbytes + s.output.nbytes for s in self.snapshots)
        return self.weight_bytes() + 3 * self.test.nbytes + kept + 64 * len(self.points)

    def summary(self) -> dict:
        """What `python -m training.toy --json` prints."""
        last = self.points[-1]
        return {"task": self.setup.task, "positions": self.setup.positions,
                "steps": self.step, "seconds": round(self.seconds, 2),
                "steps_per_second": round(self.step / max(self.seconds, 1e-9), 1),
                "accuracy": last.accuracy, "token_accuracy": last.token_accuracy,
                "loss": round(last.test_loss, 4), "train_loss": round(last.loss, 4),
                "held_out": HELD_OUT, "ended": self.ended,
                "setup": asdict(self.setup)}  # fmt: skip
