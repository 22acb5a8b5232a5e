"""Korean as a Korean teacher writes it (issue 39): no particle that the code cannot get
right, one word per concept (docs/GLOSSARY.md), and no sentence that ends "…니다:" or "…세요:"
(nor "…니다 (…):", a parenthesis before the colon).

A Korean particle such as 을/를 takes its form from how the word before it ends (책을,
사과를), so a message must not write one after a `{placeholder}` whose value it does not
know. Such a value comes through `i18n.particle` with its particle already on it
(`token_obj=particle(word, "을/를")`); a percentage (`{x:.1%}`, or a value made by
`format(x, ".1%")`) ends in 퍼센트 and takes the form after a vowel. Nor may a message
hedge with "(이)" after a placeholder ({top}(이)라고), or write 였 after one ({guess}였습니다:
after a consonant it is 이었): the review of issue 55 banned both.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

import i18n.catalogue as catalogue

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("app.py", "ui", "pages", "viz", "lab", "model", "analysis", "i18n")  # babel.cfg

# Each particle whose form depends on the final sound, as (after a consonant, after a
# vowel), with the compounds that start with it (으로는, 과의, 이라고). 의, 에, 도, 만, 까지
# and the copula (입니다, 이고, 이며, 인데) read the same after any word and are not listed.
PAIRS = [("을", "를", ""), ("은", "는", ""), ("이", "가", ""), ("과", "와", "는도의"),
         ("으로", "로", "는도서써"), ("이나", "나", ""), ("이랑", "랑", ""), ("아", "야", ""),
         ("이라", "라", "고는면"), ("이란", "란", ""), ("이든", "든", "지")]  # fmt: skip
FORMS = sorted({p + t for c, v, tails in PAIRS for p in (c, v) for t in ("", *tails)},
               key=len, reverse=True)  # fmt: skip
AFTER_VOWEL = {v + t for _c, v, tails in PAIRS for t in ("", *tails)}
# A placeholder ({x}, {x:.1%}, or Plotly's %{{y}}), then closing quotes or Markdown (the
# particle still follows the value: “{word}”를), then a particle that ends the word. Not a
# closing parenthesis: after "연결(concat)이" the particle belongs to the word before "(".
PLACEHOLDER = r"\{+(?P<name>[^{}:!]*)(?P<spec>[^{}]*)\}+"
FOLLOWED = re.compile(PLACEHOLDER + r"[”’\"'`*]*(?P<particle>" + "|".join(FORMS) + r")(?![가-힣])")


def particles_after_values(message: str, known: dict[str, str]) -> list[str]:
    """The particles in `message` that follow a placeholder whose last sound the code does
    not know. `known` says how some placeholders end: "particle" (the value brings its
    own) or "vowel" (a percentage: only the form after a vowel is right)."""
    found = []
    for hit in FOLLOWED.finditer(message):
        name, spec, said = hit["name"].strip(), hit["spec"], hit["particle"]
        ends = known.get(name) or ("vowel" if spec.endswith("%") else None)
        if ends == "particle" or (ends == "vowel" and said in AFTER_VOWEL):
            continue
        found.append(hit.group(0))
    return found


# --- how the source fills each message's placeholders ------------------------------------


def _source_files() -> Iterator[Path]:
    for name in SOURCES:
        path = ROOT / name
        yield from [path] if path.is_file() else sorted(path.glob("**/*.py"))


def _called(node: ast.expr, name: str) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def _percent(node: ast.expr) -> bool:
    """A value written as a percentage: format(x, ".1%") or f"{x:.0%}"."""
    if _called(node, "format") and isinstance(node, ast.Call) and len(node.args) == 2:
        spec = node.args[1]
        return isinstance(spec, ast.Constant) and str(spec.value).endswith("%")
    if isinstance(node, ast.JoinedStr) and node.values:
        last = node.values[-1]
        spec = last.format_spec if isinstance(last, ast.FormattedValue) else None
        return spec is not None and ast.unparse(spec).rstrip("'\"").endswith("%")
    return False


def how_values_end(tree: ast.AST) -> dict[str, dict[str, str]]:
    """For each message of one source file (its English, as the catalogue's key): the
    placeholders whose ending the call site knows, "particle" or "vowel"."""
    with_particle = {  # names assigned from particle(...) in this file
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _called(node.value, "particle")
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    known: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if not (_called(node, "_") or _called(node, "ngettext")) or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        ends = known.setdefault(first.value, {})
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg is None:
                continue
            named = isinstance(value, ast.Name) and value.id in with_particle
            if named or _called(value, "particle"):
                ends[keyword.arg] = "particle"
            elif _percent(value):
                ends[keyword.arg] = "vowel"
    return known


@cache
def known_endings() -> dict[str, dict[str, str]]:
    known: dict[str, dict[str, str]] = {}
    for path in _source_files():
        for message, ends in how_values_end(ast.parse(path.read_text(encoding="utf-8"))).items():
            known.setdefault(message, {}).update(ends)
    return known


# --- the catalogue ----------------------------------------------------------------------------


def korean(path: Path | None = None) -> list[tuple[str, str]]:
    """(English, Korean) for every message of the Korean catalogue (each plural form too)."""
    with (path or catalogue.po_path()).open("rb") as file:
        entries = read_po(file, locale="ko")
    pairs = []
    for entry in entries:
        if not entry.id:
            continue
        english = entry.id[0] if isinstance(entry.id, tuple) else entry.id
        pairs += [(english, text) for text in _strings(entry.string) if text]
    return pairs


def misplaced_particles(pairs: Iterable[tuple[str, str]]) -> list[str]:
    known = known_endings()
    return [
        f"{english!r}: {', '.join(found)}"
        for english, text in pairs
        if (found := particles_after_values(text, known.get(english, {})))
    ]


# Words that say something else in Korean, with the term to use (docs/GLOSSARY.md).
WRONG_WORDS = {
    r"보류": "held-out is 평가 데이터 (보류 means postponed)",
    r"장난감": "toy is 토이 (토이 과제, 토이 문법)",
    r"(?<!비)지도(?!\s*학습)": "the map of a heatmap is 히트맵 (지도 is a geographic map)",
    r"배포된": "shipped is 앱에 포함된 (배포 is deployment)",
    r"주목하|어텐션하": "X attends to Y is “X가 Y에 어텐션을 준다”",
    r"쓸모 있는": "Handy: is 힌트:",
    r"수강생": "students are 학생, 학생들 (issue 55: one word for them)",
    r"수업(의 답|에서 고른|\s*전체)": "the class meaning its students is 학생들 (학생들의 답)",
}


def wrong_words(pairs: Iterable[tuple[str, str]]) -> list[str]:
    return [
        f"{english!r}: {found.group(0)!r}: {why}"
        for english, text in pairs
        for pattern, why in WRONG_WORDS.items()
        if (found := re.search(pattern, text))
    ]


# A sentence's end, then perhaps a parenthesis ("…니다 (torch.tril):"), then a colon.
SENTENCE_COLON = re.compile(r"(니다|세요)\s*(\([^()]*\))?:")
# After a placeholder (and closing quotes or Markdown): the hedge "(이)" (이라고 or 라고?), or
# 였 (after a consonant it must be 이었): the code does not know how the value ends.
HEDGED = re.compile(PLACEHOLDER + r"[”’\"'`*]*(\(이\)|였)")


def colon_after_sentence(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Sentences that end "…니다:" or "…세요:" before what explains them, also with a
    parenthesis between ("…니다 (…):"); end with a full stop, or join with -므로."""
    return [f"{english!r}: {text!r}" for english, text in pairs if SENTENCE_COLON.search(text)]


def hedged_endings(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Messages that write "(이)" or 였 after a placeholder."""
    return [
        f"{english!r}: {', '.join(h.group(0) for h in HEDGED.finditer(text))}"
        for english, text in pairs
        if HEDGED.search(text)
    ]


# --- the tests --------------------------------------------------------------------------------


def test_no_particle_follows_a_value_whose_ending_the_code_does_not_know() -> None:
    found = misplaced_particles(korean())
    said = "use i18n.particle, or rephrase so that no particle follows:\n"
    assert not found, said + "\n".join(found)


def test_no_word_of_the_wrong_sense() -> None:
    found = wrong_words(korean())
    assert not found, "\n".join(found)


def test_no_sentence_ends_in_a_colon() -> None:
    found = colon_after_sentence(korean())
    assert not found, "end with a full stop, or join with -므로:\n" + "\n".join(found)


def test_no_hedge_after_a_value() -> None:
    found = hedged_endings(korean())
    said = "rephrase so that the value ends the phrase (…은 {x}입니다), or use i18n.particle:\n"
    assert not found, said + "\n".join(found)


def test_the_colon_and_hedge_finders_find_what_the_review_found() -> None:
    """Issue 55's cases, and what the finders must leave alone."""
    for bad in ("여기에 그리세요 (도구 모음: 실행 취소):", "적용해야 합니다 (torch.tril): 그래야",
                "측정했습니다 ({date}, 스레드 1개): {task}", "확인하세요:", "됩니다:"):  # fmt: skip
        assert colon_after_sentence([("", bad)]), bad
    for fine in ("비율: {x}", "참여 코드 (QR 코드): {code}", "합니다(torch.tril). 그래야"):
        assert not colon_after_sentence([("", fine)]), fine
    assert hedged_endings([("", "{top}(이)라고 답했습니다")]) == ["'': {top}(이)"]
    assert hedged_endings([("", "내 답은 {guess}였습니다.")]) == ["'': {guess}였"]
    assert hedged_endings([("", "“{word}”(이)다, **{x}**였다")]) == ["'': {word}”(이), {x}**였"]
    for fine in ("고른 답은 {guess}입니다.", "{x}이었습니다", "{n}개(이상)", "{a} (이)"):
        assert not hedged_endings([("", fine)]), fine


def test_the_particle_finder_finds_what_the_review_found() -> None:
    """The finder on the review's own cases, and on what it must leave alone."""
    assert particles_after_values("“{sentence}”를 다르게 번역합니다", {}) == ["{sentence}”를"]
    assert particles_after_values("--seed {seed}로 반복합니다", {}) == ["{seed}로"]
    assert particles_after_values("평균 {others}를 줍니다", {}) == ["{others}를"]
    assert particles_after_values("'{k}'와의 연결, {x}으로는", {}) == ["{k}'와의", "{x}으로는"]
    assert particles_after_values("%{{y}}가 큽니다", {}) == ["{{y}}가"]
    for fine in ("토큰 {n}개", "{model}의 레이어", "{x}입니다", "{x}이고 {y}이며", "{n}가지",
                 "{name}에서", "헤드 {heads}개, 차원 {width})가", "**{model}**에서"):  # fmt: skip
        assert particles_after_values(fine, {}) == [], fine
    assert particles_after_values("{share:.1%}를 맞혔습니다", {}) == []  # 퍼센트를
    assert particles_after_values("{share:.1%}을 맞혔습니다", {}) == ["{share:.1%}을"]
    assert particles_after_values("{p}를 얻습니다", {"p": "vowel"}) == []
    brought = {"root_by": "particle"}  # particle(root, "으로/로"), then 는
    assert particles_after_values("{token_obj} 썼습니다, {root_by}는", brought) == []


def test_the_call_sites_say_which_values_bring_their_particle() -> None:
    tree = ast.parse(
        "topic = particle(who, '은/는')\n"
        "_('{a} {b} {c} {d} {e}', a=particle(w, '을/를'), b=topic, c=format(x, '.1%'),\n"
        "  d=f'{y:.0%}', e=word)\n"
    )
    ends = {"a": "particle", "b": "particle", "c": "vowel", "d": "vowel"}
    assert how_values_end(tree) == {"{a} {b} {c} {d} {e}": ends}
    wrote = "The model wrote `{token}`, its end token: it considers the text finished."
    assert known_endings()[wrote] == {"token_obj": "particle"}


def test_the_template_holds_no_translation() -> None:
    """locale/glassbox.pot is the English messages only: the drafts' Korean goes to the
    Korean catalogue, never into the template (i18n.catalogue writes it before merging)."""
    with catalogue.TEMPLATE.open("rb") as file:
        template = read_po(file)
    translated = [m.id for m in template if m.id and any(_strings(m.string))]
    assert not translated, translated[:5]


def _strings(string: str | tuple[str, ...]) -> tuple[str, ...]:
    return string if isinstance(string, tuple) else (string,)
