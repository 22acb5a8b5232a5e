"""The training corpus: WordNet's glosses plus a small seeded grammar of the lecture's topics.

Two sources, one sentence per line:

- WordNet 3.0 (Debian's `wordnet-base`): every synset's definitions ("a slope beside a body
  of water.") and example sentences ("they pulled the canoe up on the bank").
- A random grammar written here over the lecture's vocabulary: river banks and money banks,
  researchers and their experiments, doors, dogs biting men and men biting dogs, cats on
  mats, schools, materials, programming languages and industrial AI.

The lecture's own sentences (PROBES) are what the app shows the models doing; they are never
training data: any corpus sentence whose normalized form contains a probe is dropped.

    python -m training.data    # writes assets/data/{train,valid,test}.txt.gz and tokenizer.json
"""

from __future__ import annotations

import gzip
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from model.examples import PROBES

DATA_DIR = Path(__file__).resolve().parent.parent / "assets" / "data"
WORDNET_ROOT = "/usr/share/wordnet"
WORDNET_COPYRIGHT = "/usr/share/doc/wordnet-base/copyright"
GRAMMAR_N = 60_000  # how many unique grammar sentences the shipped corpus asks for
GRAMMAR_SEED = 0
SPLITS = ("train", "valid", "test")
HELD_OUT = 0.05  # the share of the corpus in each of valid and test

# --- Normalization and the probe rule ----------------------------------------------------


def normalize(text: str) -> str:
    """Lowercase, punctuation to spaces, whitespace collapsed: the form used to compare."""
    text = re.sub(r"[\W_]+", " ", text.lower())
    return " ".join(text.split())


_NORMALIZED_PROBES = [normalize(p) for p in PROBES]


def contains_probe(text: str) -> bool:
    """Whether the normalized `text` equals or contains the normalized form of any probe."""
    norm = normalize(text)
    return any(p in norm for p in _NORMALIZED_PROBES)


# --- WordNet ---------------------------------------------------------------------------


WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
_JUNK = re.compile(r"[_<>{}|\\@#*=\[\]]")
_EXAMPLE = re.compile(r'"([^"]*)"')


def _split_gloss(gloss: str) -> list[str]:
    """Split a gloss on the semicolons that are outside double quotes."""
    parts, current, quoted = [], [], False
    for ch in gloss:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _clean(text: str) -> str | None:
    """Tidy one definition or example; None when it is junk or outside 3..40 words."""
    text = " ".join(text.replace("`", "'").split()).strip(" ,")
    if not text or _JUNK.search(text) or '"' in text:
        return None
    if text.count("(") != text.count(")") or not re.search(r"[A-Za-z]{2}", text):
        return None
    if not 3 <= len(text.split()) <= 40:
        return None
    return text


