"""The English -> Korean toy grammar (assets/data/translation/README.md): its lexicon, a
seeded sentence generator and the train / valid / test splits. The app's live translator
(model/toy_translator.py) trains on it; training/translation_data.py adds the tokenizer.

    lex = read_lexicon()
    rule_translation(lex, "i went to school and he reads a book every day")
    # '나는 학교에 갔고 그는 매일 책을 읽는다'
    splits = make_splits(lex)            # {"train": [Pair, ...], "valid": ..., "test": ...}

A clause is SUBJECT VERB OBJECT [ADVERB] in English and SUBJECT [ADVERB] OBJECT+PARTICLE VERB
in Korean; a sentence is 1 to 8 clauses joined by " and ". The lecture's pairs ("i go to
school", ...) are held out: no sentence of any split has one of them as a clause, with or
without an adverb.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from model.examples import TRANSLATION_PROBES

DATA_DIR = Path(__file__).resolve().parent.parent / "assets" / "data" / "translation"
LEXICON = DATA_DIR / "lexicon.tsv"
SPLITS = ("train", "valid", "test")
CLAUSE_COUNTS = range(1, 9)  # a sentence has 1 to 8 clauses
# Sentences per clause count in each split. 1-clause sentences are only ~6.4k in all, so the
# training split gets those that valid and test leave.
PER_COUNT = {"train": 25_000, "valid": 625, "test": 625}
SEED = 0
# The lecture's pairs (model/examples.py): never a clause of any split's sentence (with or
# without an adverb).
LECTURE = tuple(TRANSLATION_PROBES)

Pair = tuple[str, str, int]  # (english, korean, number of clauses)


# --- The lexicon ----------------------------------------------------------------------------


def has_batchim(word: str) -> bool:
    """Whether the word's last Hangul syllable ends in a consonant (학교: no; 책: yes)."""
    return (ord(word[-1]) - 0xAC00) % 28 != 0


@dataclass(frozen=True)
class Noun:
    english: str  # "the dog", "school"
    korean: str  # 개, 학교 (no particle)


@dataclass(frozen=True)
class Subject:
    english: str  # "i", "the dog"
    korean: str  # with its particle: 나는, 개가
    third_person: bool  # he, she and every animate noun take the 3sg verb


@dataclass(frozen=True)
class Verb:
    """A verb, or a fixed phrase (no object classes: it brings its own object)."""

    english: tuple[str, str, str]  # base, 3sg, past
    korean: tuple[str, str, str, str]  # present, past, present connective, past connective
    classes: tuple[str, ...]  # the noun classes its object comes from; () for a phrase


@dataclass(frozen=True)
class Adverb:
    english: str  # "every day"
    korean: str  # 매일
    tense: str  # "present" | "past" | "any"


@dataclass(frozen=True)
class Lexicon:
    subjects: list[Subject]
    nouns: dict[str, list[Noun]]  # class ("place", "animate", ...) -> its nouns
    verbs: list[Verb]  # the verbs, then the phrases
    adverbs: list[Adverb]


