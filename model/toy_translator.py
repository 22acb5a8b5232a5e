"""A translator trained live from scratch: "Watch it learn"'s cross-attention forming, and
`python -m training.toy --translator`.

The model is the shipped translator's architecture (assets/models/translate/config.json:
model/transformer.py's `EncoderDecoder`, 3 encoder and 3 decoder layers, 4 heads, D = 128)
without dropout, untrained. It learns the English -> Korean grammar's one- and two-clause
pairs (model/translation_grammar.py's training split) with teacher forcing, through
model.fit, a slice at a time like the toy tasks (model/toy.py's `ToyRun`; the same
`Background` and `Gate` drive both). Held-out pairs of the grammar's test split measure
it: exact match of its greedy translations. Snapshots at log-spaced steps, from the
untrained model on, keep the cross-attention of every decoder layer and head on one test
sentence (the lecture's "i go to school", never trained on) teacher-forced on the grammar's
translation, and its greedy translation then. The same setup and seed give the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from torch import Tensor, nn

from model.checkpoint import load_config
from model.examples import TRANSLATION_PROBES
from model.fit import Budget, Fit, SlicedRun
from model.tokenizer import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, load_tokenizer
from model.toy import _SEEDING, snapshot_steps
from model.transformer import Config, EncoderDecoder
from model.translation_grammar import make_splits, read_lexicon, rule_translation

SHIPPED = Path(__file__).resolve().parent.parent / "assets" / "models" / "translate"
SENTENCE = TRANSLATION_PROBES[0]  # "i go to school": a lecture probe, held out of every split
MAX_SECONDS = 120.0  # the budget the calibration measured it learns in (docs/MODELS.md)
HELD_OUT_PER_COUNT = 25  # test pairs of each clause count the accuracy is measured on
EVAL_EVERY = 0.5  # seconds of training between two points of the curves, at least (and at
# least as long as the last point took to measure: measuring never takes most of the time)
NEVER = [i for i in range(len(SPECIAL_TOKENS)) if i != EOS_ID]  # never written
SNAPSHOT_RATIO = 1.2  # snapshots at steps 0, 1, 2, ... growing by this factor: at least 20
# in the 100 steps a busy server may give a run


def architecture() -> Config:
    """The shipped translator's config, without dropout (a live run is short, and its
    steps then depend on the seed alone)."""
    return replace(load_config(SHIPPED), dropout=0.0)


@cache
def tokenizer() -> Tokenizer:
    """The shipped translator's word-level tokenizer (both languages)."""
    return load_tokenizer(SHIPPED / "tokenizer.json")


@cache
def grammar_translation(english: str) -> str:
    """The grammar's own Korean for a sentence of its clauses."""
    return rule_translation(read_lexicon(), english)


@dataclass(frozen=True)
class Pairs:
    """A set of pairs as right-padded ids: source [BOS] english [EOS] (N, S), target [BOS]
    korean [EOS] (N, T), and their texts."""

    src: Tensor
    tgt: Tensor
    english: tuple[str, ...]
    korean: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.english)


def as_ids(pairs: list[tuple[str, str, int]]) -> Pairs:
    """Pairs of the grammar (english, korean, clauses) as padded ids."""
    tok = tokenizer()
    rows = []
    for text in ([p[0] for p in pairs], [p[1] for p in pairs]):
        ids = [[BOS_ID, *e.ids, EOS_ID] for e in tok.encode_batch(text, add_special_tokens=False)]
        width = max(len(r) for r in ids)
        rows.append(torch.tensor([r + [PAD_ID] * (width - len(r)) for r in ids]))
    return Pairs(rows[0], rows[1], tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))


@cache
def data(max_clauses: int = 2) -> dict[str, Pairs]:
    """The grammar's sentences of 1..max_clauses clauses: "train" (its training split) and
    "test" (the first HELD_OUT_PER_COUNT of each count of its test split). Read-only, one
    copy per process: the data, never a model."""
    splits = make_splits(read_lexicon(), counts=range(1, max_clauses + 1))
    test = [p for n in range(1, max_clauses + 1)
            for p in [q for q in splits["test"] if q[2] == n][:HELD_OUT_PER_COUNT]]  # fmt: skip
    return {"train": as_ids(splits["train"]), "test": as_ids(test)}


def trimmed(ids: Tensor) -> Tensor:
    """Padded ids (B, T) without the columns that are [PAD] in every row."""
    return ids[:, : int((ids != PAD_ID).sum(1).max())]


