"""Lecture mode in Korean (issue 31) beyond the page walk (tests/test_walk.py draws every
step in Korean, each question revealed, with no catalogue message left in English): every
lecture message in the draft, the overview's links, a choice kept and compared as its id,
the particle of a wrong guess, a measured figure in a Korean sentence, the thumbnails, the
live training in Korean."""

from __future__ import annotations

import re
from functools import cache

import pytest
from babel.messages.extract import extract_from_dir
from streamlit.testing.v1 import AppTest

from i18n import _, catalogue, using
from tests.charts import charts
from tests.test_app import ROOT, app_test, assert_ok
from tests.test_lecture import reveal
from tests.walk import HANGUL, english_left, page_text
from ui.lecture.steps import heads, positions
from ui.lecture.syllabus import STEPS

_FIELD = re.compile(r"\{[^{}]*\}")


@cache
def lecture_messages() -> frozenset[str]:
    """Every message of ui/lecture/ (what Babel extracts from it), in English."""
    found = extract_from_dir(str(ROOT / "ui" / "lecture"), keywords=catalogue.KEYWORDS)
    return frozenset(m if isinstance(m, str) else m[0] for _file, _line, m, _c, _ctx in found)


def korean(key: str, **state: object) -> AppTest:
    """Lecture page `key` run once with the session in Korean."""
    at = app_test(key)
    at.session_state["lang"] = "ko"
    for name, value in state.items():
        at.session_state[name] = value
    return at.run()


def test_every_lecture_message_has_korean_in_the_drafts() -> None:
    """Every message of ui/lecture/ has Korean in a draft (lecture.po; the class's in
    classroom.po) with the same placeholders."""
    from babel.messages.pofile import read_po

    draft: dict[str, str] = {}
    for path in sorted(catalogue.drafts_dir().glob("*.po")):
        with path.open("rb") as f:
            for m in read_po(f, locale="ko"):  # a plural message by its singular
                plural = isinstance(m.id, tuple)
                msgid, text = (m.id[0], m.string[0]) if plural else (m.id, m.string)
                if msgid and text:
                    draft[msgid] = text
    lacking = [m for m in lecture_messages() if not draft.get(m)]
    assert not lacking, f"locale/ko/drafts/ lacks: {lacking}"
    for message in lecture_messages():
        fields = sorted(_FIELD.findall(message))
        assert sorted(_FIELD.findall(draft[message])) == fields, message


def test_the_check_would_see_english() -> None:
    """The check finds Lecture mode's English (so a pass in Korean means something)."""
    assert english_left(["Reveal the model's answer", "x"]) == ["Reveal the model's answer"]
    assert english_left(["In layer 1, head 3 of clm, with weight 0.54."]) == [
        "In {where}, with weight {weight:.2f}."]  # fmt: skip


def test_the_korean_overview_links_every_step_in_korean() -> None:
    at = korean("lecture")
    assert_ok(at)
    with using("ko"):
        want = {(f"{s.number}. {s.title}", s.key) for s in STEPS}
        ideas = [s.idea for s in STEPS]
    assert {(el.proto.label, el.proto.page) for el in at.get("page_link")} == want
    captions = " ".join(c.value for c in at.caption)
    assert all(idea in captions for idea in ideas)
    assert at.title[0].value == "단계별로 보는 강의"
    assert not english_left(page_text(at))


def test_a_translated_choice_is_kept_and_compared_as_its_id() -> None:
    """The class's guess is stored as the step's constant, shown in Korean; a wrong guess is
    corrected with the particle its Korean label takes (다른 벡터 + 가)."""
    at = korean("lecture-positional-encoding")
    radio = at.radio(key="l5_guess")
    assert radio.options == ["같은 벡터", "다른 벡터"]
    answers = {positions.SAME, positions.DIFFERENT}
    for guess in answers:
        at = korean("lecture-positional-encoding")
        with using("ko"):  # AppTest's copy of the radio's format_func runs here, outside
            at.radio(key="l5_guess").set_value(guess)
            at = reveal(at)
        assert at.session_state["l5_pick"] == guess, "the id, not its Korean label"
        if at.success:
            assert at.success[0].value.split("\n\n")[1].startswith("정답입니다! 모델의 답:")
        else:
            label = "같은 벡터" if guess == positions.SAME else "다른 벡터"
            assert at.warning[0].value.split("\n\n")[1].startswith(f"{label}가 아닙니다.")
    assert set(heads.ROLE_TEXT) == set(heads.ROLES), "a name and a meaning for each measure"


def test_a_wrong_token_guess_takes_its_particle() -> None:
    at = korean("lecture-bert")
    at.radio(key="l10_guess").set_value("shore")
    at = reveal(at)
    said = at.warning[0].value.split("\n\n")[1]  # below the question
    assert said.startswith("shore가 아닙니다. 모델의 답:")


def test_the_korean_step_fills_in_the_reports_measured_figure() -> None:
    """A measured figure in a Korean sentence is the report's, filled into the template."""
    from ui import cache
    from ui.registry import BY_KEY

    name = cache.models_for(BY_KEY["rnn"])[0]  # the model the step picks
    rate = cache.translation_report()["models"][name]["by_clauses"]["8"]["exact_match"]
    at = reveal(korean("lecture-rnn-bottleneck"))
    said = " ".join(m.value for m in (*at.info, *at.success, *at.warning))
    with using("ko"):
        want = _("Measured on held-out sentences: {rate:.1%} at eight clauses.", rate=rate)
    assert HANGUL.search(want) and f"{rate:.1%}" in want and want in said


def test_the_korean_overview_shows_korean_thumbnails() -> None:
    """Each step's thumbnail is its Korean screenshot in Korean (the English one where
    there is none), its English one in English."""
    from ui.lecture.frame import thumbnail

    for step in STEPS:
        with using("en"):
            english = thumbnail(step)
        with using("ko"):
            shot = thumbnail(step)
        assert shot is not None and shot.name == f"lecture-ko-{step.slug}.png", step.slug
        assert english is None or english.name == f"{step.key}.png"


def test_the_live_training_is_drawn_in_korean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trained side by side in a Korean session: both runs' curves and answers, their
    legends and titles in Korean."""
    monkeypatch.setenv("GLASSBOX_LANG", "ko")  # AppTest's format_func, run outside the run
    from tests.test_learn_page import until
    from ui.lecture.steps import learn

    at = korean("lecture-watch-it-learn", toy_steps=20)
    at.radio(key="l_learn_guess").set_value(learn.CHOICES[2])
    at = reveal(at)
    assert at.success and at.success[0].value.split("\n\n")[1].startswith("정답입니다!")
    at.button(key="l_learn_train").click().run()
    until(at, lambda at: all(f"l_learn_{t}_answer" in {c.key for c in charts(at)}
                             for t in learn.PAIR) and not at.button(key="l_learn_train").disabled)
    assert_ok(at)
    drawn = {c.key: c.figure for c in charts(at)}
    names = [d.get("name") for d in drawn["l_learn_reverse"]["data"]]
    assert names == ["시퀀스 전체", "토큰"]
    assert drawn["l_learn_reverse_answer"]["layout"]["title"]["text"].endswith("스텝에서의 답")
    assert not english_left(page_text(at))
