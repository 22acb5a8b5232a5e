"""Hypothesis fuzzes the tokenizer and `trace` of the shipped models with arbitrary Unicode.

The contract: `encode` / `trace` raise nothing but the documented ValueError, and that only
when the text is blank (`text.strip() == ""`). Any other text, up to and far beyond the
context length, gives at most `max_len` tokens, a `truncated` flag that agrees with the
count of input tokens, finite arrays of matching shapes, and attention rows that sum to 1
(zero above the diagonal for the causal model).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import model

# Unicode of every kind (surrogates cannot be in a Python str that reaches the app).
ANY_CHAR = st.characters(exclude_categories=["Cs"])
WORDS = ["the", "bank", "river", "cash", "[MASK]", "déjà", "東京", "🙂", "embeddings", "x"]

# Arbitrary text up to 2000 characters: mostly below the context, sometimes beyond it.
ARBITRARY = st.text(alphabet=ANY_CHAR, max_size=2000)
# Words repeated past the context (256 tokens), with arbitrary separators.
LONG = st.builds(
    lambda words, sep, n: sep.join(words * n),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
    st.sampled_from([" ", "  ", "\n", "\t", " , ", "-", "\u3000"]),
    st.integers(min_value=40, max_value=400),
)
BLANK = st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2003\u3000\x1c"), max_size=50)
TEXTS = st.one_of(ARBITRARY, LONG, BLANK)

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module", params=["mlm", "clm"])
def m(request) -> model.TransformerLM:
    return model.load(request.param, device="cpu")


def _check_encoded(b: model.TransformerLM, text: str) -> None:
    enc = b.encode(text)
    max_len = b.cfg.max_len
    assert 1 <= len(enc.ids) <= max_len
    assert len(enc.tokens) == len(enc.ids) == len(enc.offsets)
    assert enc.truncated == (enc.n_input_tokens > max_len)
    if not enc.truncated:
        assert enc.n_input_tokens == len(enc.ids)
    else:
        assert len(enc.ids) == max_len
    assert all(isinstance(t, str) and t for t in enc.tokens)
    for start, end in enc.offsets:
        assert 0 <= start <= end <= len(text)


@given(text=TEXTS)
@example(text="")
@example(text=" \n\t ")
@example(text="\x00\x01\x02")  # control characters only: normalized away, not blank
@example(text="[MASK] [MASK] [MASK]")
@example(text="<img src=x onerror=alert(1)>")
@example(text="a" * 5000)
@example(text="🙂" * 300)
@FUZZ
def test_tokenizer_takes_any_text(m: model.TransformerLM, text: str) -> None:
    if text.strip() == "":
        with pytest.raises(ValueError):
            m.encode(text)
        return
    _check_encoded(m, text)


@given(text=TEXTS)
@example(text="")
@example(text="\x00")
@example(text="the " * 600)
@example(text="東京 " * 300)
@FUZZ
def test_trace_takes_any_text(m: model.TransformerLM, text: str) -> None:
    if text.strip() == "":
        with pytest.raises(ValueError):
            m.trace(text)
        return
    t = m.trace(text)
    n, max_len = len(t.tokens), m.cfg.max_len
    assert 1 <= n <= max_len
    assert t.ids.shape == (n,)
    assert t.truncated == (t.n_input_tokens > max_len)
    assert t.causal == m.causal
    assert t.embeddings.shape == t.positional.shape == (n, m.cfg.d_model)
    assert t.logits.shape == (n, m.cfg.vocab_size)
    assert np.isfinite(t.logits).all()
    assert len(t.layers) == m.cfg.n_layers
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    for layer in t.layers:
        att = layer.attention
        assert att.shape == (m.cfg.n_heads, n, n)
        assert np.isfinite(att).all()
        assert (att >= 0).all()
        np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-4)
        if t.causal:
            assert np.abs(att[:, upper]).max(initial=0.0) == 0.0
        assert layer.resid_post.shape == (n, m.cfg.d_model)
        assert np.isfinite(layer.resid_post).all()


@given(text=st.one_of(st.integers(), st.none(), st.binary(max_size=20)))
@settings(max_examples=10, deadline=None)
def test_non_text_is_a_type_error(m: model.TransformerLM, text: object) -> None:
    with pytest.raises(TypeError):
        m.encode(text)  # type: ignore[arg-type]
