"""Word pairs and sense pairs from WordNet 3.0, for the evaluation (`training/evaluate.py`).

A small reader of Debian's `wordnet-base` data files (/usr/share/wordnet/data.noun, ...),
then three kinds of word pairs and one kind of sentence pair:

- synonyms: two lemmas of one synset ("car", "auto");
- co-hyponyms: two synsets with the same direct hypernym, one lemma of each ("cat", "dog");
- random pairs: two unrelated words from the same pool, the chance level;
- sense pairs: one ambiguous word in two example sentences of two of its synsets, both
  sentences held out from training (in the valid or test split).

Which words count is the caller's choice (`is_word`: in practice, one token of a model's
tokenizer). Samples are fixed by a seed: every candidate gets a hash of seed and text, and
the lowest hashes win, so two tokenizers that both allow a pair pick it alike.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path

WORDNET_ROOT = Path("/usr/share/wordnet")
FILES = {"n": "data.noun", "v": "data.verb", "a": "data.adj", "r": "data.adv"}
POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "r": "adverb"}
SEED = 0  # fixed here; the samples are never tuned against

Pair = tuple[str, str]
SynsetKey = tuple[str, int]  # (part of speech: n v a r, byte offset in its data file)


@dataclass
class Synset:
    """One WordNet synset: its lemmas, direct hypernyms, definition and example sentences."""

    key: SynsetKey
    lexfile: int  # the lexicographer file (noun.animal, verb.motion, ...) as its number
    lemmas: list[str]
    hypernyms: list[SynsetKey] = field(default_factory=list)
    definition: str = ""
    examples: list[str] = field(default_factory=list)


def available(root: str | Path = WORDNET_ROOT) -> bool:
    """Whether the WordNet data files are there."""
    return all((Path(root) / name).is_file() for name in FILES.values())


def _parse(line: str, pos: str) -> Synset:
    """One line of a data file: offset lexfile type n_words (word lex_id)* n_ptrs ptrs | gloss."""
    head, _, gloss = line.partition(" | ")
    fields = head.split()
    n_words = int(fields[3], 16)
    # adjectives may carry a syntactic marker: "outback(a)"
    lemmas = [re.sub(r"\(\w+\)$", "", w) for w in fields[4 : 4 + 2 * n_words : 2]]
    at = 4 + 2 * n_words
    n_pointers = int(fields[at])
    hypernyms = []
    for i in range(n_pointers):
        symbol, offset, target_pos = fields[at + 1 + 4 * i : at + 4 + 4 * i]
        if symbol == "@":  # a direct hypernym (not "@i", an instance's class)
            hypernyms.append(("a" if target_pos == "s" else target_pos, int(offset)))
    examples = re.findall(r'"([^"]*)"', gloss)
    definition = re.sub(r'"[^"]*"', "", gloss).split(";")[0].strip()
    return Synset((pos, int(fields[0])), int(fields[1]), lemmas, hypernyms, definition, examples)


def read_wordnet(root: str | Path = WORDNET_ROOT) -> dict[SynsetKey, Synset]:
    """Every synset of the four data files, by (pos, offset)."""
    synsets: dict[SynsetKey, Synset] = {}
    for pos, name in FILES.items():
        with open(Path(root) / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.startswith("  "):  # two spaces start the licence lines
                    synset = _parse(line.rstrip("\n"), pos)
                    synsets[synset.key] = synset
    return synsets


def plain_word(lemma: str) -> bool:
    """A lowercase ASCII word (no phrases, hyphens, digits, or capitalised names)."""
    return lemma.isascii() and lemma.isalpha() and lemma.islower()


def seeded_order(items: Iterable, seed: int = SEED, text: Callable = str) -> list:
    """Items sorted by a hash of (seed, text(item)): a shuffle that does not depend on
    which other items are present."""

    def rank(item) -> bytes:
        return hashlib.blake2b(f"{seed}|{text(item)}".encode(), digest_size=8).digest()

    return sorted(items, key=rank)


def _words(synset: Synset, is_word: Callable[[str], bool]) -> list[str]:
    return sorted({w for w in synset.lemmas if plain_word(w) and is_word(w)})


def synonym_pairs(synsets: dict[SynsetKey, Synset], is_word: Callable[[str], bool]) -> set[Pair]:
    """Every (a, b), a < b, of two different words that are lemmas of one synset."""
    pairs: set[Pair] = set()
    for synset in synsets.values():
        pairs.update(combinations(_words(synset, is_word), 2))
    return pairs


def cohyponym_pairs(synsets: dict[SynsetKey, Synset], is_word: Callable[[str], bool]) -> set[Pair]:
    """Every (a, b), a < b, with a in one synset and b in another under the same direct
    hypernym; pairs that are also synonyms are left out."""
    children: dict[SynsetKey, list[SynsetKey]] = defaultdict(list)
    for synset in synsets.values():
        if _words(synset, is_word):
            for parent in synset.hypernyms:
                children[parent].append(synset.key)
    pairs: set[Pair] = set()
    for siblings in children.values():
        for s1, s2 in combinations(siblings, 2):
            for a in _words(synsets[s1], is_word):
                for b in _words(synsets[s2], is_word):
                    if a != b:
                        pairs.add((min(a, b), max(a, b)))
    return pairs - synonym_pairs(synsets, is_word)


def random_pairs(words: Iterable[str], n: int, avoid: set[Pair], seed: int = SEED) -> list[Pair]:
    """n pairs of distinct words, in seeded order, two by two, skipping pairs in `avoid`."""
    order = seeded_order(set(words), seed)
    pairs: list[Pair] = []
    for a, b in zip(order[0::2], order[1::2], strict=False):
        pair = (min(a, b), max(a, b))
        if pair not in avoid:
            pairs.append(pair)
    return pairs[:n]


@dataclass
class WordPairs:
    """The seeded samples, and how many candidates each was drawn from."""

    synonyms: list[Pair]
    cohyponyms: list[Pair]
    random: list[Pair]
    candidates: dict[str, int]


def word_pairs(
    synsets: dict[SynsetKey, Synset], is_word: Callable[[str], bool], n: int, seed: int = SEED
) -> WordPairs:
    """n synonym, n co-hyponym and n random pairs of words that pass `is_word`."""
    synonyms = synonym_pairs(synsets, is_word)
    cohyponyms = cohyponym_pairs(synsets, is_word)
    pool = {w for s in synsets.values() for w in _words(s, is_word)}
    pick = seeded_order(synonyms, seed)[:n], seeded_order(cohyponyms, seed)[:n]
    rand = random_pairs(pool, n, synonyms | cohyponyms, seed)
    counts = {"synonyms": len(synonyms), "cohyponyms": len(cohyponyms), "words": len(pool)}
    return WordPairs(*pick, rand, counts)


@dataclass
class SensePair:
    """One word in two held-out sentences, one for each of two of its senses."""

    word: str
    sentences: tuple[str, str]  # as they are in the split
    splits: tuple[str, str]  # "valid" or "test"
    senses: tuple[str, str]  # "noun: a sloping land beside water" ...


def held_out_sentences(
    splits: dict[str, list[str]], normalize: Callable[[str], str]
) -> dict[str, tuple[str, str]]:
    """normalized sentence -> (sentence, split name) for the "valid" and "test" sentences
    whose normalized form is not also a "train" sentence."""
    train = {normalize(s) for s in splits["train"]}
    held: dict[str, tuple[str, str]] = {}
    for split in ("valid", "test"):
        for sentence in splits[split]:
            if (norm := normalize(sentence)) not in train:
                held.setdefault(norm, (sentence, split))
    return held


def sense_pairs(
    synsets: dict[SynsetKey, Synset],
    held_out: dict[str, tuple[str, str]],
    normalize: Callable[[str], str],
    is_word: Callable[[str], bool],
    n: int,
    seed: int = SEED,
) -> list[SensePair]:
    """Up to n words (one pair each) used in two held-out example sentences of two synsets
    from different lexicographer files (a crude guard against near-identical senses).

    held_out: normalized sentence -> (the sentence as in its split, the split's name).
    """
    uses: dict[str, list[tuple[Synset, str]]] = defaultdict(list)
    for synset in synsets.values():
        for example in synset.examples:
            norm = normalize(example)
            if norm in held_out:
                for word in set(_words(synset, is_word)) & set(norm.split()):
                    uses[word].append((synset, norm))
    found: list[SensePair] = []
    for word in seeded_order(uses, seed):
        options = [
            (u, v)
            for u, v in combinations(uses[word], 2)
            if u[0].lexfile != v[0].lexfile and u[1] != v[1]
        ]
        if not options:
            continue
        u, v = seeded_order(options, seed, text=lambda o: f"{o[0][1]}|{o[1][1]}")[0]
        (text_u, split_u), (text_v, split_v) = held_out[u[1]], held_out[v[1]]
        senses = tuple(f"{POS_NAMES[s.key[0]]}: {s.definition}" for s in (u[0], v[0]))
        found.append(SensePair(word, (text_u, text_v), (split_u, split_v), senses))
        if len(found) == n:
            break
    return found


def samples_record(pairs: WordPairs, senses: list[SensePair]) -> dict:
    """The samples as plain data, for a JSON report."""
    return {
        "candidates": pairs.candidates,
        "synonyms": [list(p) for p in pairs.synonyms],
        "cohyponyms": [list(p) for p in pairs.cohyponyms],
        "random": [list(p) for p in pairs.random],
        "sense_pair_splits": dict(Counter(s for p in senses for s in p.splits)),
        "sense_pairs": [asdict(p) for p in senses],
    }
