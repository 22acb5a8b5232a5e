"""The app's pure helpers (no Streamlit run): upload validation, the step-by-step attention,
sampling, similarities; and the two small model additions the pages use (trace_ids,
fill_mask_ids), on the tiny in-memory models of conftest.py."""

from __future__ import annotations

import numpy as np
import pytest

import analysis
from model import Sampling, draw
from model.examples import DEFAULT_SENTENCE, EXAMPLES
from model.tokenizer import MASK_ID
from ui.registry import PAGES
from ui.show import _jsonable, md_escape
from ui.state import MAX_UPLOAD_BYTES, UploadError, validate_upload

SENTENCE = "the dog bit the boy near the river bank"


# --- uploads -----------------------------------------------------------------------------


def test_a_utf8_text_file_is_read_and_stripped() -> None:
    assert validate_upload("a.txt", "  Un café à Paris.\n".encode()) == "Un café à Paris."
    assert validate_upload("b.md", "\ufeffbank".encode()) == "bank", "a BOM is dropped"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"  \n\t", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", "binary"),
        (bytes(range(1, 32)) * 4, "binary"),
        ("café".encode("latin-1"), "not UTF-8"),
        (b"a" * (MAX_UPLOAD_BYTES + 1), "1 MB"),
    ],
    ids=["empty", "blank", "png", "control-bytes", "latin-1", "too-big"],
)
def test_a_bad_upload_is_refused_with_a_reason(data: bytes, message: str) -> None:
    with pytest.raises(UploadError, match=message):
        validate_upload("file.txt", data)


def test_exactly_one_megabyte_is_accepted() -> None:
    assert len(validate_upload("big.txt", b"a" * MAX_UPLOAD_BYTES)) == MAX_UPLOAD_BYTES


# --- examples, pages, escaping -------------------------------------------------------------


def test_examples_start_with_the_lecture_and_have_no_duplicates() -> None:
    assert EXAMPLES[0] == DEFAULT_SENTENCE == "I swam across the river to get to the other bank."
    assert len(EXAMPLES) == len(set(EXAMPLES))
    assert any("[MASK]" in e for e in EXAMPLES)


def test_every_page_has_a_file() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    keys = [p.key for p in PAGES]
    lecture_order = ["tokens", "positional", "attention", "masked", "causal"]
    assert [k for k in keys if k in lecture_order] == lecture_order, "in the lecture's order"
    for info in PAGES:
        assert (root / info.path).is_file()


def test_md_escape_makes_markdown_inert() -> None:
    assert md_escape("*a* [x](javascript:1) <b>") == r"\*a\* \[x\]\(javascript:1\) \<b\>"


def test_downloads_turn_numpy_and_infinities_into_json() -> None:
    data = {"a": np.array([1.5, -np.inf]), "b": (np.int64(3), np.float32(0.25)), 4: [np.nan]}
    assert _jsonable(data) == {"a": [1.5, "-inf"], "b": [3, 0.25], "4": ["nan"]}


# --- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tiny_mlm", "tiny_clm"])
def test_attention_steps_recompute_the_models_numbers(kind: str, request) -> None:
    m = request.getfixturevalue(kind)
    t = m.trace(SENTENCE)
    for layer in range(t.n_layers):
        steps = analysis.attention_steps(t, m.attention_weights(layer), layer, 1)
        assert steps.max_error < 1e-4
        np.testing.assert_allclose(steps.weights.sum(-1), 1, atol=1e-6)
        np.testing.assert_allclose(steps.scaled, steps.qk / np.sqrt(steps.d_head))
        assert np.isneginf(steps.mask).any() == t.causal
        assert steps.concat.shape == t.layers[layer].attn_input.shape


def test_sampling_settings_and_reproducible_draws() -> None:
    assert Sampling.of(1.0, 0, 1.0) == Sampling(1.0, None, None)
    assert Sampling.of(0.7, 5, 0.9) == Sampling(0.7, 5, 0.9)
    assert Sampling.of(-1, -3, 0.0) == Sampling(0.0, None, None)
    probs = np.full(50, 1 / 50)
    draws = [draw(probs, 3, step) for step in range(20)]
    assert draws == [draw(probs, 3, step) for step in range(20)]
    assert draws != [draw(probs, 4, step) for step in range(20)]
    one_hot = np.eye(50)[17]
    assert draw(one_hot, 0, 0) == 17


