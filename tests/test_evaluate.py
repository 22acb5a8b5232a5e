"""The evaluation: WordNet pairs (training/wordnet.py), neighbour hit rates and the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from training import wordnet
from training.data import load_split
from training.evaluate import compact_json, hit_rates, layer_cosines, nearest_ids
from training.probes import normalize

ROOT = Path(__file__).resolve().parent.parent
needs_wordnet = pytest.mark.skipif(
    not (wordnet.WORDNET_ROOT / "data.noun").is_file(),
    reason="WordNet 3.0 is not installed (sudo apt-get install wordnet-base); "
    "CI does not install it",
)


def short_word(word: str) -> bool:
    """A stand-in for "one token of the tokenizer": any word of at most 7 letters."""
    return len(word) <= 7


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "training.evaluate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


# --- WordNet pairs --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synsets() -> dict:
    return wordnet.read_wordnet()


@pytest.fixture(scope="module")
def lemma_synsets(synsets) -> dict[str, set]:
    """lemma -> the keys of the synsets it belongs to."""
    index: dict[str, set] = defaultdict(set)
    for synset in synsets.values():
        for lemma in synset.lemmas:
            index[lemma].add(synset.key)
    return index


@pytest.fixture(scope="module")
def pairs(synsets) -> wordnet.WordPairs:
    return wordnet.word_pairs(synsets, short_word, 200)


@needs_wordnet
def test_reader_parses_a_known_synset(synsets):
    bank = next(s for s in synsets.values() if s.definition.startswith("sloping land"))
    assert bank.key[0] == "n" and "bank" in bank.lemmas
    assert "they pulled the canoe up on the bank" in bank.examples
    parents = [synsets[h] for h in bank.hypernyms]
    assert any("slope" in p.lemmas for p in parents)


@needs_wordnet
def test_synonyms_share_a_synset(pairs, lemma_synsets):
    assert len(pairs.synonyms) == 200
    for a, b in pairs.synonyms:
        assert a < b and short_word(a) and short_word(b)
        assert lemma_synsets[a] & lemma_synsets[b], (a, b)


@needs_wordnet
def test_cohyponyms_share_a_direct_hypernym(pairs, synsets, lemma_synsets):
    assert len(pairs.cohyponyms) == 200
    for a, b in pairs.cohyponyms:
        parents_a = {h: s for s in lemma_synsets[a] for h in synsets[s].hypernyms}
        parents_b = {h: s for s in lemma_synsets[b] for h in synsets[s].hypernyms}
        assert set(parents_a) & set(parents_b), (a, b)
        assert not lemma_synsets[a] & lemma_synsets[b], f"{a}, {b} are synonyms"


@needs_wordnet
def test_random_pairs_are_unrelated(pairs, lemma_synsets):
    assert len(pairs.random) == 200
    related = set(pairs.synonyms) | set(pairs.cohyponyms)
    for a, b in pairs.random:
        assert a != b and (a, b) not in related
        assert not lemma_synsets[a] & lemma_synsets[b]


@needs_wordnet
def test_samples_are_fixed_by_the_seed(synsets, pairs):
    again = wordnet.word_pairs(synsets, short_word, 200)
    assert (again.synonyms, again.cohyponyms, again.random) == (
        pairs.synonyms,
        pairs.cohyponyms,
        pairs.random,
    )
    other = wordnet.word_pairs(synsets, short_word, 200, seed=1)
    assert other.synonyms != pairs.synonyms


@needs_wordnet
def test_a_narrower_vocabulary_keeps_the_pairs_it_allows(synsets, pairs):
    """Two tokenizers pick the same pairs where both allow them."""

    def shorter(word: str) -> bool:
        return len(word) <= 6

    narrow = wordnet.word_pairs(synsets, shorter, 200)
    kept = [p for p in pairs.synonyms if shorter(p[0]) and shorter(p[1])]
    assert kept and kept == narrow.synonyms[: len(kept)]


@needs_wordnet
def test_sense_pairs_are_held_out_and_use_two_senses(synsets):
    splits = {name: load_split(name) for name in ("train", "valid", "test")}
    held_out = wordnet.held_out_sentences(splits, normalize)
    senses = wordnet.sense_pairs(synsets, held_out, normalize, short_word, 20)
    assert len(senses) == 20
    train = {normalize(s) for s in splits["train"]}
    for pair in senses:
        assert pair.senses[0] != pair.senses[1]
        for sentence, split in zip(pair.sentences, pair.splits, strict=True):
            assert sentence in splits[split] and split in ("valid", "test")
            assert normalize(sentence) not in train
            assert pair.word in normalize(sentence).split()
    assert len({p.word for p in senses}) == 20


# --- Neighbour hit rates on a hand-made embedding table ---------------------------------------


def toy_embeddings() -> np.ndarray:
    """Rows 0, 1 are "special" copies of row 2; words 2..7 sit on a circle at these angles,
    row 4 much longer than the others, so a dot product would rank differently from cosine."""
    angles = {2: 0, 3: 10, 4: 15, 5: 90, 6: 180, 7: 260}
    emb = np.zeros((8, 2))
    for i, deg in angles.items():
        emb[i] = [math.cos(math.radians(deg)), math.sin(math.radians(deg))]
    emb[4] *= 10
    emb[0] = emb[1] = emb[2]
    return emb


def test_nearest_ids_by_cosine_without_specials_or_self():
    near = nearest_ids(toy_embeddings(), [2, 3, 7], 3, exclude=[0, 1])
    assert near.tolist() == [[3, 4, 5], [4, 2, 5], [6, 2, 3]]


def test_hit_rates_either_and_one_direction():
    emb = toy_embeddings()
    # 2 -> 3 hits (3 is 2's nearest) but 3 -> 2 misses (4 is nearer to 3); (5, 7) never hits
    rates = hit_rates(emb, [(2, 3), (5, 7)], 1, exclude=[0, 1])
    assert rates == {"pairs": 2, "either": 0.5, "one_direction": 0.25}
    assert hit_rates(emb, [(3, 2)], 2, exclude=[0, 1])["one_direction"] == 1.0
    assert hit_rates(emb, [], 1, exclude=[0, 1])["either"] is None


def test_specials_are_never_neighbours():
    emb = toy_embeddings()  # rows 0 and 1 point exactly where row 2 does
    assert set(nearest_ids(emb, [2], 2, exclude=[]).flatten()) == {0, 1}
    assert set(nearest_ids(emb, [2], 2, exclude=[0, 1]).flatten()) == {3, 4}


def test_layer_cosines_and_compact_json():
    a = np.array([[1.0, 0.0], [1.0, 1.0]])
    assert layer_cosines(a, np.array([[2.0, 0.0], [-1.0, -1.0]])) == [1.0, -1.0]
    report = {"pairs": [["cat", "dog"], ["a]", "[ b"]], "x": {"cos": [0.5, 1.0]}, "t": "[ ]"}
    text = compact_json(report)
    assert json.loads(text) == report
    assert '["cat", "dog"]' in text and '"cos": [0.5, 1.0]' in text


# --- The command line ---------------------------------------------------------------------------


def test_help_exits_0():
    done = run_cli("--help")
    assert done.returncode == 0, done.stderr
    assert "--models" in done.stdout and "--quick" in done.stdout and "--out" in done.stdout


def test_missing_wordnet_is_one_line_and_exit_2(tmp_path):
    out = tmp_path / "report.json"
    done = run_cli("--wordnet", str(tmp_path), "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert "sudo apt-get install wordnet-base" in done.stderr
    assert not out.exists()


@needs_wordnet
def test_quick_run_on_the_shipped_models(tmp_path):
    out = tmp_path / "report.json"
    done = run_cli("--quick", "--out", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    mlm, clm = report["models"]["mlm"], report["models"]["clm"]
    assert 0 < mlm["masked"]["top5"] <= 1 and clm["perplexity"]["perplexity"] > 1
    for entry in (mlm, clm):
        emb = entry["embeddings"]
        assert emb["synonyms"]["pairs"] == emb["random"]["pairs"] == 300
        assert set(emb["neighbours"]) == {
            "steel",
            "aluminum",
            "rubber",
            "cat",
            "bank",
            "python",
            "school",
        }
        context = entry["context"]
        assert list(context["bank_cosine"])[0] == "input"
        assert len(context["sense_mean_cosine"]) == len(context["bank_cosine"])
        assert 10 <= context["sense_pairs"] <= 20
    (sample,) = report["wordnet"]["samples"]  # the two shipped models share a tokenizer
    assert sample["models"] == ["mlm", "clm"]
    assert set(sample["sense_pair_splits"]) <= {"valid", "test"}