def pair_loss(net: nn.Module, src: Tensor, tgt: Tensor) -> Tensor:
    """Teacher forcing: the decoder reads tgt[:, :-1] and predicts tgt[:, 1:] ([PAD] not
    scored). Mean cross-entropy per target token."""
    logits, _ = net(src, tgt[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=PAD_ID)


@torch.no_grad()
def greedy(net: EncoderDecoder, src: Tensor, max_new: int) -> list[list[int]]:
    """Greedy translations of sources (B, S) as the shipped translator decodes (no special
    token but [EOS] written): ids up to [EOS] (dropped), at most `max_new`."""
    never = torch.tensor(NEVER, device=src.device)
    tokens = torch.full((src.size(0), 1), BOS_ID, device=src.device)
    memory, _ = net.encoder(src)
    for _ in range(max_new):
        h, _ = net.decoder(tokens, memory=memory, memory_ids=src)
        logits = net.unembed(h[:, -1]).index_fill(-1, never, float("-inf"))
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
        if (tokens == EOS_ID).any(dim=1).all():
            break
    return [row[: row.index(EOS_ID)] if EOS_ID in row else row for row in tokens[:, 1:].tolist()]


def agreement(live: np.ndarray, shipped: np.ndarray) -> list[bool]:
    """For each Korean word written (a row of two [T, S] cross-attention maps of the same
    pair, but the last, which writes [EOS]), whether the two models attend most to the same
    source token."""
    if live.shape != shipped.shape:
        raise ValueError(f"{live.shape} and {shipped.shape}: not the same pair")
    pairs = zip(live[:-1].argmax(-1), shipped[:-1].argmax(-1), strict=True)
    return [bool(a == b) for a, b in pairs]


@dataclass(frozen=True)
class TranslatorSetup:
    """The choices of one run; the defaults are the calibrated ones (docs/MODELS.md)."""

    seed: int = 0
    lr: float = 1e-3
    batch: int = 64
    warmup: int = 100  # steps to the full learning rate
    settle: int = 300  # steps at it, before it falls as 1/sqrt(step)
    max_clauses: int = 2
    sentence: str = SENTENCE

    def __post_init__(self) -> None:
        if not 1 <= self.max_clauses <= 2:
            raise ValueError(f"max_clauses must be 1 or 2, not {self.max_clauses}")
        if not 1e-5 <= self.lr <= 1e-2 or not 1 <= self.batch <= 512:
            raise ValueError("lr must be from 1e-5 to 1e-2 and batch from 1 to 512")


@dataclass(frozen=True)
class Point:
    """One point of the curves: the held-out scores after `step` steps."""

    step: int
    seconds: float  # of training so far
    loss: float  # mean training loss since the previous point (the held-out one at step 0)
    test_loss: float  # teacher-forced, on the held-out pairs
    accuracy: float  # held-out pairs translated exactly (greedy)
    token_accuracy: float  # tokens right at their place


@dataclass(frozen=True)
class Snapshot:
    """The model at one step, on the test sentence."""

    step: int
    cross: np.ndarray  # [L, H, T, S] every decoder layer's cross-attention, teacher-forced
    output: list[str]  # its greedy translation, token by token
    loss: float  # held-out loss (teacher-forced; the exact match is the curves' alone)


@dataclass
class TranslatorRun(SlicedRun):
    """One training run of the live translator, a slice at a time (`train_for`), with its
    held-out scores, curves and snapshots: what model.fit.Background drives."""

    setup: TranslatorSetup = field(default_factory=TranslatorSetup)
    budget: Budget = field(default_factory=lambda: Budget(seconds=MAX_SECONDS))
    clock: Callable[[], float] = time.perf_counter
    device: str = "cpu"
    seconds: float = 0.0
    ended: str = ""  # "" while it may go on; "budget", "stopped", "left"
    points: list[Point] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.setup
        sets = data(s.max_clauses)
        self.train, self.test = sets["train"], sets["test"]
        if s.sentence in self.train.english:
            raise ValueError(f"{s.sentence!r} is a training sentence: pick a held-out one")
        self.reference = grammar_translation(s.sentence)
        pair = as_ids([(s.sentence, self.reference, 1)])
        self._pair = pair.src.to(self.device), pair.tgt.to(self.device)
        tok = tokenizer()
        self.source_tokens = [tok.id_to_token(i) for i in pair.src[0].tolist()]
        self.reference_tokens = [tok.id_to_token(i) for i in pair.tgt[0, 1:-1].tolist()]
        self.written = [*self.reference_tokens, "[EOS]"]  # the row of each decoder step
        self._max_new = self.test.tgt.size(1) - 1  # the longest answer and its [EOS]
        with _SEEDING:
            torch.manual_seed(s.seed)
            self.net = EncoderDecoder(architecture()).to(self.device)
        self.fit = Fit(self.net, s.lr, warmup=s.warmup, decay="inverse_sqrt", settle=s.settle,
                       loss=pair_loss)  # fmt: skip
        self._rng = np.random.default_rng(s.seed)
        self._next_snapshot = iter(snapshot_steps(10**7, SNAPSHOT_RATIO))
        self._snap_at = next(self._next_snapshot)
        self._since_point = self._measuring = 0.0  # seconds: the last point took to measure
        self._keep()

    def batch(self) -> tuple[Tensor, Tensor]:
        """A random batch of training pairs (drawn with replacement): source and target."""
        rows = torch.from_numpy(self._rng.integers(len(self.train), size=self.setup.batch))
        return (trimmed(self.train.src[rows]).to(self.device),
                trimmed(self.train.tgt[rows]).to(self.device))  # fmt: skip

    @torch.no_grad()
    def evaluate(self) -> Snapshot:
        """The model now on the test sentence (its cross-attention and greedy translation),
        with the held-out loss."""
        self.net.eval()
        loss = float(pair_loss(self.net, self.test.src.to(self.device),
                               self.test.tgt.to(self.device)))  # fmt: skip
        src, tgt = self._pair
        _, record = self.net(src, tgt[:, :-1])
        cross = torch.stack([layer.cross_attn.attention[0] for layer in record.layers])
        output = greedy(self.net, src, len(self.written) + 4)[0]
        tok = tokenizer()
        return Snapshot(self.step, cross.cpu().numpy(), [tok.id_to_token(i) for i in output],
                        loss)  # fmt: skip

    @torch.no_grad()
    def accuracy(self) -> tuple[float, float]:
        """The held-out pairs' greedy translations: the share exactly right, and the share
        of tokens right at their place (over the longer of output and answer)."""
        self.net.eval()
        said = greedy(self.net, self.test.src.to(self.device), self._max_new)
        exact = hits = slots = 0
        for out, row in zip(said, self.test.tgt[:, 1:].tolist(), strict=True):
            right = row[: row.index(EOS_ID)]
            exact += out == right
            hits += sum(a == b for a, b in zip(out, right, strict=False))
            slots += max(len(out), len(right))
        return exact / len(said), hits / max(slots, 1)

    def _keep(self) -> None:
        snap = self.latest = self.evaluate()
        self.snapshots.append(snap)
        if not self.points:
            self.points.append(Point(0, 0.0, snap.loss, snap.loss, *self.accuracy()))
        self._snap_at = next(self._next_snapshot)

    def _point(self, since: int) -> None:
        began = self.clock()
        snap = self.latest = self.evaluate()
        recent = self.fit.losses[since:] or [snap.loss]
        self.points.append(Point(self.step, round(self.seconds, 3), float(np.mean(recent)),
                                 snap.loss, *self.accuracy()))  # fmt: skip
        self._measuring = self.clock() - began

    def train_for(self, seconds: float) -> None:
        """Train for about `seconds` (or until the budget is spent), keeping snapshots at
        their steps and a point of the curves every EVAL_EVERY seconds of training;
        evaluating is not training time."""
        start = last = self.clock()
        since = self.step
        while not self.finished and self.clock() - start < seconds:
            self.fit.step(*self.batch())
            now = self.clock()
            self.seconds += now - last
            if self.step == self._snap_at:
                self._keep()
            if self.seconds - self._since_point >= max(EVAL_EVERY, self._measuring) or (
                self.finished
            ):
                self._point(since)
                since, self._since_point = self.step, self.seconds
            last = self.clock()
        self._end_slice(since)

    def memory_bytes(self) -> int:
        """What the run holds of its own: while it trains the weights, gradients and AdamW's
        two moments (4 floats per parameter); the snapshots and points (the data are one
        read-only copy per process)."""
        weights = 0 if self.net is None else 4 * sum(
            p.numel() * p.element_size() for p in self.net.parameters())  # fmt: skip
        kept = sum(s.cross.nbytes + 16 * len(s.output) for s in self.snapshots)
        return weights + kept + 64 * len(self.points)

    def summary(self) -> dict:
        """What `python -m training.toy --translator --json` prints."""
        last, snap = self.points[-1], self.snapshots[-1]
        return {"task": "translate", "steps": self.step, "seconds": round(self.seconds, 2),
                "steps_per_second": round(self.step / max(self.seconds, 1e-9), 1),
                "accuracy": last.accuracy, "token_accuracy": last.token_accuracy,
                "loss": round(last.test_loss, 4), "train_loss": round(last.loss, 4),
                "held_out": len(self.test), "train_pairs": len(self.train),
                "sentence": self.setup.sentence, "reference": self.reference,
                "output": " ".join(snap.output), "ended": self.ended,
                "snapshots": len(self.snapshots), "setup": asdict(self.setup)}  # fmt: skip
