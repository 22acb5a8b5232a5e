"""The two languages (issue 31): the catalogue, the particle helper, the language kept in
the URL and across a change of language, the shared figure cache. Every page drawn in
Korean without English left in it: tests/test_walk.py."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from babel.messages.catalog import Catalog

import i18n.catalogue as catalogue
from i18n import _, particle, using
from model.kinds import CAPABILITIES, NO_MODEL, RUNS_ANOTHER
from tests.charts import charts, figures
from tests.test_app import app_test
from ui.registry import BY_KEY
from ui.show import section_key
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
    at.radio(key="lang").set_value("en").run()
    assert not at.exception, at.exception
    assert _title(at) == BY_KEY["tokens"].title  # the URL: the browser writes it (e2e)


def test_an_english_session_leaves_the_url_as_it_was() -> None:
    at = app_test("attention").run()
    assert not at.exception, at.exception
    assert at.session_state["lang"] == "en" and "lang" not in at.query_params
    assert at.radio(key="lang").value == "en"


def test_a_lecture_page_keeps_the_language_too(in_korean) -> None:
    at = app_test("lecture-attention")
    at.query_params["lang"] = "ko"
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["lang"] in ("ko", ["ko"])
    assert at.radio(key="lang").value == "ko"


def test_the_open_tab_is_kept_across_a_change_of_language() -> None:
    """Tabs are ids, not words: the tab open in English is the one open in Korean."""
    at = app_test("masked")
    at.session_state[section_key("masked")] = "looked"  # "Where the [MASK] looked"
    at.run()
    assert any(k.startswith("mask_row") for k in figures(at)), "the tab is open"
    at.radio(key="lang").set_value("ko").run()
    assert not at.exception, at.exception
    assert at.session_state[section_key("masked")] == "looked"
    assert any(k.startswith("mask_row") for k in figures(at)), "the same tab, in Korean"
    with using("ko"):
        picker = at.button_group(key=section_key("masked"))
        assert _("Where the [MASK] looked") in picker.options


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
