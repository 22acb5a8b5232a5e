"""Caches: one model per (name, device) for every session, one trace per (text, model,
device, options), and the small computations the pages repeat.

Every cached forward pass takes the pass's `model.RunOptions` (positions, heads knocked out,
a patch) as part of its key, so an experiment never serves a clean run's numbers.

Cache keys are strings, numbers, tuples and small frozen dataclasses only: a model never
enters a key (`st.cache_data` cannot hash tensors). Everything cached with `cache_data`
comes back as numpy or plain Python, a fresh copy per call. A trace is big and read by
every part of a page: it is kept once for every session (`st.cache_resource`, not copied
each time it is asked for) with its arrays read-only (`read_only`).

What is cached here holds no sentence a person reads: a cache is shared by every session,
in either language. Text in a language is added after the cache (the tokens' hovers:
`labelled`), or the language is part of the key (ui/figures.py).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import streamlit as st
from tokenizers import Tokenizer

import model
from i18n import _
from model import (
    CLEAN,
    Attribution,
    Encoded,
    Model,
    ModelInfo,
    RunOptions,
    Sampling,
    Trace,
    Translation,
)
from model.tokenizer import Reading, encode_text, reading_of
from model.trace import load_extras, load_npz
from ui.registry import PageSpec
from ui.show import labelled, labelled_tokens
from ui.workarounds import CONTEXT_LOGGER, in_a_server

# The benchmark's record of the model work a new input causes (bench/bench_browser.py: the
# server's floor is that work plus a trivial page's run). Where GLASSBOX_MODEL_LOG names a
# file, each model computation below that runs (a cache miss) appends its CPU time in
# seconds (the thread's: not the time it waited for the interpreter lock or a core), a line
# each; nested ones count once. Unset (always, but in the benchmark): nothing.
MODEL_LOG = os.environ.get("GLASSBOX_MODEL_LOG")
T = TypeVar("T")
_depth = threading.local()


# What a cache key may hold: its text (repr) names it, which holds only for values whose repr
# writes out all they are (no "<object at 0x...>").
_KEY_TYPES = (str, int, float, bool, bytes, type(None))


def key_text(value: object) -> str:
    """`value` (strings, numbers, bytes, None, and tuples and frozen dataclasses of them;
    numpy numbers as Python's) as the text that names it in a cache. A cached call keyed by
    one string cost 0.03 ms; by a tuple of a sentence's numpy token ids, 1.2 ms."""
    return repr(_plain_key(value))


def _plain_key(value: object) -> object:
    if isinstance(value, tuple):
        return tuple(_plain_key(item) for item in value)
    if isinstance(value, np.generic):
        return value.item()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _plain_key(getattr(value, f.name))
    elif not isinstance(value, _KEY_TYPES):
        raise TypeError(f"a cache key cannot hold a {type(value).__name__}")
    return value


# The cached functions' arguments that Streamlit would hash item by item, hashed as their
# text (st.cache_data's and st.cache_resource's hash_funcs).
KEYS = {tuple: key_text, RunOptions: key_text, Sampling: key_text}


def model_work(fn: Callable[..., T]) -> Callable[..., T]:
    """Mark `fn` (under its cache decorator) as a model's work: timed into MODEL_LOG."""
    if not MODEL_LOG:
        return fn

    @functools.wraps(fn)
    def timed_work(*args: object, **kwargs: object) -> T:
        depth = getattr(_depth, "n", 0)
        _depth.n, start = depth + 1, time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _depth.n = depth
            if depth == 0:
                with open(MODEL_LOG, "a", encoding="utf-8") as log:
                    log.write(f"{time.thread_time() - start:.6f}\n")

    return timed_work


_catalogue: tuple[tuple, dict[str, ModelInfo]] | None = None


def _catalogue_source() -> tuple:
    """What the catalogue is read from, as a key: the models folder's and models.toml's
    modification times and the registered models (stat calls, not reading every config)."""
    from model import registry

    toml = Path(os.environ.get("GLASSBOX_MODELS") or registry.MODELS_TOML)
    stamps = tuple((p.stat().st_mtime_ns, p.stat().st_size) if p.exists() else None
                   for p in (registry.MODELS_DIR, toml))  # fmt: skip
    return str(toml), stamps, tuple(registry._registered.items())


def catalogue() -> dict[str, ModelInfo]:
    """Every model the app offers (read from the checkpoints' configs, no weights), read
    again when a model folder is added or removed, models.toml changes or a model is
    registered: reading it took 0.7 ms, and the lecture steps and the sidebar ask every run."""
    global _catalogue
    source, kept = _catalogue_source(), _catalogue
    if kept is None or kept[0] != source:
        kept = _catalogue = (source, model.catalogue())
    return dict(kept[1])


def models_for(page: PageSpec) -> list[str]:
    """The names of the models that can serve `page`, in catalogue order."""
    return [name for name, info in catalogue().items() if page.serves(info)]


@st.cache_resource(show_spinner=False, max_entries=16)
def _reader(name: str) -> tuple[Tokenizer, Reading, int, bool] | None:
    """How model `name` reads text, from its checkpoint folder without its weights or
    PyTorch: (tokenizer, reading, context, [EOS] at the end). None for a model not of ours
    (Hugging Face's read text their own way) or without a tokenizer (vision)."""
    info = catalogue().get(name)
    if info is None or info.hf or info.kind not in ("encoder", "decoder"):
        return None
    path = info.folder / "tokenizer.json"
    if not path.is_file():
        return None
    config = json.loads((info.folder / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(path))
    return tokenizer, reading_of(tokenizer), int(config["max_len"]), info.kind == "encoder"


def text_tokens(text: str, name: str) -> Encoded | None:
    """`text` as model `name` reads it (model.text.TextModel.encode), computed without the
    model: a first page shows the tokens while PyTorch and the model load. None when the
    model reads text otherwise (`_reader`) or the text is blank."""
    reader = _reader(name=name)
    if reader is None or not text.strip():
        return None
    tokenizer, reading, max_len, eos = reader
    enc = encode_text(tokenizer, reading, text, max_len, eos)
    return dataclasses.replace(
        enc, tokens=labelled_tokens(enc.tokens, enc.raw_tokens, enc.fragment_of)
    )


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _one_thread() -> None:
    """One PyTorch thread per forward pass unless OMP_NUM_THREADS says otherwise: the
    shipped models are small, and a second thread made their traces 2-10x slower whenever
    the other core was busy (README, Benchmarks); sessions run side by side instead."""
    if "OMP_NUM_THREADS" not in os.environ:
        import torch

        torch.set_num_threads(1)


def torch_ready() -> bool:
    """Whether PyTorch is imported in this process already (asking it then costs nothing)."""
    return "torch" in sys.modules


SHIPPED_TRACE = model.MODELS_DIR.parent / "default_trace.npz"


@st.cache_resource(show_spinner=False, max_entries=1)
def _shipped() -> tuple[Trace, dict[str, str], dict[str, np.ndarray]] | None:
    """assets/default_trace.npz (the trace, its metadata, its tokens' neighbours) when it
    was written from the checkpoint shipped now."""
    if not SHIPPED_TRACE.is_file():
        return None
    trace, meta = load_npz(SHIPPED_TRACE)
    weights = model.MODELS_DIR / meta.get("model", "") / "model.safetensors"
    if not weights.is_file() or hashlib.sha256(weights.read_bytes()).hexdigest() != meta.get(
        "sha256"
    ):
        return None
    return read_only(trace), meta, load_extras(SHIPPED_TRACE)


def shipped_trace(sentence: str, name: str) -> tuple[Trace, tuple[str, ...]] | None:
    """The default sentence's CPU trace through the first model, computed ahead of time
    (`python -m training.default_trace`), and that model's notes; None for anything else.
    The first page draws from it while PyTorch and the model load."""
    found = _shipped()
    if found is None or (found[1]["sentence"], found[1]["model"]) != (sentence, name):
        return None
    notes = tuple(n for n in found[1].get("notes", "").split("\n") if n)
    return labelled(found[0]), notes


def shipped_neighbours(name: str, token_id: int, k: int) -> tuple[list, np.ndarray] | None:
    """`neighbours` of a token of the default sentence on the CPU, computed ahead of time
    with its trace (so the first page needs no PyTorch); None for any other token."""
    found = _shipped()
    if found is None or found[1]["model"] != name:
        return None
    extras = found[2]
    rows = np.flatnonzero(extras.get("near_of", np.empty(0)) == token_id)
    if not rows.size or k > extras["near_tokens"].shape[1]:
        return None
    row = int(rows[0])
    tokens, cosines = extras["near_tokens"][row, :k], extras["near_cosines"][row, :k]
    near = [(str(t), float(c)) for t, c in zip(tokens, cosines, strict=True)]
    return near, extras["near_vectors"][row, :k]


WARM_THREAD = "glassbox-warm-up"
FULL_GC_EVERY = 100  # middle-generation collections between two full ones (Python's: 10)
WARM_DELAY_S = 2.0  # the first browser fetches and draws Plotly meanwhile (README, Benchmarks)
_warm = threading.Lock()
_warm_started: list[bool] = []


def warm_up() -> None:
    """Once per process, in a background thread: import PyTorch, load every shipped model
    (on "auto") and the vision page's test digits, so that later pages and sessions find
    them loaded. Only in a server
    (not under AppTest, whose process may end while the thread is importing)."""
    if not in_a_server():
        return
    with _warm:
        if _warm_started:
            return
        _warm_started.append(True)

    def run() -> None:
        # Importing PyTorch holds the interpreter lock for about a second: started at once,
        # it slowed the first page's own work and the serving of its JavaScript.
        time.sleep(WARM_DELAY_S)
        device = model.pick_device("auto")
        for name in model.shipped():
            _load_model(name, device)  # no session here: no spinner
        digits_test_set()  # the vision page's digits: scikit-learn and SciPy, imported now
        # What is loaded by now lives as long as the process. Out of the collector's sight
        # (gc.freeze), it is no longer walked by Python's full collections, which took
        # 50-140 ms each with the interpreter lock held (one in about 40 new inputs).
        gc.collect()
        gc.freeze()
        # What sessions keep (their state, kept traces and figures) still grows the heap a
        # full collection walks: 30-40 ms each. Python starts one after every 10 collections
        # of the middle generation; here after every FULL_GC_EVERY (short-lived cycles are
        # still found by the younger generations' frequent collections).
        young, middle, _full = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_GC_EVERY)

    # No session runs this thread: Streamlit's "missing ScriptRunContext" warning is expected.
    logging.getLogger(CONTEXT_LOGGER).addFilter(
        lambda record: record.threadName != WARM_THREAD
    )
    threading.Thread(target=run, name=WARM_THREAD, daemon=True).start()


@st.cache_resource(show_spinner=False, max_entries=8)
def _load_model(name: str, device: str) -> Model:
    """The model `name` on `device`, loaded once for all sessions and warmed up once, so
    the first sentence's measured time is the model's, not PyTorch's start-up."""
    _one_thread()
    m = model.load(name, device)
    m.trace(m.example)
    _loaded.add((name, device))
    return m


def load_model(name: str, device: str) -> Model:
    """The model `name` on `device`, loaded once for all sessions (`_load_model`), with a
    spinner in the session's language while it loads."""
    if model_loaded(name, device):
        return _load_model(name=name, device=device)
    with st.spinner(_("Loading the model…")):
        return _load_model(name=name, device=device)


_loaded: set[tuple[str, str]] = set()  # (name, device) pairs loaded in this process
# The cached functions below load through `_load_model`: no spinner inside a cached function.


def model_loaded(name: str, device: str) -> bool:
    """Whether `_load_model` has loaded it in this process (no spinner is drawn then)."""
    return (name, device) in _loaded


def read_only(value: T) -> T:
    """`value` with every numpy array in it (in its dataclasses' fields and lists) made
    read-only, so that a trace shared by every session cannot be written into."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, list):
        for item in value:
            read_only(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            read_only(getattr(value, f.name))
    return value


# Traces are kept as they are, not pickled and copied per call as `st.cache_data` does: the
# copy was 2-5 ms of a new sentence's server time.
@st.cache_resource(show_spinner=False, max_entries=128, hash_funcs=KEYS)
@model_work
def _trace(text: str, name: str, device: str, options: RunOptions) -> Trace:
    return read_only(_load_model(name, device).trace_with(text, options))


@st.cache_resource(show_spinner=False, max_entries=256, hash_funcs=KEYS)
@model_work
def _trace_ids(ids: tuple[int, ...], name: str, device: str, options: RunOptions) -> Trace:
    return read_only(_load_model(name, device).trace_with(list(ids), options))


def clear_traces() -> None:
    """Forget every kept trace (a test that counts forward passes from cold)."""
    for kept in (_trace, _trace_ids, trace_image):
        kept.clear()


def get_trace(text: str, name: str, device: str, options: RunOptions = CLEAN) -> Trace:
    """The trace of `text` through model `name` on `device` (numpy arrays, cached; its
    tokens labelled for the hovers in the session's language: ui.show.labelled)."""
    return labelled(_trace(text=text, name=name, device=device, options=options))


def get_trace_ids(
    ids: tuple[int, ...], name: str, device: str, options: RunOptions = CLEAN
) -> Trace:
    """The trace of token ids as they are (masked tokens, generated tokens), labelled."""
    return labelled(_trace_ids(ids=ids, name=name, device=device, options=options))


@st.cache_data(show_spinner=False, max_entries=128, hash_funcs=KEYS)
@model_work
def fill_mask_ids(
    ids: tuple[int, ...], name: str, device: str, k: int, options: RunOptions = CLEAN
) -> list:
    """One ranked [(token, prob), ...] per [MASK] id, in order."""
    return _load_model(name, device).fill_mask_ids(list(ids), k, options)


@st.cache_data(show_spinner=False, max_entries=256, hash_funcs=KEYS)
@model_work
def next_distribution(
    ids: tuple[int, ...], name: str, device: str, sampling: Sampling, options: RunOptions = CLEAN
) -> np.ndarray:
    """[V] probabilities of the next token after `ids`, after temperature/top-k/top-p."""
    return _load_model(name, device).next_distribution(list(ids), sampling, options)


@st.cache_resource(show_spinner=False, max_entries=128, hash_funcs=KEYS)
@model_work
def trace_image(pixels: bytes, name: str, device: str, options: RunOptions = CLEAN) -> Trace:
    """The trace of an 8x8 image given as its float32 bytes (hashable) through model `name`
    (kept read-only for every session, as `_trace`)."""
    image = np.frombuffer(pixels, dtype=np.float32).reshape(8, 8)
    return read_only(_load_model(name, device).trace_with(image, options))


# -- experiments: many passes of one input, each cached on the whole question --------------


BIG_MODEL = 50_000_000  # parameters: above this, experiments bound their work


def is_big(name: str, device: str) -> bool:
    """Whether a model is big enough that its experiments are computed on request."""
    return _n_parameters(name, device) > BIG_MODEL


@st.cache_data(show_spinner=False, max_entries=16)
def _n_parameters(name: str, device: str) -> int:
    m = _load_model(name, device)
    return int(m.n_parameters()) if hasattr(m, "n_parameters") else 0


def _inputs(inputs: str | tuple | bytes):
    """A cache key's input as a model reads it: a text, token ids, a (source, target) pair
    of ids, or an 8x8 image's float32 bytes."""
    if isinstance(inputs, bytes):
        return np.frombuffer(inputs, dtype=np.float32).reshape(8, 8)
    return inputs


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=KEYS)
@model_work
def log_probs(
    inputs: str | tuple | bytes, name: str, device: str, runs: tuple[RunOptions, ...],
    at: tuple[int, ...],
) -> np.ndarray:  # fmt: skip
    """[len(runs), len(at), V] log-probabilities of one input under each run, batched."""
    return _load_model(name, device).log_probs(_inputs(inputs), list(runs), list(at))


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=KEYS)
@model_work
def logit_lens(inputs: str | tuple, name: str, device: str, at: tuple[int, ...]) -> np.ndarray:
    """[L + 1, len(at), V]: every layer's guess at positions `at`."""
    return _load_model(name, device).logit_lens(_inputs(inputs), list(at))


