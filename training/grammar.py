"""The seeded random grammar behind the corpus's own sentences; its tables are grammar.json.

A template is a string with slots:
  {WATER}        a rule: one of its alternatives, itself expanded (alternatives may be "")
  {P}            an entity's name; the first use of a role (P, Q, R, ...) draws an entity
                 from that role's pool, and later uses in the sentence mean the same one
  {P_o}          one of the entity's attributes (a list attribute: one item, at random)
  {P|go|goes}    verb agreement: the first form for I/we/they, the second for she/he/it
Roles drawn in one sentence are distinct entities. A person has the attributes {P_s} {P_o}
{P_p} (subject, object and possessive pronouns), {P_obj} (the name in object position) and
{P_was} (was/were); a table's items have the attributes written in the file.

A template may also be an object that names a table: {"compare": "materials"} makes
"steel is stronger than rubber." from the table's scores, and {"contrast": "materials",
"frame": "unlike {b}, {a} is {prop}."} fills the frame with two items and a property that
only the first has.
"""

from __future__ import annotations

import functools
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from training.probes import contains_probe, normalize

GRAMMAR_FILE = Path(__file__).resolve().parent / "grammar.json"

Entity = dict[str, object]
Template = str | Callable[[random.Random], str]

SLOT = re.compile(r"\{(\w+)(?:\|([^|}]*)\|([^}]*))?\}")
# pronoun -> (subject, object, possessive, was/were)
PRONOUNS = {
    "I": ("I", "me", "my", "was"),
    "we": ("we", "us", "our", "were"),
    "they": ("they", "them", "their", "were"),
    "she": ("she", "her", "her", "was"),
    "he": ("he", "him", "his", "was"),
}
PERSON_ATTRIBUTES = ("name", "s", "o", "p", "was", "obj")


class GrammarError(ValueError):
    """The grammar file refers to something it does not define, or is malformed."""


@dataclass(frozen=True)
class Grammar:
    """Roles (entity pools), rules (alternatives) and topics (template lists)."""

    roles: dict[str, list[Entity]]
    rules: dict[str, list[str]]
    topics: dict[str, list[Template]]


# --- Entities ----------------------------------------------------------------------------


def _person(name: str, pronoun: str) -> Entity:
    """A person who can be referred to again (see the attributes in the notes above)."""
    subj, obj, poss, was = PRONOUNS[pronoun]
    return {
        "name": name,
        "s": subj,
        "o": obj,
        "p": poss,
        "was": was,
        "obj": obj if name in PRONOUNS else name,
        "plural": pronoun in ("I", "we", "they"),
    }


def _people(entries: list[str]) -> list[Entity]:
    """Persons from "name/pronoun" strings; "name/he|she" makes one of each."""
    out = []
    for entry in entries:
        name, pronouns = entry.rsplit("/", 1)
        out += [_person(name, p) for p in pronouns.split("|")]
    return out


# --- Template functions ------------------------------------------------------------------


