"""The shipped corpus (assets/data/*.txt.gz) and tokenizer (assets/data/tokenizer.json)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.examples import PROBES
from model.tokenizer import (
    BOS_ID,
    EOS_ID,
    MASK_ID,
    PAD_ID,
    SPECIAL_TOKENS,
    UNK_ID,
    load_tokenizer,
)
from training.data import (
    DATA_DIR,
    GRAMMAR_SEED,
    SPLITS,
    contains_probe,
    grammar_sentences,
    load_split,
    normalize,
)


def simple_norm(text: str) -> str:
    """An independent normalization for the checks: lowercase ASCII words and digits."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


@pytest.fixture(scope="module")
def splits() -> dict[str, list[str]]:
    return {name: load_split(name) for name in SPLITS}


@pytest.fixture(scope="module")
def keys(splits) -> dict[str, list[str]]:
    """Each split's sentences, normalized independently of training.data."""
    return {name: [simple_norm(s) for s in lines] for name, lines in splits.items()}


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(DATA_DIR / "tokenizer.json")


# --- The corpus ------------------------------------------------------------------------


def test_no_probe_in_any_split(keys):
    probes = [simple_norm(p) for p in PROBES]
    assert all(probes)
    for name, lines in keys.items():
        bad = [s for s in lines if any(p in s for p in probes)]
        assert not bad, f"{name} holds probes: {bad[:5]}"


def test_probe_rule():
    assert contains_probe("The cat sat on the sofa.")  # contains "the cat sat"
    assert contains_probe("THE DOG, bit the man!")
    assert contains_probe("He  opened the door and smiled")
    assert not contains_probe("The black cat sat on the mat.")
    assert not contains_probe("The big dog bit the man.")
    assert normalize("  Hello,   World! ") == "hello world"


def test_splits_disjoint_and_deduplicated(keys):
    for name, k in keys.items():
        assert len(set(k)) == len(k), f"{name} has duplicate sentences"
    sets = {name: set(k) for name, k in keys.items()}
    assert not sets["train"] & sets["valid"]
    assert not sets["train"] & sets["test"]
    assert not sets["valid"] & sets["test"]


def test_split_sizes(splits):
    sizes = {name: len(lines) for name, lines in splits.items()}
    total = sum(sizes.values())
    assert all(sizes.values()), sizes
    assert total > 100_000, sizes
    assert 0.88 <= sizes["train"] / total <= 0.92, sizes
    assert 0.04 <= sizes["valid"] / total <= 0.06, sizes
    assert 0.04 <= sizes["test"] / total <= 0.06, sizes


def test_lines_are_clean(splits):
    for lines in splits.values():
        for s in lines[:5000]:
            assert s == s.strip() and "\n" not in s and 3 <= len(s.split()) <= 40, repr(s)


def test_both_sources_present(splits):
    everything = set().union(*map(set, splits.values()))
    # WordNet: a definition (capitalised, with a full stop) and two examples, as shipped
    for s in [
        "Sloping land (especially the slope beside a body of water).",
        "That which is perceived or known or inferred to have its own distinct existence "
        "(living or nonliving).",
        "Coffee and tea stimulate me",
    ]:
        assert s in everything, s
    # the grammar: its first sentences for the shipped seed (a shorter run is a prefix)
    grammar = grammar_sentences(2000, GRAMMAR_SEED)
    assert sum(s in everything for s in grammar) >= 0.99 * len(grammar)
    share = sum(s in everything for s in grammar_sentences(60_000, GRAMMAR_SEED)) / len(
        everything
    )
    assert 0.15 <= share <= 0.40, share


def test_grammar_is_seeded():
    a = grammar_sentences(500, seed=1)
    assert a == grammar_sentences(500, seed=1)
    assert a != grammar_sentences(500, seed=2)
    assert a[:100] == grammar_sentences(100, seed=1)
    assert len({normalize(s) for s in a}) == len(a) == 500


