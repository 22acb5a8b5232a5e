"""The trace shipped for the first page (assets/default_trace.npz) equals a fresh one, and
the first page draws from it while PyTorch has not loaded (issue 14: first chart).

When the shipped models change, regenerate it: `python -m training.default_trace`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import model
import ui.cache
from model.examples import DEFAULT_SENTENCE
from model.trace import load_npz, save_npz
from tests.charts import charts, specs

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "assets/default_trace.npz is stale: run `python -m training.default_trace`"


def _same(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    return np.allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_the_shipped_trace_equals_a_fresh_one() -> None:
    shipped, meta = load_npz(ui.cache.SHIPPED_TRACE)
    name = next(iter(model.catalogue()))
    assert (meta["sentence"], meta["model"]) == (DEFAULT_SENTENCE, name), REGENERATE
    assert ui.cache.shipped_trace(DEFAULT_SENTENCE, name) is not None, REGENERATE  # sha256
    fresh = model.load(name, "cpu").trace(DEFAULT_SENTENCE)
    assert shipped.tokens == fresh.tokens and shipped.offsets == fresh.offsets, REGENERATE
    assert (shipped.raw_tokens, shipped.fragment_of) == (fresh.raw_tokens, fresh.fragment_of)
    for field in ("ids", "embeddings", "positional", "logits"):
        assert _same(getattr(shipped, field), getattr(fresh, field)), (field, REGENERATE)
    assert len(shipped.layers) == len(fresh.layers)
    for mine, theirs in zip(shipped.layers, fresh.layers, strict=True):
        for field, value in vars(theirs).items():
            assert _same(getattr(mine, field), value), (field, REGENERATE)
    assert (shipped.causal, shipped.truncated, shipped.device) == (fresh.causal, False, "cpu")


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    t = model.load("clm", "cpu").trace("the cat sat")
    save_npz(t, tmp_path / "t.npz", sentence="the cat sat")
    back, meta = load_npz(tmp_path / "t.npz")
    assert meta == {"sentence": "the cat sat"} and back.tokens == t.tokens and back.causal
    pairs = zip(back.layers, t.layers, strict=True)
    assert all(np.array_equal(a.attention, b.attention) for a, b in pairs)


def test_only_the_default_sentence_and_model_are_shipped() -> None:
    assert ui.cache.shipped_trace("another sentence", "mlm") is None
    assert ui.cache.shipped_trace(DEFAULT_SENTENCE, "clm") is None


@pytest.mark.parametrize("page", ["tokens", "attention"])
def test_the_first_page_draws_without_a_forward_pass(monkeypatch, page: str) -> None:
    """Before PyTorch loads, the default sentence's page runs on the shipped trace."""

    def no_pass(*args: object, **kwargs: object) -> None:
        raise AssertionError("a forward pass on the first view")

    monkeypatch.setattr(ui.cache, "torch_ready", lambda: False)
    monkeypatch.setattr(ui.cache, "get_trace", no_pass)
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    assert charts(at), "no chart drawn"


def test_the_shipped_neighbours_equal_fresh_ones() -> None:
    """Each token of the default sentence: its nearest vocabulary tokens (names, cosines
    and embedding rows) as the model computes them now, for every k the page offers."""
    name = next(iter(model.catalogue()))
    m = model.load(name, "cpu")
    shipped, _ = load_npz(ui.cache.SHIPPED_TRACE)
    table, index = m.embedding_matrix(), {t: i for i, t in enumerate(m.vocabulary())}
    for token_id in {int(i) for i in shipped.ids}:
        for k in (3, 8, 20):
            found = ui.cache.shipped_neighbours(name, token_id, k)
            assert found is not None, REGENERATE
            near, vectors = found
            fresh = m.nearest_tokens(token_id, k)
            assert [t for t, _ in near] == [t for t, _ in fresh], REGENERATE
            assert np.allclose([c for _, c in near], [c for _, c in fresh], atol=1e-5)
            assert np.allclose(vectors, table[[index[t] for t, _ in fresh]], atol=1e-6)
    assert ui.cache.shipped_neighbours(name, int(shipped.ids[1]), 21) is None  # k too big
    assert ui.cache.shipped_neighbours("clm", int(shipped.ids[1]), 8) is None


def test_the_first_tokens_page_loads_no_model(monkeypatch) -> None:
    """The first page (tokens, the default sentence) draws its first tab from what is
    shipped, and so does its neighbours tab: PyTorch and the model load afterwards, in the
    background (issue 14: start -> first chart)."""

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("the first view loaded a model")

    monkeypatch.setattr(ui.cache, "torch_ready", lambda: False)
    monkeypatch.setattr(ui.cache, "load_model", no_load)
    ui.cache.neighbours.clear()
    at = AppTest.from_file(str(ROOT / "pages" / "tokens.py"), default_timeout=180).run()
    assert not at.exception, at.exception
    assert charts(at) and '"river"' in specs(at)
    assert not at.dataframe, "the neighbours' tab is not open"
    at.session_state["tokens_section"] = "neighbours"
    assert not at.run().exception, at.exception
    assert len(at.dataframe) == 1, "the nearest-neighbour table is shown"


READ = ["The cat sat on the mat.", "나는 학교에 간다 🙂", "the [MASK] sat", "word " * 400,
        "<b>bold</b> & ünïcödé\ttabs"]  # fmt: skip


@pytest.mark.parametrize("name", ["mlm", "clm"])
def test_a_text_s_tokens_are_read_without_the_model(name: str) -> None:
    """ui.cache.text_tokens (the tokenizer alone, no PyTorch) reads a text exactly as the
    model does: the same ids, tokens, offsets and truncation."""
    m = model.load(name, "cpu")
    for text in READ:
        mine, theirs = ui.cache.text_tokens(text, name), m.encode(text)
        assert mine is not None and mine.ids == theirs.ids, text
        assert [str(t) for t in mine.tokens] == theirs.tokens and mine.offsets == theirs.offsets
        assert (mine.raw_tokens, mine.fragment_of) == (theirs.raw_tokens, theirs.fragment_of)
        assert (mine.truncated, mine.n_input_tokens) == (theirs.truncated, theirs.n_input_tokens)
    assert ui.cache.text_tokens("   ", name) is None
    code = ("import sys, ui.cache; t = ui.cache.text_tokens('the cat sat', 'mlm'); "
            "assert t.ids and 'torch' not in sys.modules, sorted(sys.modules)")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)


def test_a_shared_link_s_tokens_are_drawn_before_the_model_loads(monkeypatch) -> None:
    """A first visit with a sentence of its own (a shared link): the token chips leave
    before PyTorch and the model load (the model here fails to load, and the chips with the
    link's tokens are drawn all the same)."""
    sentence = "a shared link with a sentence of its own"

    def no_load(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the model is still loading")

    monkeypatch.setattr(ui.cache, "torch_ready", lambda: False)
    monkeypatch.setattr(ui.cache, "load_model", no_load)
    monkeypatch.setattr("ui.frame.cache.load_model", no_load)
    at = AppTest.from_file(str(ROOT / "pages" / "tokens.py"), default_timeout=180)
    at.query_params["sentence"] = sentence
    at.run()
    assert at.exception, "the model did not load: the page says so"
    (strip,) = [c for c in charts(at) if c.key == "tok_strip"]
    assert all(f'"{w}"' in strip.spec for w in sentence.split()), strip.spec[:300]