def test_cosines_and_prediction_probabilities() -> None:
    x = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    np.testing.assert_allclose(analysis.cosine_matrix(x), [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
    np.testing.assert_allclose(analysis.cosine_to_first(x), [1, 0, 1])
    probs = analysis.prediction_probs(np.zeros((2, 6)), [0, 1])
    np.testing.assert_allclose(probs, [[0, 0, 0.25, 0.25, 0.25, 0.25]] * 2)


def test_default_token_prefers_bank_else_the_last_word() -> None:
    assert analysis.default_token(["[BOS]", "the", "bank", ".", "[EOS]"]) == 2
    assert analysis.default_token(["[BOS]", "the", "dog", ".", "[EOS]"]) == 2
    assert analysis.word_positions(["[BOS]", "a", "[MASK]", "[EOS]"]) == [1]


def test_without_positions_an_encoder_ignores_word_order(tiny_mlm) -> None:
    a, b = "the dog bit the boy", "the boy bit the dog"
    off = analysis.shared_word_cosines(
        tiny_mlm.trace(a, positions=False), tiny_mlm.trace(b, positions=False)
    )
    on = analysis.shared_word_cosines(tiny_mlm.trace(a), tiny_mlm.trace(b))
    assert set(off) == {"the", "dog", "bit", "boy"}
    assert all(c == pytest.approx(1.0, abs=1e-5) for c in off.values())
    assert min(on.values()) < 0.9999


# --- the model additions -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tiny_mlm", "tiny_clm"])
def test_trace_ids_equals_trace_of_the_same_ids(kind: str, request) -> None:
    m = request.getfixturevalue(kind)
    t = m.trace(SENTENCE)
    u = m.trace_ids(list(t.ids))
    assert u.tokens == t.tokens and not u.truncated
    np.testing.assert_allclose(u.logits, t.logits, atol=1e-5)
    np.testing.assert_allclose(u.attention_stack(), t.attention_stack(), atol=1e-6)


def test_trace_ids_keeps_the_last_max_len_ids(tiny_clm) -> None:
    ids = list(tiny_clm.encode(SENTENCE).ids) * 10
    t = tiny_clm.trace_ids(ids)
    assert len(t.tokens) == tiny_clm.cfg.max_len and t.truncated
    assert t.n_input_tokens == len(ids)
    assert list(t.ids) == ids[-tiny_clm.cfg.max_len :]
    with pytest.raises(ValueError):
        tiny_clm.trace_ids([])


def test_fill_mask_ids_equals_fill_mask(tiny_mlm) -> None:
    text = "the [MASK] bit the [MASK]"
    ids = tiny_mlm.encode(text).ids
    assert tiny_mlm.fill_mask_ids(ids, k=4) == tiny_mlm.fill_mask(text, k=4)
    masked = list(tiny_mlm.encode(SENTENCE).ids)
    masked[2] = MASK_ID
    (ranked,) = tiny_mlm.fill_mask_ids(masked, k=3)
    assert len(ranked) == 3


# --- what the caches keep for every session ----------------------------------------------


def test_a_kept_trace_is_one_for_every_session_and_cannot_be_written_into(tiny_mlm) -> None:
    """ui.cache keeps a trace once (not a copy per call): every array in it, its layers'
    included, is read-only, so no page can change what another session is shown."""
    from ui.cache import read_only

    t = read_only(tiny_mlm.trace(SENTENCE))
    arrays = [t.ids, t.embeddings, t.logits, *(v for lt in t.layers for v in vars(lt).values())]
    assert all(not a.flags.writeable for a in arrays if isinstance(a, np.ndarray))
    with pytest.raises(ValueError, match="read-only"):
        t.layers[0].attention[0, 0, 0] = 1.0


def test_a_cache_key_is_its_values_text_and_refuses_what_has_no_true_text() -> None:
    """The caches (ui.cache.KEYS, ui.figures) key by the text of what a result depends on:
    values that differ give different texts (a number is not its string), numpy numbers are
    Python's (token ids key the same however they were made), and a value whose text would
    not name it (an object, a list, an array) is refused."""
    from model import CLEAN, RunOptions
    from ui.cache import key_text

    assert key_text((np.int64(1), (np.int32(2),))) == key_text((1, (2,)))
    values = [(1,), ("1",), (1.0,), ("mlm", (1, 2), CLEAN),
              ("mlm", (1, 2), RunOptions(positions=False)), ("mlm", (1, 2, None)), (b"\x00",)]
    keys = [key_text(k) for k in values]
    assert len(set(keys)) == len(keys)
    assert key_text(tuple(np.array([5, 7]))) == key_text(tuple(np.array([5, 7])))
    for bad in [(object(),), ([1, 2],), ({"a": 1},), (np.zeros(2),)]:
        with pytest.raises(TypeError):
            key_text(bad)