IG_TOKEN_STEPS = 2048  # integrated gradients' budget: steps x tokens, for a small model


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=KEYS)
@model_work
def attribute(
    ids: tuple[int, ...], name: str, device: str, position: int, token: int, method: str
) -> Attribution:
    """Each input token's score for log p(token) at position (ui.parts.interventions):
    integrated gradients on 64 points of the path for a sentence, fewer for a long text
    (about IG_TOKEN_STEPS tokens' passes in all, at least 8: a 256-token text's 64 passes
    and their gradients took 5.6 s on the masked model), and 8 for a model of over 50M
    parameters (SmolLM2's 16 passes took 6 s; bench_interventions). The page says how
    many steps it took."""
    steps = 8 if is_big(name, device) else max(8, min(64, IG_TOKEN_STEPS // len(ids)))
    return _load_model(name, device).attribute(list(ids), position, token, method, steps)


@st.cache_data(show_spinner=False, max_entries=4)
def digits_test_set() -> tuple[np.ndarray, np.ndarray]:
    """The 360 test digits (8x8, 0-16) and their labels, as every model here is scored."""
    from model.vit import digits_split

    _, _, test_x, test_y = digits_split()
    return test_x, test_y


@st.cache_data(show_spinner=False, max_entries=4)
def vit_report() -> dict:
    """assets/models/vit_evaluation.json: test accuracy, confusion, misclassified images."""
    return _report("vit_evaluation.json")


@st.cache_data(show_spinner=False, max_entries=256, hash_funcs=KEYS)
@model_work
def translate(text: str, name: str, device: str, options: RunOptions = CLEAN) -> Translation:
    """The greedy translation of `text` by model `name`, read from its cached trace (one
    greedy decoding for the translation and the trace together)."""
    trace = _trace(text, name, device, options)  # unlabelled: no hover text in a cache
    return _load_model(name, device).translation_in(trace, text)


@st.cache_data(show_spinner=False, max_entries=256)
@model_work
def translation_text(text: str, name: str, device: str) -> str:
    """The greedy translation of `text` by model `name` as text alone: the decoding, no
    trace (for a page that shows only the words: `translate` traces the pair too)."""
    m = _load_model(name, device)
    return m.decode(m.greedy(m.encode(text).ids))


def _report(name: str) -> dict:
    path = model.MODELS_DIR / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


@st.cache_data(show_spinner=False, max_entries=4)
def translation_report() -> dict:
    """assets/models/translation_evaluation.json: the translators' scores on the test split
    ({} when it is missing), read once, never recomputed per visit."""
    return _report("translation_evaluation.json")


@st.cache_data(show_spinner=False, max_entries=4)
def evaluation_report() -> dict:
    """assets/models/evaluation.json: what `python -m training.evaluate` measured of the
    language models ({} when it is missing)."""
    return _report("evaluation.json")


@st.cache_resource(show_spinner=False, max_entries=8)
def vocabulary(name: str, device: str) -> tuple[str, ...]:
    """Every token of the vocabulary, by id (one tuple for every session, not a copy per
    call: a page asks for it each run)."""
    return tuple(_load_model(name, device).vocabulary())


@st.cache_data(show_spinner=False, max_entries=8)
def special_ids(name: str, device: str) -> dict[str, int]:
    """The ids of the special tokens, by name ("[MASK]": 4, ...)."""
    return _load_model(name, device).special_ids()


@st.cache_data(show_spinner=False, max_entries=512)
@model_work
def neighbours(name: str, device: str, token_id: int, k: int) -> tuple[list, np.ndarray]:
    """The k nearest vocabulary tokens to `token_id` by cosine: [(token, cos)], [k, D]."""
    if device == "cpu" and (shipped := shipped_neighbours(name, token_id, k)) is not None:
        return shipped
    return _load_model(name, device).neighbours(token_id, k)


@st.cache_data(show_spinner=False, max_entries=64)
@model_work
def attention_weights(name: str, device: str, layer: int) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V [H, D, Dh], their biases [H, Dh], W_O [D, D] and b_O [D]."""
    return _load_model(name, device).attention_weights(layer)