def read_lexicon(path: str | Path = LEXICON) -> Lexicon:
    """Parse lexicon.tsv (tab-separated; '#' starts a comment)."""
    subjects, nouns, verbs, adverbs = [], {}, [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, *f = line.split("\t")
        if kind == "pronoun":
            subjects.append(Subject(f[0], f[1], f[2] == "3sg"))
        elif kind == "animate":
            nouns.setdefault("animate", []).append(Noun(f[0], f[1]))
            subjects.append(Subject(f[0], f[1] + ("이" if has_batchim(f[1]) else "가"), True))
        elif kind in ("verb", "phrase"):
            classes = tuple(f[7].split(",")) if kind == "verb" else ()
            verbs.append(Verb((f[0], f[1], f[2]), (f[3], f[4], f[5], f[6]), classes))
        elif kind == "adverb":
            adverbs.append(Adverb(f[0], f[1], f[2]))
        else:  # a noun class: place, food, drink, text, show, likeable
            nouns.setdefault(kind, []).append(Noun(f[0], f[1]))
    return Lexicon(subjects, nouns, verbs, adverbs)


# --- A clause -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clause:
    subject: Subject
    verb: Verb
    obj: tuple[str, Noun] | None  # (the class it was chosen from, the noun); None: a phrase
    past: bool
    adverb: Adverb | None

    def core(self) -> str:
        """The English without the adverb: "i go to school"."""
        e = self.verb.english
        verb = e[2] if self.past else e[1] if self.subject.third_person else e[0]
        words = [self.subject.english, verb]
        if self.obj is not None:
            cls, noun = self.obj
            words += ["to", noun.english] if cls == "place" else [noun.english]
        return " ".join(words)

    def english(self) -> str:
        return f"{self.core()} {self.adverb.english}" if self.adverb else self.core()

    def korean(self, last: bool = True) -> str:
        """SUBJECT [ADVERB] OBJECT+PARTICLE VERB; the connective verb form unless `last`."""
        words = [self.subject.korean]
        if self.adverb:
            words.append(self.adverb.korean)
        if self.obj is not None:
            cls, noun = self.obj
            particle = "에" if cls == "place" else "을" if has_batchim(noun.korean) else "를"
            words.append(noun.korean + particle)
        words.append(self.verb.korean[int(self.past) + (0 if last else 2)])
        return " ".join(words)


def objects_of(lex: Lexicon, verb: Verb, subject: Subject) -> list[tuple[str, Noun]]:
    """The verb's possible objects; an animate one never repeats the subject."""
    return [
        (cls, noun)
        for cls in verb.classes
        for noun in lex.nouns[cls]
        if not (cls == "animate" and noun.english == subject.english)
    ]


def adverbs_for(lex: Lexicon, verb: Verb, past: bool) -> list[Adverb | None]:
    """None (no adverb) and the adverbs of the tense. The past of "read" (spelled like its
    present) comes only with "yesterday", so that every English sentence has one reading."""
    tense = "past" if past else "present"
    fitting = [a for a in lex.adverbs if a.tense in (tense, "any")]
    if past and verb.english[0] == verb.english[2]:  # read / read
        return [a for a in fitting if a.english == "yesterday"]
    return [None, *fitting]


def all_clauses(lex: Lexicon) -> list[Clause]:
    """Every clause the grammar allows (the lecture's included), in a fixed order."""
    return [
        Clause(subject, verb, obj, past, adverb)
        for subject in lex.subjects
        for verb in lex.verbs
        for obj in (objects_of(lex, verb, subject) or [None])
        for past in (False, True)
        for adverb in adverbs_for(lex, verb, past)
    ]


def held_out(clause: Clause) -> bool:
    """Whether the clause is one of the lecture's pairs (whatever its adverb)."""
    return clause.core() in LECTURE


def random_clause(lex: Lexicon, rng: random.Random) -> Clause:
    """Subject, verb (or phrase), object, tense and adverb, each drawn uniformly."""
    subject = rng.choice(lex.subjects)
    verb = rng.choice(lex.verbs)
    objects = objects_of(lex, verb, subject)
    obj = rng.choice(objects) if objects else None
    past = rng.random() < 0.5
    return Clause(subject, verb, obj, past, rng.choice(adverbs_for(lex, verb, past)))


# --- A sentence -----------------------------------------------------------------------------


def pair_of(clauses: list[Clause]) -> Pair:
    """English clauses joined by " and "; Korean ones by a space, all but the last connective."""
    english = " and ".join(c.english() for c in clauses)
    korean = " ".join(c.korean(last=i == len(clauses) - 1) for i, c in enumerate(clauses))
    return english, korean, len(clauses)


def rule_translation(lex: Lexicon, english: str) -> str:
    """The Korean the rules give a grammar sentence (KeyError for a clause outside them)."""
    by_english = {c.english(): c for c in all_clauses(lex)}
    return pair_of([by_english[part] for part in english.split(" and ")])[1]


def candidates(lex: Lexicon, n: int, rng: random.Random) -> Iterator[list[Clause]]:
    """Sentences of n clauses, none of them held out: every 1-clause sentence once, in a
    shuffled order; longer ones drawn at random for ever (repeats possible)."""
    if n == 1:
        pool = [[c] for c in all_clauses(lex) if not held_out(c)]
        rng.shuffle(pool)
        yield from pool
        return
    while True:
        clauses = [random_clause(lex, rng) for _ in range(n)]
        if not any(held_out(c) for c in clauses):
            yield clauses


def make_splits(
    lex: Lexicon,
    seed: int = SEED,
    per_count: dict[str, int] | None = None,
    counts: Iterable[int] = CLAUSE_COUNTS,
) -> dict[str, list[Pair]]:
    """Deduplicated, disjoint splits, stratified by clause count: for each count 1..8 (or
    those of `counts`: each count's sentences are the same either way), test first, then
    valid, then train take the next unseen sentences (the same seed, the same splits)."""
    per_count = per_count or PER_COUNT
    splits: dict[str, list[Pair]] = {name: [] for name in SPLITS}
    for n in counts:
        stream = candidates(lex, n, random.Random(seed * 1000 + n))
        seen: set[str] = set()
        for name in ("test", "valid", "train"):
            taken = 0
            for clauses in stream:
                english, korean, _ = pair = pair_of(clauses)
                if english in seen:
                    continue
                seen.add(english)
                splits[name].append(pair)
                taken += 1
                if taken == per_count[name]:
                    break
    return splits


def clause_counts(pairs: list[Pair]) -> dict[int, int]:
    """How many pairs have 1, 2, ..., 8 clauses."""
    return {n: sum(1 for p in pairs if p[2] == n) for n in CLAUSE_COUNTS}
