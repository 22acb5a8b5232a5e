"""The checker: `lab.check(name, fn)` runs a student's function on fresh inputs and on the
shipped models, and says what is wrong in words a student can act on.

Each run draws its own inputs (random tensors, and sentences of the test split for the
shipped mlm and clm) from a seed it reports, so there is no fixed answer key; a run is
repeated with `check(name, fn, seed=...)`. Values must match at float32 tolerance:
|yours - expected| <= ATOL + RTOL * |expected|. A wrong result is compared with every
classic mistake of lab/mistakes.py that can show in that exercise (the reference with
that one bug, computed on the same inputs), and a match is named with its hint.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from torch import Tensor

from i18n import N_, _
from lab import figures, solutions
from lab.mistakes import EXERCISES, MISTAKES, Mistake, mistakes_in, variant, with_base
from lab.weights import params, random_sentence, shipped
from model.encoding import sinusoidal_encoding as shipped_encoding

ATOL, RTOL = 1e-4, 1e-3  # float32 tolerance
ZERO = 1e-6  # a masked weight must be 0; float noise this small is allowed
TOLERANCE = f"atol {ATOL:g}, rtol {RTOL:g}"
# A report's status: an id, and also its English name (shown with _()).
PASSED, FAILED = N_("passed"), N_("failed")
NOT_WRITTEN, MISSING = N_("not written yet"), N_("missing")


@dataclass
class Report:
    """What `check` found: `passed`, a `message` to act on, and a `figure` (or None)."""

    exercise: str
    status: str  # PASSED | FAILED | NOT_WRITTEN | MISSING
    message: str
    figure: go.Figure | None = None
    mistake: str | None = None  # the name of the classic mistake recognised, if any
    seed: int | None = None  # check(..., seed=seed) repeats the run

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __str__(self) -> str:
        mark = {PASSED: "✓", FAILED: "✗"}.get(self.status, "·")
        text = f"{mark} {self.exercise}: {_(self.status)}: {self.message}"
        if self.status == FAILED and self.seed is not None:
            again = f"lab.check({self.exercise!r}, ..., seed={self.seed})"
            text += "\n  " + _("(seed {seed}: {call} repeats this run)", seed=self.seed, call=again)
        return text

    def _ipython_display_(self) -> None:  # in a notebook: the message, then the picture
        from IPython.display import display

        print(self)
        if self.figure is not None:
            bundle = {
                "application/vnd.plotly.v1+json": json.loads(self.figure.to_json()),
                "text/plain": f"<figure: {self.figure.layout.title.text}>",
            }
            display(bundle, raw=True)


@dataclass
class Case:
    """One call of the student's function and what it must return."""

    label: str  # what it is run on, for the messages
    args: tuple
    want: Any  # a tensor, or (out, weights) for attention
    draw: Callable[[Any], go.Figure] | None = None  # the picture of the student's result
    draw_passed: bool = True  # False: a picture only of a wrong result (a difference)


class Fail(Exception):
    def __init__(self, message: str, mistake: Mistake | None = None) -> None:
        super().__init__(message)
        self.message, self.mistake = message, mistake


class NotWritten(Exception):
    pass


# ---------------------------------------------------------------------------------------
# Running the student's function
# ---------------------------------------------------------------------------------------


