"""The two languages (issue 31): the catalogue, the particle helper, the language kept in
the URL and across a change of language, the shared figure cache, and every page drawn in
Korean without English left in it."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from functools import cache

import pytest
from babel.messages.catalog import Catalog
from google.protobuf.json_format import MessageToDict

import i18n.catalogue as catalogue
from i18n import _, particle, using
from model.kinds import CAPABILITIES, NO_MODEL, RUNS_ANOTHER
from tests.charts import charts, figures
from tests.test_app import EVERY_PAGE, app_test
from ui.registry import BY_KEY
from ui.show import section_ids, section_key
from ui.state import UploadError, validate_upload

HANGUL = re.compile(r"[가-힣]")


@pytest.fixture
def in_korean(monkeypatch: pytest.MonkeyPatch) -> None:
    """AppTest calls a widget's format_func in the test's own thread, after the run (to
    find a menu's index), where no session says the language: GLASSBOX_LANG does there."""
    monkeypatch.setenv("GLASSBOX_LANG", "ko")

# --- the catalogue -------------------------------------------------------------------------


def test_the_committed_mo_is_the_committed_po_compiled() -> None:
    """Whoever changes the .po runs `python -m i18n.catalogue`, which compiles the .mo."""
    po = catalogue.po_path().read_bytes()
    assert catalogue.mo_path().read_bytes() == catalogue.compiled(po), (
        "locale/ko/LC_MESSAGES/glassbox.mo is stale: run python -m i18n.catalogue"
    )


def test_every_message_has_korean() -> None:
    """`python -m i18n.catalogue --check` as a test: every message of the source is in the
    committed Korean catalogue, none empty, none left as the English (catalogue.SAME)."""
    found = catalogue.missing()
    assert not found, f"{len(found)} message(s) without Korean:\n" + "\n".join(found)


def test_a_draft_wins_and_fills_what_the_catalogue_lacks(tmp_path, monkeypatch) -> None:
    """What `python -m i18n.catalogue` does with the drafts: a draft's translation replaces
    the catalogue's and fills an empty one; one of a message not in the source is said."""
    (tmp_path / "a.po").write_text('msgid "Layer"\nmsgstr "층"\n\nmsgid "Gone"\nmsgstr "없음"\n',
                                   encoding="utf-8")  # fmt: skip
    (tmp_path / "b.po").write_text('msgid "Head"\nmsgstr "헤드"\n', encoding="utf-8")
    monkeypatch.setattr(catalogue, "drafts_dir", lambda lang="ko": tmp_path)
    merged = Catalog(locale="ko")
    merged.add("Layer", "레이어")
    merged.add("Head", "")
    said = catalogue.merge_drafts(merged)
    assert merged["Layer"].string == "층" and merged["Head"].string == "헤드"
    assert "Gone" not in merged and any("a.po" in s and "not in the source" in s for s in said)


def test_one_merge_at_a_time() -> None:
    """Two translators running the command at once: the second waits for the file lock."""
    probe = ("import fcntl, sys; f = open(sys.argv[1], 'a')\n"
             "try: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "except BlockingIOError: sys.exit(3)")  # fmt: skip
    with catalogue.locked():
        held = subprocess.run([sys.executable, "-c", probe, str(catalogue.LOCK)], check=False)
    free = subprocess.run([sys.executable, "-c", probe, str(catalogue.LOCK)], check=False)
    assert (held.returncode, free.returncode) == (3, 0)


def test_the_same_in_both_languages() -> None:
    assert catalogue.same_in_both("ViT") and catalogue.same_in_both("{layer} · {head}")
    assert catalogue.same_in_both("12 → 3") and not catalogue.same_in_both("Attention")


def test_one_whole_message_per_capability() -> None:
    """No sentence is glued from model.kinds.DOES: each capability has its own sentences."""
    assert set(NO_MODEL) == set(RUNS_ANOTHER) == set(CAPABILITIES)
    with using("ko"):
        assert all(HANGUL.search(_(message)) for message in NO_MODEL.values())


def test_an_upload_error_keeps_no_language() -> None:
    """The state keeps the message untranslated: it is drawn in the language of the moment."""
    with pytest.raises(UploadError) as caught:
        validate_upload("notes.txt", b"   ")
    assert caught.value.message == "'{name}' is empty: there is no sentence in it."
    assert str(caught.value) == "'notes.txt' is empty: there is no sentence in it."
    with using("ko"):
        assert HANGUL.search(str(caught.value)) and "notes.txt" in str(caught.value)


# --- particles -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "pair", "expected"),
    [
        ("학교", "은/는", "학교는"),  # a vowel
        ("책", "은/는", "책은"),  # a final consonant
        ("모델", "이/가", "모델이"),  # ㄹ is a final consonant too
        ("바다", "이/가", "바다가"),
        ("문장", "을/를", "문장을"),
        ("사과", "을/를", "사과를"),
        ("빵", "과/와", "빵과"),
        ("우유", "과/와", "우유와"),
        ("집", "으로/로", "집으로"),
        ("학교", "으로/로", "학교로"),
        ("서울", "으로/로", "서울로"),  # ㄹ takes 로
        ("1", "으로/로", "1로"),  # 일: ㄹ
        ("3", "은/는", "3은"),  # 삼
        ("2", "은/는", "2는"),  # 이
        ("10", "이/가", "10이"),  # 십
        ("bank", "을/를", "bank를"),  # 뱅크
        ("school", "으로/로", "school로"),  # 스쿨: ㄹ
        ("man", "은/는", "man은"),  # 맨
        ("king", "이/가", "king이"),  # 킹
        ("GPT", "을/를", "GPT를"),  # 지피티
        ("[MASK]", "은/는", "[MASK]는"),  # 마스크: the brackets are not read
        ("[MASK]", "이/가", "[MASK]가"),
        ("학생", "이라/라", "학생이라"),
        ("🙂", "은/는", "🙂은(는)"),  # cannot be told: both forms
        ("...", "을/를", "...을(를)"),
    ],
)
def test_the_particle_follows_how_the_word_ends(word: str, pair: str, expected: str) -> None:
    with using("ko"):
        assert particle(word, pair) == expected


def test_in_english_a_particle_leaves_the_word_alone() -> None:
    with using("en"):
        assert particle("bank", "을/를") == "bank"
    with using("ko"):
        assert particle("bank", "not a pair") == "bank"


# --- the language in the session and the URL ------------------------------------------------


def _title(at) -> str:
    return at.title[0].value


def test_lang_ko_in_the_url_opens_korean_and_is_kept_until_english_is_chosen(in_korean) -> None:
    at = app_test("tokens")
    at.query_params["lang"] = "ko"
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["lang"] == "ko"
    with using("ko"):
        korean = _(BY_KEY["tokens"].title)
    assert HANGUL.search(korean) and _title(at) == korean
    assert at.query_params["lang"] in ("ko", ["ko"]), "written back to the URL"
    at.radio(key="w_lang").set_value("en").run()
    assert not at.exception, at.exception
    assert _title(at) == BY_KEY["tokens"].title
    assert "lang" not in at.query_params, "an English address stays as it was"


def test_an_english_session_leaves_the_url_as_it_was() -> None:
    at = app_test("attention").run()
    assert not at.exception, at.exception
    assert at.session_state["lang"] == "en" and "lang" not in at.query_params
    assert at.radio(key="w_lang").value == "en"


def test_a_lecture_page_keeps_the_language_too(in_korean) -> None:
    at = app_test("lecture-attention")
    at.query_params["lang"] = "ko"
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["lang"] in ("ko", ["ko"])
    assert at.radio(key="w_lang").value == "ko"


def test_the_open_tab_is_kept_across_a_change_of_language() -> None:
    """Tabs are ids, not words: the tab open in English is the one open in Korean."""
    at = app_test("masked")
    at.session_state[section_key("masked")] = "looked"  # "Where the [MASK] looked"
    at.run()
    assert any(k.startswith("mask_row") for k in figures(at)), "the tab is open"
    at.radio(key="w_lang").set_value("ko").run()
    assert not at.exception, at.exception
    assert at.session_state[section_key("masked")] == "looked"
    assert any(k.startswith("mask_row") for k in figures(at)), "the same tab, in Korean"
    with using("ko"):
        assert _("Where the [MASK] looked") in [tab.label for tab in at.tabs]


# --- the shared figure cache ---------------------------------------------------------------


def _titles(at) -> list[str]:
    return [c.figure["layout"].get("title", {}).get("text", "") for c in charts(at)]


def test_the_figure_cache_never_serves_another_languages_figure() -> None:
    """ui.figures keeps every figure for every session: the same page, English, then
    Korean, then English again, in one process, each gets its own language's figures."""

    def titles(lang: str) -> list[str]:
        at = app_test("tokens")
        at.session_state["lang"] = lang
        at.run()
        assert not at.exception, at.exception
        return _titles(at)

    english = titles("en")
    korean = titles("ko")
    assert any(english) and len(korean) == len(english)
    assert not any(HANGUL.search(t) for t in english)
    assert any(HANGUL.search(t) for t in korean), korean
    assert titles("en") == english


# --- every page in Korean ------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
# Where a person reads text: an element's or widget's fields, a figure's (titles, ticks,
# legends, hovers, annotations); not ids, keys, or Plotly's settings ("right", "markers").
ELEMENT_TEXT = {"body", "label", "help", "options", "placeholder", "caption"}
FIGURE_TEXT = {"text", "ticktext", "name", "hovertemplate", "texttemplate", "customdata",
               "hovertext", "fullScreenTitle", "dictionary"}  # fmt: skip


def _strings(value: object, out: list[str], keys: set[str], inside: bool = False) -> None:
    """Every string under one of `keys` in a proto's dict or a figure's JSON."""
    if isinstance(value, str):
        if inside:
            out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, out, keys, inside or key in keys)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, keys, inside)