def _compare(
    scores: dict[str, dict[str, int]], words: dict[str, list[str]], gap: int = 2
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


def _contrast(pool: list[Entity], frame: str) -> Callable[[random.Random], str]:
    """A template function: `frame` filled with two items and a property only the first has,
    e.g. "unlike {b}, {a} is {prop}." -> "unlike glass, rubber is flexible."."""

    def make(rng: random.Random) -> str:
        a, b = rng.sample(pool, 2)
        props = [p for p in a["prop"] if p not in b["prop"]]
        return frame.format(a=a["name"], b=b["name"], prop=rng.choice(props)) if props else ""

    return make


# --- Reading grammar.json ----------------------------------------------------------------


def _role_attributes(raw: dict, problems: list[str]) -> tuple[dict[str, set[str]], set[str]]:
    """What each role's slots may name, and which roles are people (they have verb forms)."""
    roles, tables = raw["roles"], raw["tables"]
    attributes: dict[str, set[str]] = {}
    people: set[str] = set()
    for role, pool in roles.items():
        if isinstance(pool, str) and isinstance(roles.get(pool), list):
            pool = roles[pool]  # the same people as another role
        if isinstance(pool, list):
            for entry in pool:
                name, _, pronouns = entry.rpartition("/")
                if not name or not set(pronouns.split("|")) <= set(PRONOUNS):
                    problems.append(f'role {role}: bad person "{entry}" (want "name/she|he")')
            attributes[role] = set(PERSON_ATTRIBUTES)
            people.add(role)
        elif pool in tables and tables[pool].get("items"):
            attributes[role] = set.intersection(*(set(item) for item in tables[pool]["items"]))
        else:
            problems.append(f'role {role}: "{pool}" is neither a role of people nor a table')
    return attributes, people


def _slot_problems(
    text: str, where: str, attributes: dict[str, set[str]], people: set[str], rules: dict
) -> list[str]:
    """Slots in `text` that name no rule, no role, or an attribute the role lacks."""
    problems = []
    for m in SLOT.finditer(text):
        name, verb = m.group(1), m.group(2) is not None
        role, _, attr = name.partition("_")
        if role not in attributes:
            if verb or name not in rules:
                problems.append(f"{where}: {m.group(0)} is neither a role nor a rule")
        elif verb and (attr or role not in people):
            problems.append(f"{where}: {m.group(0)}: verb forms need a role of people")
        elif not verb and (attr or "name") not in attributes[role]:
            problems.append(f"{where}: {m.group(0)}: role {role} has no attribute {attr!r}")
    if re.search(r"[{}]", SLOT.sub("", text)):
        problems.append(f"{where}: a stray brace in {text!r}")
    return problems


def _object_problems(t: dict, where: str, tables: dict) -> list[str]:
    """What is wrong with a {"compare": ...} or {"contrast": ..., "frame": ...} template."""
    if set(t) in ({"compare"}, {"compare", "gap"}):
        table = tables.get(t["compare"], {})
        if "scores" not in table or set(table.get("words", {})) != set(table["scores"]):
            return [f"{where}: table {t['compare']!r} lacks scores with matching words"]
        return []
    if set(t) == {"contrast", "frame"}:
        fields = {f for _, f, _, _ in string.Formatter().parse(t["frame"]) if f is not None}
        if not all("prop" in item for item in tables.get(t["contrast"], {}).get("items", [{}])):
            return [f"{where}: no table {t['contrast']!r} whose items all have a 'prop'"]
        if not fields <= {"a", "b", "prop"}:
            return [f"{where}: a frame may only use {{a}}, {{b}} and {{prop}}"]
        return []
    return [f"{where}: unknown template {t!r}"]


def _problems(raw: dict) -> list[str]:
    """Everything in a parsed grammar file that would break or silently garble a sentence."""
    missing = [key for key in ("roles", "tables", "rules", "topics") if key not in raw]
    if missing:
        return [f"missing sections: {', '.join(missing)}"]
    problems: list[str] = []
    attributes, people = _role_attributes(raw, problems)
    names = [name for group in raw["rules"].values() for name in group]
    problems += [
        f"rule {name}: defined twice" for name in sorted(set(names)) if names.count(name) > 1
    ]
    rules = {name: alts for group in raw["rules"].values() for name, alts in group.items()}
    for name, alts in rules.items():
        if name.partition("_")[0] in raw["roles"]:
            problems.append(f"rule {name}: its name would be read as a role's slot")
        for alt in alts:
            problems += _slot_problems(alt, f"rule {name}", attributes, people, rules)
    for topic, templates in raw["topics"].items():
        for i, t in enumerate(templates, 1):
            where = f"topic {topic}, template {i}"
            if isinstance(t, str):
                problems += _slot_problems(t, where, attributes, people, rules)
            else:
                problems += _object_problems(t, where, raw["tables"])
    return problems


def _template(t: str | dict, tables: dict) -> Template:
    """A template string as it is, or the function that a template object describes."""
    if isinstance(t, str):
        return t
    if "compare" in t:
        table = tables[t["compare"]]
        return _compare(table["scores"], table["words"], t.get("gap", 2))
    return _contrast(tables[t["contrast"]]["items"], t["frame"])


def load_grammar(path: str | Path = GRAMMAR_FILE) -> Grammar:
    """Read and check a grammar file; GrammarError lists every broken reference."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    problems = _problems(raw)
    if problems:
        raise GrammarError(f"{path}:\n  " + "\n  ".join(problems))
    tables = raw["tables"]
    people = {role: _people(pool) for role, pool in raw["roles"].items() if isinstance(pool, list)}
    roles = {}
    for role, pool in raw["roles"].items():
        if isinstance(pool, list):
            roles[role] = people[role]
        else:  # another role's people, or a table's items
            roles[role] = people[pool] if pool in people else tables[pool]["items"]
    rules = {name: alts for group in raw["rules"].values() for name, alts in group.items()}
    topics = {name: [_template(t, tables) for t in ts] for name, ts in raw["topics"].items()}
    return Grammar(roles, rules, topics)


@functools.cache
def default_grammar() -> Grammar:
    """The shipped grammar (grammar.json), read on first use rather than at import."""
    return load_grammar()


# --- Sentences ---------------------------------------------------------------------------


def _expand(
    template: str,
    rng: random.Random,
    bound: dict[str, Entity],
    used: set[tuple[str, str]] | None = None,
    grammar: Grammar | None = None,
) -> str:
    """Fill the slots of `template` (see the notes at the top)."""
    grammar = grammar or default_grammar()
    used = set() if used is None else used  # (role, value) already said: "strong and strong"

    def entity(role: str) -> Entity:
        if role not in bound:
            taken = [e["name"] for e in bound.values()]
            bound[role] = rng.choice([e for e in grammar.roles[role] if e["name"] not in taken])
        return bound[role]

    def fill(m: re.Match[str]) -> str:
        name, base, third = m.group(1), m.group(2), m.group(3)
        role, _, attr = name.partition("_")
        if role in grammar.roles:
            e = entity(role)
            if base is not None:  # {P|go|goes}
                return base if e["plural"] else third
            value = e[attr or "name"]
            if isinstance(value, list):
                value = rng.choice([v for v in value if (role, v) not in used] or value)
                used.add((role, value))
            return str(value)
        return _expand(rng.choice(grammar.rules[name]), rng, bound, used, grammar)

    return SLOT.sub(fill, template)


def _tidy(text: str) -> str:
    """Spaces, articles and the capital letter that the templates leave to the end."""
    text = " ".join(text.split())
    text = re.sub(r" ([.,])", r"\1", text)
    text = re.sub(r"\b([Aa]) (?=[aeioAEIO])", r"\1n ", text)
    return text[:1].upper() + text[1:]


def _sentence(template: Template, rng: random.Random, grammar: Grammar) -> str:
    """One untidied sentence ("" when a template function finds nothing true to say)."""
    return template(rng) if callable(template) else _expand(template, rng, {}, grammar=grammar)


def grammar_sentences(n: int, seed: int, grammar: Grammar | None = None) -> list[str]:
    """Up to `n` unique sentences from the grammar (default: the shipped one), in generation
    order (so a shorter run with the same seed is a prefix of a longer one). Never returns a
    sentence holding a probe."""
    grammar = grammar or default_grammar()
    rng = random.Random(seed)
    topics = sorted(grammar.topics)
    out: list[str] = []
    seen: set[str] = set()
    for _ in range(50 * n):
        if len(out) >= n:
            break
        text = _sentence(rng.choice(grammar.topics[rng.choice(topics)]), rng, grammar)
        if not text:
            continue
        text = _tidy(text)
        key = normalize(text)
        if key in seen or contains_probe(text):
            continue
        seen.add(key)
        out.append(text)
    return out