def fresh(value: Any) -> Any:
    """A deep copy of tensors in dicts, lists and tuples: what the student's code gets, so
    it cannot change the expected values (or the shipped model)."""
    if isinstance(value, Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(fresh(v) for v in value)
    return value


def _where(error: BaseException) -> str:
    """The line of the student's code that raised, when it is theirs (not torch's)."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [
        f
        for f in frames
        if "site-packages" not in f.filename and not f.filename.startswith(__file__)
    ]
    if not own:
        return ""
    frame = own[-1]
    if frame.line:
        return _("in {function}, line {line}: {code}", function=frame.name, line=frame.lineno,
                 code=frame.line.strip())  # fmt: skip
    return _("in {function}, line {line}", function=frame.name, line=frame.lineno)


def call(fn: Callable, exercise: str, case: Case) -> Any:
    """fn(*case.args) on fresh copies; NotWritten if it raises NotImplementedError, Fail
    with the error and the line for any other exception."""
    try:
        with torch.no_grad():
            return fn(*fresh(case.args))
    except NotImplementedError as error:
        inner = traceback.extract_tb(error.__traceback__)[-1].name
        if inner not in (exercise, fn.__name__):
            raise NotWritten(
                _("it calls {name}, which is not written yet: write {name} first", name=inner)
            ) from None
        raise NotWritten(
            _("write the body of {name} (it raises NotImplementedError)", name=exercise)
        ) from None
    except Exception as error:
        raised, where = type(error).__name__, _where(error)
        if where:
            said = _("it raised {error}: {text} ({where}), on {case}", error=raised, text=error,
                     where=where, case=case.label)  # fmt: skip
        else:
            said = _("it raised {error}: {text}, on {case}", error=raised, text=error,
                     case=case.label)  # fmt: skip
        raise Fail(said) from None


# ---------------------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------------------


def _index(idx: tuple[int, ...] | Tensor) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _first(where: Tensor) -> tuple[int, ...] | None:
    hits = where.nonzero()
    return tuple(int(i) for i in hits[0]) if len(hits) else None


def form(got: Any, want: Tensor, name: str) -> str | None:
    """What is wrong with the type, shape or dtype of `got`, or None."""
    if not isinstance(got, Tensor):
        return _("{name} is a {type}, not a torch tensor", name=name, type=type(got).__name__)
    if got.shape != want.shape:
        return _("{name} has shape {shape}, expected {expected}", name=name,
                 shape=list(got.shape), expected=list(want.shape))  # fmt: skip
    integers = not want.dtype.is_floating_point and want.dtype != torch.bool
    if integers and (got.dtype.is_floating_point or got.dtype == torch.bool):
        return _("{name} is {dtype}, expected integer token ids (torch.long)", name=name,
                 dtype=got.dtype)  # fmt: skip
    if not integers and got.dtype != want.dtype:
        if got.dtype.is_floating_point:
            return _("{name} is {dtype}, expected {expected} (.float() converts it)", name=name,
                     dtype=got.dtype, expected=want.dtype)  # fmt: skip
        return _("{name} is {dtype}, expected {expected}", name=name, dtype=got.dtype,
                 expected=want.dtype)  # fmt: skip
    return None


# Who gives the expected values, as the whole sentence that says a value differs from them.
SOURCES = {
    "reference": N_("{name}{index} is {got} where the reference gives {want}"),
    "shipped": N_("{name}{index} is {got} where the shipped models have {want}"),
    "model": N_("{name}{index} is {got} where the model gives {want}"),
    "mlm": N_("{name}{index} is {got} where the mlm gives {want}"),
}


def values(got: Tensor, want: Tensor, name: str, source: str = "reference") -> str | None:
    """The worst mismatch of `got` against `want` at the tolerance, or None; `source` (a
    key of SOURCES) says who gives `want`."""
    said = SOURCES[source]
    if want.dtype == torch.bool or not want.dtype.is_floating_point:
        idx = _first(got != want)
        if idx is None:
            return None
        return _(said, name=name, index=_index(idx), got=got[idx].item(), want=want[idx].item())
    g, w = got.double(), want.double()
    idx = _first(torch.isnan(g))
    if idx is not None:
        return _("{name}{index} is NaN", name=name, index=_index(idx))
    excess = (g - w).abs() - (ATOL + RTOL * w.abs())
    if (excess <= 0).all():
        return None
    idx = tuple(int(i) for i in np.unravel_index(int(excess.argmax()), tuple(g.shape)))
    got_v, want_v = f"{g[idx].item():.4f}", f"{w[idx].item():.4f}"
    return _(said, name=name, index=_index(idx), got=got_v, want=want_v)


def _kind(t: Tensor) -> str:
    return "bool" if t.dtype == torch.bool else "float" if t.dtype.is_floating_point else "int"


def same(a: Any, b: Any) -> bool:
    """Equal up to the tolerance (NaN equal to NaN), in the same dtype (any integer dtype
    for ids): how a result is matched to a mistake."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.shape != b.shape:
        return False
    if b.dtype.is_floating_point:
        close = torch.allclose(a.double(), b.double(), rtol=RTOL, atol=ATOL, equal_nan=True)
        return a.dtype == b.dtype and bool(close)
    return _kind(a) == _kind(b) and bool(torch.equal(a.to(b.dtype), b))


Results = list[tuple[Case, Any]]  # each case with what the student's function returned


def _gives(fn: Callable, results: Results) -> bool:
    """Whether `fn` returns what the student's function did, on every case."""
    try:
        with torch.no_grad():
            return all(same(got, fn(*fresh(case.args))) for case, got in results)
    except Exception:
        return False


def diagnose(exercise: str, results: Results) -> Mistake | None:
    """The first classic mistake whose buggy reference gives what the student's function
    gave on every case."""
    for mistake in mistakes_in(exercise):
        if _gives(variant(mistake, exercise), results):
            return mistake
    return fit_base(results) if exercise == "sinusoidal_encoding" else None


def fit_base(results: Results) -> Mistake | None:
    """For an encoding right in all but its frequencies: the base they fit (dimension 2
    at position 1 is sin(1 / base^(2/D))), named if every case then matches."""
    for case, got in results:
        T, D = case.args
        if isinstance(got, Tensor) and got.shape == (T, D) and T >= 2 and D >= 4:
            angle = math.atan2(float(got[1, 2]), float(got[1, 3]))
            if 0 < angle < 1:
                base = angle ** (-D / 2)
                if _gives(lambda T, D, base=base: with_base(T, D, base), results):
                    wrong = MISTAKES["wrong_base"]
                    hint = _("your frequencies fit a base of {base}; {hint}",
                             base=format(base, ".4g"), hint=_(wrong.hint))  # fmt: skip
                    return dataclasses.replace(wrong, hint=hint)
    return None


# ---------------------------------------------------------------------------------------
# The exercises
# ---------------------------------------------------------------------------------------


def _randn(g: torch.Generator, *shape: int) -> Tensor:
    return torch.randn(*shape, generator=g) * 2  # scores wide enough to tell a bug apart


def _real(name: str, rng: random.Random, g: torch.Generator):
    """A random test sentence through the shipped `name`: its text, trace and a layer."""
    text = random_sentence(rng)
    return text, shipped(name).trace(text), rng.randrange(shipped(name).cfg.n_layers)


def _t(a: np.ndarray) -> Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _layer_label(name: str, i: int, causal: bool, text: str) -> str:
    """What a case on one layer of a shipped model runs on, for the messages."""
    if causal:
        return _("the {model}'s layer {i} (causal mask), '{text}'", model=name, i=i,
                 text=_short(text))  # fmt: skip
    return _("the {model}'s layer {i} (no mask), '{text}'", model=name, i=i, text=_short(text))


def attention_cases(rng: random.Random, g: torch.Generator) -> list[Case]:
    T, S, Dh = rng.randint(3, 6), rng.randint(7, 9), rng.choice([4, 8, 16])
    q, k, v = _randn(g, 2, 3, T, Dh), _randn(g, 2, 3, S, Dh), _randn(g, 2, 3, S, Dh)
    mask = torch.rand(T, S, generator=g) < 0.6
    mask[torch.arange(T), torch.randint(S, (T,), generator=g)] = True  # a key for each query
    per_batch = torch.stack([mask, mask.flip(-1)])[:, None]  # [2, 1, T, S]
    cases = [
        Case(_("batch [2, 3], T={T} queries, S={S} keys, Dh={Dh}, no mask", T=T, S=S, Dh=Dh),
             (q, k, v, None), solutions.attention(q, k, v)),
        Case(_("batch [2, 3], T={T}, S={S}, a random mask [{T}, {S}]", T=T, S=S),
             (q, k, v, mask), solutions.attention(q, k, v, mask)),
        Case(_("batch [2, 3], T={T}, S={S}, a mask [2, 1, {T}, {S}] (one per sentence)", T=T,
               S=S), (q, k, v, per_batch), solutions.attention(q, k, v, per_batch)),
    ]  # fmt: skip
    for name, causal in (("clm", True), ("mlm", False)):
        text, t, i = _real(name, rng, g)
        lay, n = t.layers[i], len(t.tokens)
        m = solutions.causal_mask(n) if causal else None
        head = rng.randrange(lay.q.shape[0])

        def draw(got, lay=lay, head=head, tokens=t.tokens, name=name, i=i) -> go.Figure:
            return figures.attention_pair(
                got[1][head].numpy(), lay.attention[head], tokens,
                _("the {model}'s layer {i}, head {head} (from 0): your attention and the "
                  "model's", model=name, i=i, head=head),
            )  # fmt: skip

        cases.append(Case(
            _layer_label(name, i, causal, text),
            (_t(lay.q), _t(lay.k), _t(lay.v), m), (_t(lay.z), _t(lay.attention)), draw,
        ))  # fmt: skip
    return cases


def attention_fact(got: Any, case: Case) -> tuple[str | None, str]:
    if not isinstance(got, tuple) or len(got) != 2:
        return _("it returned a {type}, expected a tuple (out, weights)",
                 type=type(got).__name__), ""  # fmt: skip
    (out, weights), (want_out, want_w) = got, case.want
    fact = form(out, want_out, "out") or form(weights, want_w, "weights")
    if fact:
        return fact, _("out is [..., T, Dh] and weights [..., T, S] (S keys, which may differ "
                       "from T)")  # fmt: skip
    idx = _first(torch.isnan(weights))
    if idx is not None:
        return _("{name}{index} is NaN", name="weights", index=_index(idx)), _(
            "a row whose every key is masked gives NaN"
        )
    sums = weights.double().sum(-1)
    idx = _first((sums - 1).abs() > ATOL + RTOL)
    if idx is not None:
        row = _index(idx)[:-1] + ", :]"
        return _("row {i} of the weights (weights{row}) sums to {total}", i=idx[-1], row=row,
                 total=format(sums[idx].item(), ".4f")), _(
            "a softmax over the keys (dim=-1) makes every row sum to 1"
        )  # fmt: skip
    mask = case.args[3]
    if mask is not None:
        idx = _first(~mask.expand_as(weights) & (weights.abs() > ZERO))
        if idx is not None:
            return _("weights{index} is {value} where the mask is False", index=_index(idx),
                     value=format(weights[idx].item(), ".4f")), _(
                "masked weights must be 0: set the scores to -inf where the mask is False, "
                "before the softmax"
            )  # fmt: skip
    return values(weights, want_w, "weights") or values(out, want_out, "out"), ""


def mask_cases(rng: random.Random, g: torch.Generator) -> list[Case]:
    sizes = [1, 2, rng.randint(3, 12), rng.randint(13, 64)]

    def draw(got: Any) -> go.Figure | None:
        return figures.mask_pair(got.numpy(), solutions.causal_mask(len(got)).numpy())

    return [
        Case(f"T={T}", (T,), solutions.causal_mask(T), draw if i == 2 else None)
        for i, T in enumerate(sizes)
    ]


def mask_fact(got: Any, case: Case) -> tuple[str | None, str]:
    fact = form(got, case.want, "mask")
    if (
        fact
        and isinstance(got, Tensor)
        and got.dtype.is_floating_point
        and got.shape == case.want.shape
    ):
        return fact, _(
            "return the bool mask (True where query i may look at key j); attention turns "
            "False into -inf itself"
        )
    if fact:
        return fact, ""
    idx = _first(got != case.want)
    if idx is None:
        return None, ""
    i, j = idx
    if got[idx]:
        return _("mask[{i}, {j}] is True: query {i} would see key {j}, a later token", i=i, j=j), ""
    return _("mask[{i}, {j}] is False: query {i} must see key {j}", i=i, j=j), ""


def encoding_cases(rng: random.Random, g: torch.Generator) -> list[Case]:
    small = (rng.randint(6, 30), 2 * rng.randint(2, 16))
    pe = shipped("clm").module.stack.pos_embed  # the shipped model's own buffer [256, 128]
    T = rng.randint(10, pe.shape[0])

    def draw(got: Any) -> go.Figure:
        return figures.encoding_pair(got.numpy(), shipped_encoding(*small))

    return [
        Case("T=1, D=2", (1, 2), _t(shipped_encoding(1, 2))),
        Case(f"T={small[0]}, D={small[1]}", small, _t(shipped_encoding(*small)), draw),
        Case(_("T={T}, D={D} (the shipped models' own)", T=T, D=pe.shape[1]), (T, pe.shape[1]),
             pe[:T].clone()),
    ]  # fmt: skip


def encoding_fact(got: Any, case: Case) -> tuple[str | None, str]:
    fact = form(got, case.want, "pe")
    if fact:
        return fact, "" if isinstance(got, Tensor) else _("build it with torch")
    return values(got, case.want, "pe", "shipped"), ""


def _model_cases(rng: random.Random, g: torch.Generator, what: str) -> list[Case]:
    """multi_head_attention or layer on one layer of the mlm (no mask) and of the clm
    (causal mask), its input the model's own residual stream for a test sentence."""
    cases = []
    for name, causal in (("mlm", False), ("clm", True)):
        text, t, i = _real(name, rng, g)
        lay = t.layers[i]
        want = _t(lay.attn_out if what == "multi_head_attention" else lay.resid_post)
        mask = solutions.causal_mask(len(t.tokens)) if causal else None

        def draw(got: Any, want=want, tokens=t.tokens) -> go.Figure:
            return figures.difference(got.numpy(), want.numpy(), tokens, what)

        cases.append(Case(
            _layer_label(name, i, causal, text),
            (_t(lay.resid_pre), params(name, layer=i), mask), want, draw, draw_passed=False,
        ))  # fmt: skip
    return cases


def model_fact(got: Any, case: Case) -> tuple[str | None, str]:
    return form(got, case.want, "out") or values(got, case.want, "out", "model"), ""


def encoder_cases(rng: random.Random, g: torch.Generator) -> list[Case]:
    cases = []
    for _n in range(2):
        text = random_sentence(rng)
        t = shipped("mlm").trace(text)
        cases.append(Case(_("the mlm, '{text}' ({n} tokens)", text=_short(text), n=len(t.ids)),
                          (torch.tensor(t.ids), params("mlm")), _t(t.logits)))  # fmt: skip
    return cases


def encoder_fact(got: Any, case: Case) -> tuple[str | None, str]:
    return form(got, case.want, "logits") or values(got, case.want, "logits", "mlm"), ""


def generate_cases(rng: random.Random, g: torch.Generator) -> list[Case]:
    p, cases = params("clm"), []
    while len(cases) < 5:
        ids = shipped("clm").encode(random_sentence(rng)).ids  # [BOS] and the sentence
        if len(ids) < 4:
            continue
        prompt, n = torch.tensor(ids[: rng.randint(3, min(8, len(ids)))]), rng.randint(5, 10)
        words = shipped("clm").decode(prompt.tolist())
        cases.append(Case(_("the clm, prompt '{words}', n={n}", words=words, n=n), (prompt, p, n),
                          solutions.generate(prompt, p, n)))  # fmt: skip
    return cases


def generate_fact(got: Any, case: Case) -> tuple[str | None, str]:
    prompt, p, n = case.args
    if isinstance(got, Tensor) and got.ndim == 1 and len(got) != len(prompt) + n:
        return (_("it returned {n} ids, expected {expected}", n=len(got),
                  expected=len(prompt) + n),
                _("generate returns the prompt's ids followed by the n new ones"))  # fmt: skip
    fact = form(got, case.want, "ids")
    if fact:
        return fact, ""
    if not torch.equal(got[: len(prompt)], prompt):
        return _("the ids do not start with the prompt"), _("keep the prompt and append to it")
    want = case.want
    for j in range(len(prompt), len(got)):
        if got[j] == want[j]:
            continue
        logits = solutions.encoder(got[:j], p, solutions.causal_mask(j))[-1]
        best = logits.max()
        if logits[got[j]] < best - (ATOL + RTOL * best.abs()):  # not a tie at float precision
            tok = shipped("clm").tokens_of([int(got[j]), int(want[j])])
            return (
                _("new token {k} is '{got}' where greedy decoding picks '{want}'",
                  k=j - len(prompt), got=tok[0], want=tok[1]),
                _("pick the most likely token, logits[-1].argmax(), and run the clm again on the "
                  "longer sequence"),
            )  # fmt: skip
        want = solutions.generate(got[: j + 1], p, len(got) - j - 1)  # on from the tie
    return None, ""


CHECKS: dict[str, tuple[Callable, Callable]] = {
    "attention": (attention_cases, attention_fact),
    "causal_mask": (mask_cases, mask_fact),
    "sinusoidal_encoding": (encoding_cases, encoding_fact),
    "multi_head_attention": (lambda r, g: _model_cases(r, g, "multi_head_attention"), model_fact),
    "layer": (lambda r, g: _model_cases(r, g, "layer"), model_fact),
    "encoder": (encoder_cases, encoder_fact),
    "generate": (generate_cases, generate_fact),
}
assert tuple(CHECKS) == EXERCISES


def check(exercise: str, fn: Any, seed: int | None = None) -> Report:
    """Check a student's `fn` for `exercise` (one of EXERCISES) on inputs drawn from
    `seed` (a new one each call when None)."""
    if exercise not in CHECKS:
        raise ValueError(f"no exercise {exercise!r}; the exercises are {', '.join(EXERCISES)}")
    if not callable(fn):
        return Report(exercise, MISSING, _("no function {name} to check", name=exercise))
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # these small tensors run faster on one thread than on several
    try:
        return _check(exercise, fn, seed)
    finally:
        torch.set_num_threads(threads)


def _check(exercise: str, fn: Callable, seed: int) -> Report:
    make, fact_of = CHECKS[exercise]
    rng, g = random.Random(seed), torch.Generator().manual_seed(seed)
    figure, results, failure = None, [], None
    try:
        cases = make(rng, g)
        for case in cases:
            try:
                results.append((case, call(fn, exercise, case)))
            except Fail as fail:
                failure = failure or fail
    except NotWritten as not_written:
        return Report(exercise, NOT_WRITTEN, str(not_written), seed=seed)
    failure = failure or _first_wrong(exercise, results, fact_of)
    for case, got in results:
        wanted = case.draw is not None and (failure is not None or case.draw_passed)
        if figure is None and wanted and _drawable(got, case):
            figure = _try(case.draw, got)
    if failure is not None:
        name = failure.mistake.name if failure.mistake else None
        return Report(exercise, FAILED, failure.message, figure, name, seed)
    labels = "; ".join(case.label for case in cases)
    message = _("{n} cases at {tolerance}: {cases}", n=len(cases), tolerance=TOLERANCE,
                cases=labels)
    return Report(exercise, PASSED, message, figure, seed=seed)


def _first_wrong(exercise: str, results: Results, fact_of: Callable) -> Fail | None:
    """The first case whose result is wrong, as a Fail: the fact, then the hint of the
    mistake that explains every case (or the fact's own advice)."""
    for case, got in results:
        fact, advice = fact_of(got, case)
        if fact is not None:
            mistake = diagnose(exercise, results)
            hint = _(mistake.hint) if mistake else advice
            if hint:
                said = _("{fact}: {hint} (on {case})", fact=fact, hint=hint, case=case.label)
            else:
                said = _("{fact} (on {case})", fact=fact, case=case.label)
            return Fail(said, mistake)
    return None


def _drawable(got: Any, case: Case) -> bool:
    want = case.want[1] if isinstance(case.want, tuple) else case.want
    out = got[1] if isinstance(got, tuple) and len(got) == 2 else got
    return isinstance(out, Tensor) and out.shape == want.shape and out.dtype == want.dtype


def _try(draw: Callable, got: Any) -> go.Figure | None:
    try:
        return draw(got)
    except Exception:
        return None