def _wordnet_items(root: str | Path = WORDNET_ROOT) -> list[tuple[str, str]]:
    """(sentence, "definition" | "example") for every usable gloss part, in file order."""
    items: list[tuple[str, str]] = []
    for name in WORDNET_FILES:
        with open(Path(root) / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue  # the licence header, or a synset without a gloss
                for part in _split_gloss(line.split(" | ", 1)[1]):
                    if part.startswith('"'):
                        for example in _EXAMPLE.findall(part):
                            if text := _clean(example):
                                items.append((text, "example"))
                    elif text := _clean(part.rstrip(".:")):
                        items.append((text[0].upper() + text[1:] + ".", "definition"))
    return items


def wordnet_sentences(root: str | Path = WORDNET_ROOT) -> list[str]:
    """WordNet's definitions (capitalised, with a full stop) and example sentences."""
    return [text for text, _ in _wordnet_items(root)]


# --- The grammar -----------------------------------------------------------------------
#
# A template is a string with slots:
#   {WATER}        a rule: one of its alternatives, itself expanded (alternatives may be "")
#   {P}            an entity's name; the first use of a role (P, Q, R, ...) draws an entity
#                  from that role's pool, and later uses in the sentence mean the same one
#   {P_o}          one of the entity's attributes (a list attribute: one item, at random)
#   {P|go|goes}    verb agreement: the first form for I/we/they, the second for she/he/it
# Roles drawn in one sentence are distinct entities. A template may also be a function
# of the random generator (for comparisons that need an ordered table).

Entity = dict[str, object]


def _person(name: str, pronoun: str) -> Entity:
    """A person who can be referred to again: {X} name, {X_s} {X_o} {X_p} pronouns,
    {X_obj} the name in object position, {X_was} was/were, and verb agreement."""
    subj, obj, poss, was = {
        "I": ("I", "me", "my", "was"),
        "we": ("we", "us", "our", "were"),
        "they": ("they", "them", "their", "were"),
        "she": ("she", "her", "her", "was"),
        "he": ("he", "him", "his", "was"),
    }[pronoun]
    is_pronoun = name in ("I", "we", "they", "she", "he")
    return {
        "name": name,
        "s": subj,
        "o": obj,
        "p": poss,
        "was": was,
        "obj": obj if is_pronoun else name,
        "plural": pronoun in ("I", "we", "they"),
    }


def _people(*entries: str) -> list[Entity]:
    """Persons from "name/pronoun" strings; "name/he|she" makes one of each."""
    out = []
    for entry in entries:
        name, pronouns = entry.rsplit("/", 1)
        out += [_person(name, p) for p in pronouns.split("|")]
    return out


ROLES: dict[str, list[Entity]] = {
    # anyone in a story (P and Q are two different people)
    "P": _people(
        "I/I",
        "we/we",
        "they/they",
        "she/she",
        "he/he",
        "my sister/she",
        "my brother/he",
        "my friend/she|he",
        "my father/he",
        "my mother/she",
        "the old man/he",
        "the young woman/she",
        "the tourist/she|he",
        "the boy/he",
        "the girl/she",
        "the children/they",
        "my parents/they",
        "Anna/she",
        "Tom/he",
        "Maria/she",
        "David/he",
        "Sara/she",
        "James/he",
        "the farmer/she|he",
        "our neighbour/she|he",
    ),
    "R": _people(
        "the researcher/she|he",
        "the scientist/she|he",
        "the professor/she|he",
        "the chemist/she|he",
        "the biologist/she|he",
        "the physicist/she|he",
        "the engineer/she|he",
        "the lead researcher/she|he",
    ),
    "A": _people(
        "the assistant/she|he",
        "the technician/she|he",
        "the student/she|he",
        "the intern/she|he",
        "the lab assistant/she|he",
        "the young assistant/she|he",
        "the research assistant/she|he",
    ),
    "T": _people(
        "the teacher/she|he",
        "our teacher/she|he",
        "the new teacher/she|he",
        "the maths teacher/she|he",
        "the history teacher/she|he",
        "Mr Brown/he",
        "Mrs Green/she",
        "Ms Lopez/she",
    ),
    "M": _people(
        "the man/he",
        "the boy/he",
        "the old man/he",
        "the woman/she",
        "the girl/she",
        "the farmer/she|he",
        "the postman/he",
        "the child/she|he",
        "my neighbour/she|he",
        "the little boy/he",
        "the young man/he",
    ),
}
ROLES["Q"] = ROLES["P"]


RULES: dict[str, list[str]] = {
    # time, place, frequency: shared by several topics
    "TIME": [
        "",
        "in the morning",
        "at dawn",
        "after lunch",
        "in the evening",
        "yesterday",
        "on Sunday",
        "last summer",
        "before sunset",
        "early in the morning",
    ],
    "OFTEN": [
        "every weekend",
        "in the summer",
        "most evenings",
        "every morning",
        "when the weather is good",
        "on Saturdays",
        "whenever it is sunny",
    ],
    # rivers
    "WATER": [
        "river",
        "lake",
        "stream",
        "wide river",
        "cold river",
        "fast river",
        "canal",
        "bay",
        "small lake",
        "old canal",
    ],
    "RIVERBANK": [
        "river bank",
        "riverbank",
        "bank of the river",
        "muddy bank",
        "grassy bank",
        "shore",
        "water's edge",
        "bank of the stream",
        "bank of the lake",
        "steep bank",
        "sandy shore",
        "north bank",
    ],
    "SWIM_GOAL": [
        "",
        "to get to the other side",
        "to reach the far bank",
        "to reach the opposite bank",
        "to reach the other shore",
        "to get to the other bank",
        "to the small island",
        "to the sandy beach",
        "to meet {P_p} friends",
        "to fetch the boat",
    ],
    "BANKSIDE": ["grassy", "muddy", "steep", "quiet", "shady", "sandy", "", "far", "green"],
    "WATCHED": [
        "boats",
        "ducks",
        "water",
        "sunset",
        "fish jump",
        "children play",
        "clouds",
        "swans",
        "fishermen",
    ],
    "FISH": [
        "a small trout",
        "two carp",
        "nothing at all",
        "a big salmon",
        "three perch",
        "an old boot",
        "a pike",
        "enough fish for dinner",
    ],
    "BOAT": ["boat", "small boat", "canoe", "raft", "ferry", "old fishing boat", "rowing boat"],
    "FAR": ["far", "other", "opposite", "northern", "southern", "western"],
    "REST": [
        "rested under a tree",
        "dried {P_p} clothes in the sun",
        "waved to {P_p} friends",
        "lay down on the grass",
        "looked back at the water",
        "sat down to catch {P_p} breath",
        "ate {P_p} sandwiches",
    ],
    "WATERQ": ["shallow", "deep", "cold", "warm", "muddy", "clear", "calm"],
    "CROSS_HOW": [
        "by boat",
        "on a raft",
        "on foot",
        "by swimming",
        "over the old bridge",
        "in a canoe",
        "on the ferry",
    ],
    "RAIN": ["the heavy rain", "the storm", "weeks of rain", "the snow melted", "the spring rain"],
    # money
    "GO": ["went", "walked", "drove", "hurried", "cycled", "took the bus", "ran"],
    "ROAD": ["road", "street", "square", "busy street", "car park", "market square"],
    "AMOUNT": [
        "fifty dollars",
        "a hundred euros",
        "two hundred pounds",
        "some money",
        "{P_p} salary",
        "the money from {P_p} new job",
        "a small amount",
        "ten thousand dollars",
        "all {P_p} savings",
        "twenty pounds",
    ],
    "LOAN_AMOUNT": [
        "fifty thousand dollars",
        "a lot of money",
        "some money",
        "a large sum",
        "two thousand pounds",
        "ten thousand euros",
    ],
    "ACCOUNT": ["account", "savings account", "bank account", "checking account", "new account"],
    "MONEY_ACT": [
        "deposit {AMOUNT}",
        "withdraw {AMOUNT}",
        "withdraw some cash",
        "get some cash",
        "open a savings account",
        "open an account",
        "ask for a loan",
        "apply for a loan",
        "pay {P_p} rent",
        "close {P_p} account",
        "change some money",
        "pay off {P_p} loan",
        "check {P_p} balance",
        "talk to the manager",
        "cash a cheque",
    ],
    "CASH_FROM": ["bank", "cash machine", "bank on the corner", "ATM", "bank near the station"],
    "BUY": [
        "buy a house",
        "start a business",
        "pay for university",
        "buy a new car",
        "repair the roof",
        "open a small shop",
        "buy a farm",
    ],
    "LOAN_YES": [
        "{P_s} had a steady job",
        "{P_p} plan was good",
        "{P_s} had saved for years",
        "{P_p} income was high enough",
    ],
    "LOAN_NO": [
        "{P_p} income was too low",
        "{P_s} had too much debt",
        "{P_s} had no steady job",
        "{P_p} plan was too risky",
    ],
    "CARD": ["bank card", "credit card", "wallet", "PIN"],
    "CITY": ["London", "Seoul", "the city", "a small town", "Berlin", "New York"],
    # research
    "RUN": ["run", "repeat", "redo", "check", "rerun", "carefully repeat", "run"],
    "AGAIN": [
        "again",
        "once more",
        "a second time",
        "the next day",
        "with more samples",
        "",
        "again",
    ],
    "EXP": [
        "experiment",
        "first experiment",
        "second experiment",
        "new experiment",
        "test",
        "trial",
        "measurement",
    ],
    "DISSAT": [
        "{R_was} not satisfied with the results",
        "did not trust the results",
        "{R_was} unhappy with the data",
        "suspected a mistake",
        "wanted more data",
        "doubted the first measurement",
        "{R_was} worried about the noise in the data",
        "had found an error in the setup",
        "{R_was} not sure about the results",
        "thought the results were too good to be true",
    ],
    "ASST_REASON": [
        "had made a mistake",
        "had used the wrong sample",
        "had forgotten to record the temperature",
        "{A_was} the only one who knew the equipment",
        "had more time",
        "had run it too quickly",
    ],
    "RAN": ["ran", "repeated", "checked", "finished", "redid", "ran"],
    "SHOWED": ["showed", "sent", "reported", "explained", "presented"],
    "RES_ADJ": [
        "surprising",
        "disappointing",
        "clear",
        "noisy",
        "promising",
        "inconclusive",
        "very good",
        "hard to explain",
        "exactly as expected",
    ],
    "SATIS": [
        "was satisfied",
        "was not satisfied",
        "was pleased",
        "was very happy",
        "was disappointed",
        "was not happy",
        "was quite satisfied",
    ],
    "BAD_RES": ["noisy", "strange", "inconsistent", "unclear", "too good to be true"],
    "ASST_ACT": [
        "prepared the samples",
        "cleaned the equipment",
        "recorded the data",
        "checked the temperature",
        "calibrated the instruments",
    ],
    "RES_ACT": [
        "wrote the report",
        "read the results",
        "planned the next experiment",
        "talked to the students",
        "answered emails",
    ],
    # doors
    "DOOR": [
        "",
        "front",
        "back",
        "kitchen",
        "heavy",
        "wooden",
        "red",
        "old",
        "garden",
        "bedroom",
        "glass",
    ],
    "DOOR_REACT": [
        "smiled at {Q_obj}",
        "laughed",
        "waved",
        "stepped inside",
        "looked around",
        "said hello",
        "walked in",
        "let the cat in",
        "let {Q_obj} in",
        "smiled at the children",
        "looked outside",
    ],
    "CLOSE": ["closed", "shut", "locked", "unlocked", "slammed", "painted", "opened"],
    "CLOSE_HOW": [
        "behind {P_o}",
        "quietly",
        "carefully",
        "and left",
        "with a key",
        "before going to bed",
        "",
    ],
    "KNOCK_HOW": [
        "twice",
        "loudly",
        "softly",
        "and waited",
        "but nobody answered",
        "three times",
        "and {Q} opened it",
    ],
    "GREET": ["smiled at", "waved at", "looked at", "laughed at", "hugged", "nodded at"],
    "DOOR_TROUBLE": [
        "was locked, so {P} used {P_p} key",
        "was stuck, so {P} pushed harder",
        "would not open, so {P} climbed through the window",
        "creaked loudly, so {P} oiled the hinges",
        "was locked, so {P} knocked again",
    ],
    # dogs and men
    "DOG": [
        "dog",
        "big dog",
        "small dog",
        "old dog",
        "black dog",
        "angry dog",
        "friendly dog",
        "neighbour's dog",
        "stray dog",
        "brown dog",
        "young dog",
    ],
    "VICTIM": [
        "man",
        "cat",
        "boy",
        "girl",
        "postman",
        "woman",
        "old man",
        "child",
        "neighbour",
        "farmer",
    ],
    "DOG_V": [
        "chased",
        "bit",
        "licked",
        "followed",
        "barked at",
        "jumped on",
        "growled at",
        "ran after",
        "sniffed",
        "ignored",
    ],
    "MAN_V": [
        "fed",
        "walked",
        "patted",
        "chased",
        "bit",
        "washed",
        "called",
        "trained",
        "found",
        "stroked",
        "followed",
    ],
    "WHERE": [
        "",
        "in the park",
        "in the garden",
        "on the street",
        "yesterday",
        "near the gate",
        "this morning",
        "by the river",
    ],
    "DOG_WHY": ["hungry", "scared", "angry", "excited", "playful", "bored"],
    "MAN_WHY": [
        "loved it",
        "felt sorry for it",
        "had time",
        "was angry",
        "was bored",
        "wanted to play",
    ],
    "DOG_AFTER": [
        "ran away",
        "barked loudly",
        "was caught",
        "belonged to my neighbour",
        "wagged its tail",
        "fell asleep",
        "was taken home",
    ],
    "MAN_AFTER": ["waved at me", "went home", "smiled", "lived next door", "was tired", "laughed"],
    "MAN_REACT": [
        "shouted",
        "ran home",
        "called the police",
        "laughed",
        "gave it a bone",
        "went to the doctor",
    ],
    # cats
    "CAT_DET": ["the", "a", "my", "our", "her", "his", "the"],
    "CAT": [
        "cat",
        "black cat",
        "white cat",
        "little cat",
        "old cat",
        "lazy cat",
        "grey cat",
        "kitten",
        "neighbour's cat",
        "fat cat",
        "ginger cat",
    ],
    "SAT": [
        "sat",
        "slept",
        "lay",
        "curled up",
        "was sleeping",
        "was sitting",
        "stretched out",
        "waited",
    ],
    "SITS": ["sits", "sleeps", "lies", "naps", "waits"],
    "SPOT": [
        "mat",
        "sofa",
        "chair",
        "bed",
        "rug",
        "windowsill",
        "carpet",
        "cushion",
        "doormat",
        "roof",
        "fence",
        "table",
        "step",
        "box",
        "wall",
    ],
    "CAT_TIME": [
        "",
        "all day",
        "all afternoon",
        "in the sun",
        "by the fire",
        "near the window",
        "after dinner",
    ],
    "CAT_OFTEN": [
        "every morning",
        "every afternoon",
        "when it is cold",
        "when it rains",
        "most days",
        "after breakfast",
    ],
    "CAT_ACT": [
        "fell asleep",
        "began to purr",
        "watched the birds",
        "washed its face",
        "looked at me",
        "closed its eyes",
    ],
    "CAT_V": ["chased", "caught", "watched", "played with", "ignored"],
    "CAT_OBJ": ["mouse", "bird", "ball", "string", "fly", "shadow", "dog"],
    "BUSY": ["worked", "read", "cooked dinner", "watched television", "wrote a letter"],
    # school
    "SCHOOL_HOW": [
        "by bus",
        "on foot",
        "by bike",
        "every morning",
        "at eight o'clock",
        "with {P_p} friends",
        "five days a week",
    ],
    "WALK_HOW": [
        "in the rain",
        "with {P_p} sister",
        "early",
        "alone",
        "every day",
        "with {Q_obj}",
        "through the park",
    ],
    "TASK": [
        "read the story",
        "solve the problem",
        "write an essay",
        "open their books",
        "be quiet",
        "work in pairs",
        "learn the poem",
        "hand in their homework",
    ],
    "TOPIC": [
        "fractions",
        "the water cycle",
        "the history of Rome",
        "the rules of grammar",
        "how plants grow",
        "photosynthesis",
        "the solar system",
    ],
    "DONE": [
        "finished their homework",
        "worked hard",
        "passed the test",
        "listened carefully",
        "helped each other",
    ],
    "AFTER_SCHOOL": [
        "played football",
        "went home",
        "did {P_p} homework",
        "visited {P_p} grandmother",
        "practised the piano",
        "read a book",
    ],
    "SCHOOL_REASON": [
        "the teachers are kind",
        "{P_s} {P|have|has} many friends there",
        "the lessons are interesting",
        "{P_s} {P|like|likes} learning",
    ],
    "SCHOOL_FACT": [
        "is near the river",
        "has a big library",
        "opens at eight",
        "closed early because of the snow",
        "has a new sports hall",
    ],
    # industrial AI
    "AI": [
        "artificial intelligence",
        "machine learning",
        "AI",
        "deep learning",
        "industrial AI",
        "computer vision",
    ],
    "AI_V": ["is changing", "helps", "improves", "is transforming", "has changed", "supports"],
    "INDUSTRY": [
        "industry",
        "manufacturing",
        "factories",
        "the steel industry",
        "car factories",
        "logistics",
        "agriculture",
        "energy companies",
    ],
    "POWER": [
        "steam",
        "electricity",
        "machines",
        "computers",
        "artificial intelligence",
        "modern machines",
        "robots",
        "water",
    ],
    "TRANSFORMED": ["transformed", "changed", "reshaped", "drove"],
    "ROBOTS": ["robots", "machines", "robotic arms", "industrial robots"],
    "ROBOT_V": ["weld", "paint", "assemble", "inspect", "sort", "pack"],
    "PARTS": ["car parts", "engines", "steel beams", "bottles", "boxes", "circuit boards"],
    "AI_TASK": [
        "predict when a machine will fail",
        "find defects in products",
        "plan production",
        "save energy",
        "control robots",
        "check the quality of welds",
    ],
    "MACHINE": ["machines", "robots", "conveyor belts", "pumps", "engines"],
}


def _compare(
    scores: dict[str, dict[str, int]], words: dict[str, tuple[str, str]], gap: int = 2
) -> Callable[[random.Random], str]:
    """A template function: "steel is stronger than rubber." (or "rubber is weaker than
    steel.") for two items whose scores on a quality differ by at least `gap`."""

    def make(rng: random.Random) -> str:
        quality = rng.choice(sorted(scores))
        table = scores[quality]
        a, b = rng.sample(sorted(table), 2)
        if table[a] - table[b] < gap:
            return ""  # too close to call (or the wrong way round): try another
        more, less = words[quality]
        return rng.choice([f"{a} is {more} than {b}.", f"{b} is {less} than {a}."])

    return make


def _contrast(pool: list[dict], frame: str) -> Callable[[random.Random], str]:
    """A template function: `frame` filled with two items and a property only the first has,
    e.g. "unlike {b}, {a} is {prop}." -> "unlike glass, rubber is flexible."."""

    def make(rng: random.Random) -> str:
        a, b = rng.sample(pool, 2)
        props = [p for p in a["prop"] if p not in b["prop"]]
        return frame.format(a=a["name"], b=b["name"], prop=rng.choice(props)) if props else ""

    return make


# Materials and programming languages: {X} / {Y} and {K} / {L} in the templates.
MATERIALS: list[Entity] = [
    {
        "name": "steel",
        "adj": "steel",
        "kind": "metal",
        "prop": ["strong", "hard", "heavy", "durable"],
        "use": ["bridges", "buildings", "tools", "knives", "cars", "railway tracks"],
        "thing": ["knife", "pan", "fork", "toolbox", "bicycle frame"],
    },
    {
        "name": "aluminum",
        "adj": "aluminum",
        "kind": "metal",
        "prop": ["light", "strong", "resistant to rust", "easy to shape"],
        "use": ["aircraft", "drink cans", "bicycles", "window frames", "ladders"],
        "thing": ["ladder", "can", "bicycle frame", "window frame", "pan"],
    },
    {
        "name": "copper",
        "adj": "copper",
        "kind": "metal",
        "prop": ["soft", "a good conductor of electricity", "reddish", "easy to bend"],
        "use": ["electrical wires", "water pipes", "coins", "cooking pots"],
        "thing": ["wire", "pipe", "coin", "pot", "pan"],
    },
    {
        "name": "rubber",
        "adj": "rubber",
        "kind": "material",
        "prop": ["flexible", "elastic", "soft", "waterproof"],
        "use": ["tires", "boots", "gloves", "balls", "seals"],
        "thing": ["ball", "boot", "glove", "tire", "band"],
    },
    {
        "name": "wood",
        "adj": "wooden",
        "kind": "material",
        "prop": ["light", "natural", "renewable", "easy to cut"],
        "use": ["chairs", "tables", "houses", "boats", "floors"],
        "thing": ["chair", "table", "boat", "spoon", "box"],
    },
    {
        "name": "glass",
        "adj": "glass",
        "kind": "material",
        "prop": ["transparent", "brittle", "hard", "smooth"],
        "use": ["windows", "bottles", "lenses", "mirrors"],
        "thing": ["bottle", "window", "vase", "lens", "jar"],
    },
    {
        "name": "plastic",
        "adj": "plastic",
        "kind": "material",
        "prop": ["light", "cheap", "flexible", "waterproof"],
        "use": ["bottles", "toys", "bags", "containers", "pipes"],
        "thing": ["bottle", "toy", "bag", "box", "spoon"],
    },
]
MATERIAL_SCORES = {
    "strength": {
        "steel": 5,
        "aluminum": 3,
        "copper": 3,
        "wood": 2,
        "glass": 2,
        "plastic": 1,
        "rubber": 1,
    },
    "weight": {
        "steel": 5,
        "copper": 5,
        "glass": 3,
        "aluminum": 2,
        "rubber": 1,
        "plastic": 1,
        "wood": 0,
    },
    "flexibility": {
        "rubber": 5,
        "plastic": 3,
        "copper": 2,
        "aluminum": 2,
        "wood": 1,
        "steel": 1,
        "glass": 0,
    },
    "price": {
        "copper": 5,
        "aluminum": 4,
        "steel": 3,
        "glass": 2,
        "rubber": 2,
        "wood": 2,
        "plastic": 0,
    },
}
MATERIAL_WORDS = {
    "strength": ("stronger", "weaker"),
    "weight": ("heavier", "lighter"),
    "flexibility": ("more flexible", "stiffer"),
    "price": ("more expensive", "cheaper"),
}

LANGUAGES: list[Entity] = [
    {
        "name": "C++",
        "prop": ["fast", "compiled", "statically typed", "strongly typed"],
        "kind": "object-oriented",
        "use": ["games", "operating systems", "web browsers", "embedded systems"],
    },
    {
        "name": "Java",
        "prop": ["strongly typed", "statically typed", "portable", "object-oriented"],
        "kind": "object-oriented",
        "use": ["business applications", "Android apps", "web servers", "banking systems"],
    },
    {
        "name": "Python",
        "prop": ["dynamic", "dynamically typed", "interpreted", "readable"],
        "kind": "scripting",
        "use": [
            "data analysis scripts",
            "machine learning models",
            "small scripts",
            "web applications",
        ],
    },
    {
        "name": "Haskell",
        "prop": ["functional", "strongly typed", "statically typed", "lazy", "pure"],
        "kind": "functional",
        "use": ["compilers", "research prototypes", "financial programs"],
    },
    {
        "name": "Rust",
        "prop": ["fast", "compiled", "strongly typed", "memory-safe"],
        "kind": "systems",
        "use": [
            "command line tools",
            "web servers",
            "embedded systems",
            "operating system kernels",
        ],
    },
    {
        "name": "JavaScript",
        "prop": ["dynamic", "interpreted", "weakly typed", "dynamically typed"],
        "kind": "scripting",
        "use": ["web pages", "web applications", "interactive websites"],
    },
]
LANGUAGE_SCORES = {
    "speed": {"C++": 5, "Rust": 5, "Java": 4, "Haskell": 3, "JavaScript": 2, "Python": 1},
    "simplicity": {"Python": 5, "JavaScript": 4, "Java": 2, "Haskell": 1, "Rust": 1, "C++": 0},
}
LANGUAGE_WORDS = {
    "speed": ("faster", "slower"),
    "simplicity": ("easier to learn", "harder to learn"),
}
ROLES.update({"X": MATERIALS, "Y": MATERIALS, "K": LANGUAGES, "L": LANGUAGES})

Template = str | Callable[[random.Random], str]

TOPICS: dict[str, list[Template]] = {
    "river": [
        "{P} swam across the {WATER} {SWIM_GOAL} {TIME}.",
        "{P} walked along the {RIVERBANK} {TIME}.",
        "{P} {P|fish|fishes} from the {RIVERBANK} {OFTEN}.",
        "{P} fished from the {RIVERBANK} and caught {FISH}.",
        "{P} sat on the {BANKSIDE} bank of the {WATER} and watched the {WATCHED}.",
        "the {WATER} {TRANSFORMED_FLOOD} its banks after {RAIN}.",
        "the {BOAT} drifted slowly toward the {FAR} bank of the {WATER}.",
        "the water near the {RIVERBANK} was {WATERQ}, so {P} {WADE}.",
        "when {P} reached the {FAR} bank, {P_s} {REST}.",
        "{P} had a picnic with {Q_obj} on the bank of the {WATER}.",
        "{P} stood on the {RIVERBANK} and threw {P_p} line into the water.",
        "{P} {PLAYED} on the {RIVERBANK} while {Q} swam in the {WATER}.",
        "{P} crossed the {WATER} {CROSS_HOW} and climbed up the {FAR} bank.",
        "after {P_s} swam across the {WATER}, {P} {REST}.",
        "because the {WATER} was {WATERQ}, {P} swam to the {FAR} bank {TIME}.",
        "the {BANKSIDE} bank of the {WATER} was covered with {COVER}.",
    ],
    "money": [
        "{P} {GO} to the bank to {MONEY_ACT} {TIME}.",
        "{P} walked across the {ROAD} to {MONEY_ACT} at the bank.",
        "{P} crossed the {ROAD} to get cash from the {CASH_FROM}.",
        "{P} deposited {AMOUNT} into {P_p} {ACCOUNT}.",
        "{P} withdrew {AMOUNT} from {P_p} {ACCOUNT} {WITHDRAW_WHY}.",
        "the bank {APPROVED} {P_p} loan because {LOAN_YES}.",
        "the bank {REFUSED} {P_p} loan because {LOAN_NO}.",
        "{P} borrowed {LOAN_AMOUNT} from the bank to {BUY}.",
        "{P} could not withdraw any cash because {P_s} had lost {P_p} {CARD}.",
        "{P} asked the bank for a loan to {BUY}.",
        "the bank {CHARGES} interest on {LOANS}.",
        "the cashier at the bank counted the money and gave it to {P_obj}.",
        "{P} {P|work|works} at a bank in {CITY}.",
        "after {P_s} paid the bills, there was little money left in {P_p} {ACCOUNT}.",
        "{P} got cash from the {CASH_FROM} before {P_s} went to the market.",
        "the bank {BANK_FACT}.",
    ],
    "research": [
        "{R} asked {A_obj} to {RUN} the {EXP} {AGAIN} because {R_s} {DISSAT}.",
        "{R} asked {A_obj} to {RUN} the {EXP} {AGAIN} because {A_s} {ASST_REASON}.",
        "{A} {RAN} the {EXP} {AGAIN} and {SHOWED} the results to {R_obj}.",
        "the results of the {EXP} were {RES_ADJ}.",
        "{R} {SATIS} with the results of the {EXP}.",
        "{R} was not satisfied with the results, so {R_s} asked {A_obj} to {RUN} the {EXP}.",
        "although the {EXP} worked, {R} wanted to {RUN} it {AGAIN}.",
        "{A} repeated the {EXP} {N_TIMES} {UNTIL}.",
        "{R} published the results after {A} {RAN} the {EXP} {AGAIN}.",
        "because the results were {BAD_RES}, {R} asked for another {EXP}.",
        "{A} {ASST_ACT} while {R} {RES_ACT}.",
        "{R} thanked {A_obj} because {A_s} had {RAN_PP} the {EXP} so carefully.",
        "when the results came in, {R} {SATIS}.",
        "{R} told {A_obj} that the {EXP} had to be repeated.",
    ],
    "door": [
        "{P} opened the {DOOR} door and {DOOR_REACT}.",
        "{P} opened the {DOOR} door and smiled.",
        "{P} {CLOSE} the {DOOR} door {CLOSE_HOW}.",
        "{P} knocked on the {DOOR} door {KNOCK_HOW}.",
        "when {P} opened the door, {Q} {GREET} {P_o}.",
        "{P} smiled when {P_s} saw {Q_obj} at the door.",
        "someone knocked at the door, so {P} {OPENED_IT}.",
        "the door {DOOR_TROUBLE}.",
        "{P} left the {DOOR} door open {OPEN_WHY}.",
        "{P} opened the door slowly because {P_s} {AFRAID}.",
        "{Q} {Q_was} standing at the door when {P} came home.",
    ],
    "dog": [
        "the {DOG} {DOG_V} the {VICTIM} {WHERE}.",
        "a {DOG} {DOG_V} the {VICTIM} {WHERE}.",
        "{M} {MAN_V} the {DOG} {WHERE}.",
        "{M} {MAN_V} a {DOG} {WHERE}.",
        "the {DOG} {DOG_V} the {VICTIM} because it was {DOG_WHY}.",
        "{M} {MAN_V} the {DOG} because {M_s} {MAN_WHY}.",
        "the {DOG} that {DOG_V} the {VICTIM} {DOG_AFTER}.",
        "{M} who {MAN_V} the {DOG} {MAN_AFTER}.",
        "after the {DOG} {DOG_V} {M_obj}, {M_s} {MAN_REACT}.",
        "the {VICTIM} was {DOG_PASSIVE} by the {DOG} {WHERE}.",
        "the {DOG} was {MAN_PASSIVE} by the {VICTIM} {WHERE}.",
        "{P} {P|walk|walks} the {DOG} {OFTEN}.",
    ],
    "cat": [
        "{CAT_DET} {CAT} {SAT} on the {SPOT} {CAT_TIME}.",
        "{CAT_DET} {CAT} {SITS} on the {SPOT} {CAT_OFTEN}.",
        "{CAT_DET} {CAT} jumped onto the {SPOT} and {CAT_ACT}.",
        "while {P} {BUSY}, the {CAT} {SAT} on the {SPOT}.",
        "the {CAT} {CAT_V} the {CAT_OBJ} {CAT_TIME}.",
        "{P} {P|feed|feeds} the {CAT} {CAT_OFTEN}.",
        "{P} found the {CAT} asleep on the {SPOT}.",
        "the {CAT} sat on the {SPOT} because it was {WARM}.",
        "{CAT_DET} {CAT} {SAT} on the {SPOT} and {CAT_ACT}.",
    ],
    "school": [
        "{P} {P|go|goes} to school {SCHOOL_HOW}.",
        "{P} walked to school {WALK_HOW}.",
        "{P} {P|walk|walks} to school {OFTEN}.",
        "{T} asked the students to {TASK}.",
        "{T} explained {TOPIC} to the class.",
        "{T} was pleased because the students had {DONE}.",
        "after school, {P} {AFTER_SCHOOL}.",
        "the students {STUDIED} {TOPIC} {TIME}.",
        "{P} {P|like|likes} school because {SCHOOL_REASON}.",
        "when {P} {P_was} young, {P_s} walked to school {WALK_HOW}.",
        "the school {SCHOOL_FACT}.",
        "{T} smiled because {P} had {DONE_ONE}.",
        "{P} went to school {SCHOOL_HOW} {TIME}.",
        "{T} asked {P_obj} to {TASK_ONE} {TIME}.",
        "{P} forgot {P_p} {SCHOOL_THING} at school {TIME}.",
        "{P} {P|study|studies} {TOPIC} at school {OFTEN}.",
        "{P} {P|take|takes} the bus to school because it {SCHOOL_FAR}.",
    ],
    "materials": [
        "{X} is {X_prop}.",
        "{X} is {X_prop} and {X_prop}.",
        "{X} is used to make {X_use}.",
        "many {X_use} are made of {X}.",
        "engineers use {X} for {X_use} because it is {X_prop}.",
        "{X} is often used for {X_use} because it is {X_prop}.",
        _contrast(MATERIALS, "unlike {b}, {a} is {prop}."),
        _contrast(MATERIALS, "{a} is {prop}, but {b} is not."),
        "{X} and {Y} are both useful materials, but {X} is {X_prop}.",
        "the {X_use} were made of {X} because {X} is {X_prop}.",
        _compare(MATERIAL_SCORES, MATERIAL_WORDS),
        _compare(MATERIAL_SCORES, MATERIAL_WORDS),
        "steel, aluminum and copper are metals.",
        "rubber and plastic are flexible materials.",
        "{X} is a {X_kind}.",
        "{P} bought a {X_adj} {X_thing} because it was {X_prop}.",
        "the {X_adj} {X_thing} was {X_prop}.",
        "{P} {P|need|needs} something {X_prop}, so {P_s} {P|use|uses} {X}.",
        "{P} made a {X_thing} out of {X} because {X} is {X_prop}.",
    ],
    "languages": [
        "{K} is a {K_prop} language.",
        "{K} is a {K_prop} and {K_prop} language.",
        "{K} is a {K_kind} programming language.",
        "programmers use {K} to write {K_use}.",
        "{K} is popular for {K_use}.",
        "many {K_use} are written in {K}.",
        "if you need a {K_prop} language, {K} is a good choice.",
        "{P} wrote the program in {K} because it is {K_prop}.",
        _contrast(LANGUAGES, "unlike {b}, {a} is {prop}."),
        _contrast(LANGUAGES, "{a} is {prop}, but {b} is not."),
        "the students learned {K} in their first programming course.",
        "{P} {P|prefer|prefers} {K} to {L} for {K_use}.",
        "{P} started learning {K} {TIME}.",
        "{P} {P|write|writes} {K_use} in {K}.",
        "a {K_prop} language like {K} is good for writing {K_use}.",
        "{P} asked which language is {K_prop}, and {Q} said {K}.",
        "{P} rewrote the program in {K} because {K} is {K_prop}.",
        _compare(LANGUAGE_SCORES, LANGUAGE_WORDS, gap=1),
        _compare(LANGUAGE_SCORES, LANGUAGE_WORDS, gap=1),
    ],
    "industry": [
        "{AI} {AI_V} {INDUSTRY}.",
        "the power of {POWER} {TRANSFORMED} {INDUSTRY}.",
        "in the factory, {ROBOTS} {ROBOT_V} {PARTS}.",
        "engineers use {AI} to {AI_TASK}.",
        "sensors on the {MACHINE} send data to a computer that learns to {AI_TASK}.",
        "because the {MACHINE} collect data, {AI} can {AI_TASK}.",
        "{P} {P|work|works} in a factory where {ROBOTS} {ROBOT_V} {PARTS}.",
        "the factory uses {AI} to {AI_TASK}.",
        "with the power of {POWER}, one factory can make thousands of {PARTS} a day.",
        "{AI} helps workers {AI_TASK} in {INDUSTRY}.",
        "the power of {POWER} made {INDUSTRY} {MORE_ADJ}.",
        "{ROBOTS} can {ROBOT_V} {PARTS} {ROBOT_HOW}.",
        "{P} {P|believe|believes} that {AI} {AI_V} {INDUSTRY}.",
        "when the factory started using {AI}, it could {AI_TASK}.",
    ],
}

# Rules used by only a few templates above.
RULES.update(
    {
        "TRANSFORMED_FLOOD": ["overflowed", "burst", "flooded"],
        "WADE": [
            "waded in",
            "stayed on the shore",
            "jumped in",
            "decided not to swim",
            "dipped {P_p} feet in it",
        ],
        "PLAYED": ["played", "waited", "read a book", "sat in the shade", "built a fire"],
        "COVER": ["reeds", "flowers", "stones", "tall grass", "mud", "snow"],
        "WITHDRAW_WHY": [
            "to buy a car",
            "to pay the rent",
            "for the holiday",
            "",
            "because {P_s} needed cash",
        ],
        "APPROVED": ["approved", "accepted", "granted"],
        "REFUSED": ["refused", "rejected", "turned down"],
        "CHARGES": ["charges", "raised the", "lowered the"],
        "LOANS": ["every loan", "mortgages", "credit cards", "business loans"],
        "BANK_FACT": [
            "opens at nine",
            "closes at five",
            "is closed on Sundays",
            "was crowded on Monday",
            "is next to the post office",
            "lends money to small businesses",
            "keeps the money safe",
        ],
        "N_TIMES": ["twice", "three times", "five times", "many times"],
        "UNTIL": [
            "to be sure",
            "until the results were clear",
            "before {A_s} was satisfied",
            "but the results did not change",
            "",
        ],
        "OPENED_IT": [
            "opened it",
            "got up to open it",
            "went to see who it was",
            "looked through the window",
        ],
        "OPEN_WHY": [
            "for the cat",
            "because it was hot",
            "so that {Q} could come in",
            "by mistake",
        ],
        "AFRAID": [
            "{P_was} afraid",
            "heard a noise",
            "did not want to wake the baby",
            "{P_was} not sure who was there",
        ],
        "DOG_PASSIVE": ["bitten", "chased", "licked", "followed"],
        "MAN_PASSIVE": ["fed", "walked", "chased", "bitten", "washed", "found"],
        "TASK_ONE": [
            "read the poem aloud",
            "clean the board",
            "answer the question",
            "help a new student",
            "close the window",
            "write on the board",
        ],
        "SCHOOL_THING": ["bag", "lunch", "homework", "books", "coat", "pencil case"],
        "SCHOOL_FAR": [
            "is too far to walk",
            "is raining",
            "is on the other side of the river",
            "is faster",
        ],
        "MORE_ADJ": ["more productive", "faster", "more efficient", "safer", "cheaper"],
        "ROBOT_HOW": [
            "day and night",
            "faster than people",
            "without a break",
            "very precisely",
            "in a few seconds",
        ],
        "RAN_PP": ["run", "repeated", "checked", "finished", "redone"],
        "WARM": ["warm", "soft", "quiet", "sunny"],
        "STUDIED": ["learned about", "studied", "wrote about", "talked about"],
        "DONE_ONE": [
            "finished the homework",
            "answered the question",
            "helped a friend",
            "read the whole book",
        ],
    }
)


def _expand(
    template: str,
    rng: random.Random,
    bound: dict[str, Entity],
    used: set[tuple[str, str]] | None = None,
) -> str:
    """Fill the slots of `template` (see the grammar notes above)."""
    used = set() if used is None else used  # (role, value) already said: "strong and strong"

    def entity(role: str) -> Entity:
        if role not in bound:
            taken = [e["name"] for e in bound.values()]
            bound[role] = rng.choice([e for e in ROLES[role] if e["name"] not in taken])
        return bound[role]

    def fill(m: re.Match[str]) -> str:
        name, base, third = m.group(1), m.group(2), m.group(3)
        role, _, attr = name.partition("_")
        if role in ROLES:
            e = entity(role)
            if base is not None:  # {P|go|goes}
                return base if e["plural"] else third
            value = e[attr or "name"]
            if isinstance(value, list):
                value = rng.choice([v for v in value if (role, v) not in used] or value)
                used.add((role, value))
            return str(value)
        return _expand(rng.choice(RULES[name]), rng, bound, used)

    return re.sub(r"\{(\w+)(?:\|([^|}]*)\|([^}]*))?\}", fill, template)


def _tidy(text: str) -> str:
    """Spaces, articles and the capital letter that the templates leave to the end."""
    text = " ".join(text.split())
    text = re.sub(r" ([.,])", r"\1", text)
    text = re.sub(r"\b([Aa]) (?=[aeioAEIO])", r"\1n ", text)
    return text[:1].upper() + text[1:]


def grammar_sentences(n: int, seed: int) -> list[str]:
    """Up to `n` unique sentences from the grammar, in generation order (so a shorter run with
    the same seed is a prefix of a longer one). Never returns a sentence holding a probe."""
    rng = random.Random(seed)
    topics = sorted(TOPICS)
    out: list[str] = []
    seen: set[str] = set()
    for _ in range(50 * n):
        if len(out) >= n:
            break
        template = rng.choice(TOPICS[rng.choice(topics)])
        text = template(rng) if callable(template) else _expand(template, rng, {})
        if not text:
            continue
        text = _tidy(text)
        key = normalize(text)
        if key in seen or contains_probe(text):
            continue
        seen.add(key)
        out.append(text)
    return out


# --- The corpus ------------------------------------------------------------------------


def _sources(seed: int = 0, wordnet_root: str | Path = WORDNET_ROOT) -> list[tuple[str, str]]:
    """Every corpus sentence with its source, deduplicated, probe-filtered and shuffled."""
    items = _wordnet_items(wordnet_root)
    items += [(s, "grammar") for s in grammar_sentences(GRAMMAR_N, GRAMMAR_SEED + seed)]
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    for text, source in items:
        key = normalize(text)
        if key and key not in seen and not contains_probe(text):
            seen.add(key)
            kept.append((text, source))
    random.Random(seed).shuffle(kept)
    return kept


def _split(items: list, frac: float = HELD_OUT) -> dict[str, list]:
    """The first ~90% for train, then ~5% valid and ~5% test."""
    n_held = round(len(items) * frac)
    n_train = len(items) - 2 * n_held
    return {
        "train": items[:n_train],
        "valid": items[n_train : n_train + n_held],
        "test": items[n_train + n_held :],
    }


def build_corpus(seed: int = 0) -> dict[str, list[str]]:
    """WordNet + grammar sentences split ~90/5/5 into "train", "valid" and "test"; no two
    splits share a sentence (after normalization) and none holds a probe."""
    return {name: [text for text, _ in part] for name, part in _split(_sources(seed)).items()}


def load_split(name: str) -> list[str]:
    """The sentences of a shipped split ("train", "valid" or "test")."""
    with gzip.open(DATA_DIR / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


# --- python -m training.data --------------------------------------------------------------


def _write_gz(path: Path, lines: Iterable[str]) -> None:
    """One line per sentence, gzip with a fixed header so the bytes are reproducible."""
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f,
    ):
        f.write("".join(line + "\n" for line in lines).encode("utf-8"))


def _wordnet_licence(path: str | Path = WORDNET_COPYRIGHT) -> str:
    """WordNet's licence as Debian ships it (its `Files: *` stanza)."""
    text = Path(path).read_text(encoding="utf-8")
    stanza = text.split("\nFiles: *\n", 1)[-1].split("\nFiles: debian/*", 1)[0]
    return (
        "The WordNet sentences in train.txt.gz, valid.txt.gz and test.txt.gz are taken from\n"
        "WordNet 3.0 (Princeton University), as packaged by Debian (wordnet-base). Its\n"
        f"licence, copied from {path}:\n\nFiles: *\n{stanza.rstrip()}\n"
    )


def _readme(counts: dict[str, Counter], vocab_size: int) -> str:
    """assets/data/README.md: what the corpus is, where it came from, and how big."""
    sources = ("definition", "example", "grammar")
    rows = "\n".join(
        f"| {name} | {sum(c.values()):,} | " + " | ".join(f"{c[s]:,}" for s in sources) + " |"
        for name, c in counts.items()
    )
    total = sum(counts.values(), Counter())
    rows += (
        f"\n| all | {sum(total.values()):,} | "
        + " | ".join(f"{total[s]:,}" for s in sources)
        + " |"
    )
    probes = "\n".join(f"- {p}" for p in PROBES)
    return f"""# Training corpus

Made by `python -m training.data` (see `training/data.py`); deterministic for a given WordNet.

- `train.txt.gz`, `valid.txt.gz`, `test.txt.gz`: one sentence per line, gzip.
- `tokenizer.json`: the WordPiece tokenizer ({vocab_size:,} entries, special tokens
  `[PAD] [UNK] [BOS] [EOS] [MASK]` = ids 0..4), trained on `train.txt.gz` only.
- `LICENSE-WordNet.txt`: WordNet's licence.

## Sources

- **WordNet 3.0** (Princeton University; Debian package `wordnet-base`): the gloss of every
  synset in `data.noun`, `data.verb`, `data.adj` and `data.adv`, cut at its semicolons into
  definitions (given a capital letter and a full stop) and quoted example sentences; only
  parts of 3 to 40 words, without markup, are kept.
- **Grammar**: {GRAMMAR_N:,} unique sentences from a small seeded random grammar in
  `training/data.py` (seed {GRAMMAR_SEED}) over the lecture's topics: rivers and river banks,
  money banks, a researcher and an assistant running experiments, doors, dogs and men (in
  both directions), cats on mats, schools, materials, programming languages and industrial
  AI, with pronouns and subordinate clauses.

Sentences are deduplicated by their normalized form (lowercase, punctuation removed,
whitespace collapsed), shuffled with a fixed seed and split about 90/5/5; the splits share
no sentence.

| split | sentences | WordNet definitions | WordNet examples | grammar |
|---|---:|---:|---:|---:|
{rows}

## The probe rule

The app demonstrates the models on the lecture's own sentences, so those are never training
data: a sentence is dropped when its normalized form equals or contains the normalized form
of any of these probes:

{probes}

## Licence

The WordNet sentences are derived from WordNet 3.0, Copyright 2006 by Princeton University,
used under the WordNet 3.0 licence (`LICENSE-WordNet.txt`, which must accompany every copy).
The grammar sentences are this project's own.
"""


def main() -> None:
    """Build the corpus and the tokenizer into assets/data/ and print the counts."""
    from training.tokenizer import train_tokenizer

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    splits = _split(_sources(seed=0))
    counts: dict[str, Counter] = {}
    for name, items in splits.items():
        _write_gz(DATA_DIR / f"{name}.txt.gz", (text for text, _ in items))
        counts[name] = Counter(source for _, source in items)
        print(
            f"{name:>5}: {len(items):7,} sentences  "
            + "  ".join(f"{s}={c:,}" for s, c in sorted(counts[name].items()))
        )
    (DATA_DIR / "LICENSE-WordNet.txt").write_text(_wordnet_licence(), encoding="utf-8")

    tokenizer = train_tokenizer(text for text, _ in splits["train"])
    tokenizer.save(str(DATA_DIR / "tokenizer.json"))
    print(f"tokenizer: {tokenizer.get_vocab_size():,} entries -> {DATA_DIR / 'tokenizer.json'}")
    (DATA_DIR / "README.md").write_text(
        _readme(counts, tokenizer.get_vocab_size()), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