def test_grammar_never_makes_a_probe_and_covers_the_lecture():
    sentences = grammar_sentences(5000, seed=3)
    assert not any(contains_probe(s) for s in sentences)
    text = " ".join(sentences).lower()
    for word in ["bank", "river", "cash", "experiment", "door", "dog", "cat", "school",
                 "steel", "rubber", "python", "haskell", "factory", " he ", " she "]:
        assert word in text, word
    assert all(s[0].isupper() and s.endswith(".") for s in sentences)


def test_assets_are_small():
    size = sum(p.stat().st_size for p in DATA_DIR.iterdir() if p.is_file())
    assert size < 10 * 2**20, size
    assert (DATA_DIR / "LICENSE-WordNet.txt").read_text().count("Princeton") >= 2


# --- The tokenizer ---------------------------------------------------------------------


def test_vocab_and_special_ids(tok):
    assert tok.get_vocab_size() == 8000
    assert SPECIAL_TOKENS == ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "[MASK]"]
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID, MASK_ID) == (0, 1, 2, 3, 4)
    for i, name in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(name) == i
        assert tok.id_to_token(i) == name


def test_no_post_processor_no_padding(tok):
    assert tok.post_processor is None and tok.padding is None and tok.truncation is None
    ids = tok.encode("The river.").ids
    assert BOS_ID not in ids and EOS_ID not in ids and PAD_ID not in ids


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("I [MASK] across the river.", ["i", "[MASK]", "across", "the", "river", "."]),
        ("The [MASK] sat on the [MASK].", ["the", "[MASK]", "sat", "on", "the", "[MASK]", "."]),
        ("x[MASK]y", ["x", "[MASK]", "y"]),
    ],
)
def test_mask_typed_in_text_is_one_token(tok, text, tokens):
    enc = tok.encode(text)
    assert enc.tokens == tokens
    assert [i for i, t in zip(enc.ids, tokens, strict=True) if t == "[MASK]"] == [
        MASK_ID
    ] * tokens.count("[MASK]")


@pytest.mark.parametrize(
    "text",
    [
        "I swam across the river to get to the other bank.",
        "I walked across the road to get cash from the bank.",
        "The   cat sat on the mat.",
        "After school, we played football.",
        "Steel is stronger than rubber, but glass is brittle.",
        "The researcher asked the assistant to run the experiment again.",
    ],
)
def test_round_trip(tok, text):
    assert tok.decode(tok.encode(text).ids) == " ".join(text.lower().split())


@pytest.mark.parametrize(
    "text", ["", "😀", "猫が好きです", "\x00\x07\x1b", "\u200b\ufeff", "e\u0301", "x" * 500,
             "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "مرحبا", "Привет мир", "[PAD][UNK]"]
)
def test_any_unicode_tokenizes(tok, text):
    enc = tok.encode(text)
    assert len(enc.ids) == len(enc.tokens) == len(enc.offsets)
    assert all(0 <= i < tok.get_vocab_size() for i in enc.ids)
    tok.decode(enc.ids)


def test_emoji_and_cjk_are_unknown(tok):
    assert tok.encode("😀").tokens == ["[UNK]"]
    assert tok.encode("I love 🐈 and 猫.").tokens == ["i", "love", "[UNK]", "and", "[UNK]", "."]


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


@pytest.mark.parametrize(
    "text",
    [
        "I walked across the road to get cash from the bank.",
        "Transformers use embeddings and positional encodings!",
        "Café  naïve 😀 résumé, [MASK] and 猫 too.",
        "C++ is fast; Python is dynamic.",
    ],
)
def test_offsets_point_into_the_text(tok, text):
    enc = tok.encode(text)
    assert enc.tokens
    for token, (start, end) in zip(enc.tokens, enc.offsets, strict=True):
        piece = text[start:end]
        assert piece.strip() == piece and piece, (token, piece)
        if token == "[UNK]":
            continue
        if token in SPECIAL_TOKENS:
            assert piece == token
        else:
            assert _strip_accents(piece).lower() == token.removeprefix("##"), (token, piece)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_random_text_never_fails(tok, text):
    enc = tok.encode(text)
    assert all(0 <= s <= e <= len(text) for s, e in enc.offsets)
