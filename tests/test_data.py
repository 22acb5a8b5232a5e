"""The shipped corpus (assets/data/*.txt.gz), its grammar (training/grammar.json), its command
line and the tokenizer (assets/data/tokenizer.json)."""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

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
    load_split,
    missing_wordnet,
)
from training.grammar import (
    GRAMMAR_FILE,
    GrammarError,
    _problems,
    default_grammar,
    grammar_sentences,
    load_grammar,
)
from training.probes import contains_probe, normalize

REPO = Path(__file__).resolve().parent.parent


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
    shipped = grammar_sentences(60_000, GRAMMAR_SEED)
    share = sum(s in everything for s in shipped) / len(everything)
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
    words = "bank river cash experiment door dog cat school steel rubber python haskell factory"
    for word in [*words.split(), " he ", " she "]:
        assert word in text, word
    assert all(s[0].isupper() and s.endswith(".") for s in sentences)


# --- The grammar file ------------------------------------------------------------------


@pytest.fixture
def raw_grammar() -> dict:
    """A fresh copy of training/grammar.json, parsed, for a test to break."""
    return copy.deepcopy(json.loads(GRAMMAR_FILE.read_text(encoding="utf-8")))


def test_grammar_file_loads_and_every_slot_is_known(raw_grammar):
    assert _problems(raw_grammar) == []
    assert set(default_grammar().topics) == {
        "river", "money", "research", "door", "dog", "cat", "school",
        "materials", "languages", "industry",
    }  # fmt: skip
    assert {"P", "Q", "R", "A", "T", "M", "X", "Y", "K", "L"} <= set(default_grammar().roles)
    assert default_grammar().roles["Q"] == default_grammar().roles["P"]
    # the template objects became functions that make one sentence (or "" to try again)
    functions = [t for ts in default_grammar().topics.values() for t in ts if callable(t)]
    assert len(functions) == 8
    rng = random.Random(0)
    made = [f(rng) for f in functions for _ in range(20)]
    assert any(" than " in s for s in made) and any("unlike " in s for s in made)


@pytest.mark.parametrize(
    "where, template, message",
    [
        ("river", "{P} swam in the {WATR}.", "{WATR} is neither a role nor a rule"),
        ("river", "{P} saw {P_colour} fish.", "role P has no attribute 'colour'"),
        ("materials", "{X|is|are} hard.", "verb forms need a role of people"),
        ("river", "{P} swam {TIME.", "a stray brace"),
        ("materials", {"compare": "metals"}, "table 'metals' lacks scores"),
        ("materials", {"contrast": "materials", "frame": "{c}"}, "may only use {a}, {b}"),
        ("materials", {"contrast": "wood"}, "unknown template"),
    ],
)
def test_a_broken_reference_fails_clearly(tmp_path, raw_grammar, where, template, message):
    raw_grammar["topics"][where].append(template)
    path = tmp_path / "grammar.json"
    path.write_text(json.dumps(raw_grammar), encoding="utf-8")
    with pytest.raises(GrammarError) as err:
        load_grammar(path)
    text = str(err.value)
    n = len(raw_grammar["topics"][where])
    assert str(path) in text and f"topic {where}, template {n}" in text and message in text


def test_broken_roles_and_rules_fail_clearly(raw_grammar):
    raw_grammar["roles"]["Z"] = "metals"
    raw_grammar["roles"]["P"].append("the dog/it")
    raw_grammar["rules"]["river"]["TIME"] = ["now"]  # already a shared rule
    raw_grammar["rules"]["river"]["P_EXTRA"] = ["x"]
    raw_grammar["rules"]["river"]["WATER"].append("{NOWHERE}")
    problems = "\n".join(_problems(raw_grammar))
    for message in [
        'role Z: "metals" is neither a role of people nor a table',
        'role P: bad person "the dog/it"',
        "rule TIME: defined twice",
        "rule P_EXTRA: its name would be read as a role's slot",
        "rule WATER: {NOWHERE} is neither a role nor a rule",
    ]:
        assert message in problems, problems


def test_grammar_is_deterministic_for_a_seed():
    a = grammar_sentences(300, seed=5)
    assert a == grammar_sentences(300, seed=5)
    assert a == grammar_sentences(300, 5, load_grammar(GRAMMAR_FILE))  # a fresh load, too
    assert a[:3] != grammar_sentences(3, seed=6)


# --- The command line ------------------------------------------------------------------


def test_data_help_is_quick_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "training.data", "--help", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - start < 30
    assert "--out" in done.stdout and "--vocab-size" in done.stdout and done.stderr == ""
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_missing_wordnet_is_one_line_and_status_2(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "training.data", "--wordnet", str(tmp_path), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [missing_wordnet(tmp_path)]
    assert "sudo apt-get install wordnet-base" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


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
    "text",
    ["", "😀", "猫が好きです", "\x00\x07\x1b", "\u200b\ufeff", "e\u0301", "x" * 500,
     "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "مرحبا", "Привет мир", "[PAD][UNK]"],
)  # fmt: skip
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