def page_text(at) -> list[str]:
    """What a person reads on the page: every element's and widget's text (values, labels,
    help, options, placeholders), every table's column names and text cells, and every
    chart's titles, axes, legends and hovers."""
    found: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and type(node).__name__ != "UnknownElement":
            _strings(MessageToDict(proto), found, ELEMENT_TEXT)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    for frame in at.dataframe:  # a table's column names and text cells (Arrow, not in the proto)
        table = frame.value
        found += [str(c) for c in table.columns]
        found += [v for c in table.columns for v in table[c].tolist() if isinstance(v, str)]
    for chart in charts(at):
        _strings({"figure": chart.figure, "config": chart.config}, found, FIGURE_TEXT)
    return [html.unescape(s).replace("\\", "") for s in found]


@cache
def english_messages() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(message, the English pieces a Korean page must not show) for every message of the
    source whose Korean differs from it: the message itself, or, for one with placeholders,
    each piece between them of two words or more that the Korean does not keep."""
    korean = catalogue.read_catalogue(catalogue.po_path())
    found = []
    for message in catalogue.extract():
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        entry = korean.get(message.id)
        strings = entry.string if entry is not None else ""
        strings = strings if isinstance(strings, tuple) else (strings,)
        if all(catalogue.same_in_both(i) for i in ids) or any(s == i for s in strings
                                                                 for i in ids):  # fmt: skip
            continue
        pieces = tuple(
            piece.strip(" :;,.·()")
            for i in ids
            for piece in _PLACEHOLDER.split(i.replace("{{", "{").replace("}}", "}"))
        )
        if _PLACEHOLDER.search(ids[0]):  # a piece the Korean keeps too ("Hugging Face") is none
            pieces = tuple(p for p in pieces if len(p.split()) >= 2 and len(p) >= 10
                           and not any(p in k for k in strings))  # fmt: skip
        else:
            pieces = tuple(p for p in {ids[0].strip()} if len(p) >= 4)
        if pieces:
            found.append((ids[0], pieces))
    return tuple(found)


def english_left(texts: list[str]) -> list[str]:
    """The catalogue messages still shown in English in `texts`: a one-word message that
    is a whole text, a longer one (or a piece of one with placeholders) inside a text."""
    left = []
    for message, pieces in english_messages():
        for piece in pieces:
            if " " not in piece:
                hit = any(text.strip() == piece for text in texts)
            else:
                pattern = re.compile(rf"(?<![A-Za-z]){re.escape(piece)}(?![A-Za-z])")
                hit = any(pattern.search(text) for text in texts)
            if hit:
                left.append(message)
                break
    return left


def korean_page(key: str) -> tuple[list[str], list[str]]:
    """The page in Korean, every section tab opened in turn: (what it shows, exceptions)."""
    at = app_test(key)
    at.session_state["lang"] = "ko"
    at.run()
    texts, errors = page_text(at), [e.message for e in at.exception]
    for tab in section_ids(key)[1:] if at.tabs else ():
        at.session_state[section_key(key)] = tab
        at.run()
        texts += page_text(at)
        errors += [e.message for e in at.exception]
    return texts, errors


@pytest.mark.parametrize("key", EVERY_PAGE)
def test_every_korean_page_is_korean(key: str, in_korean) -> None:
    """Every page (explorer pages, the lecture's overview and steps) drawn in Korean shows
    no catalogue message in English; the failure lists the ones left, for the translators
    (their drafts: locale/ko/drafts/, then python -m i18n.catalogue)."""
    texts, errors = korean_page(key)
    assert not errors, errors
    assert any(HANGUL.search(t) for t in texts), "nothing in Korean at all"
    left = english_left(texts)
    assert not left, f"{key}: {len(left)} message(s) still in English:\n" + "\n".join(
        f"  {m!r}" for m in left
    )
