"""A class in Lecture mode through AppTest (ui/lecture/classroom.py): the teacher opens a class
in presenter mode, a student joins by ?class=, their pick is a counted vote, the teacher
reveals, hostile ?class= values and codes typed in the join box get "no such class", a
database that cannot be reached gets "the class is unavailable", and the lecture goes on."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

import classroom
from classroom.store import DATABASE_ENV
from tests.test_app import app_test
from tests.test_classroom import HOSTILE
from ui.lecture.classroom import poll_id
from ui.lecture.syllabus import BY_SLUG, STEPS

STEP = "lecture-attention"
NO_SUCH = "No such class"
UNAVAILABLE = "The class is unavailable"


@pytest.fixture
def store(monkeypatch, tmp_path) -> classroom.Store:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    monkeypatch.setenv(DATABASE_ENV, url)
    return classroom.Store(url)


def joined(page: str, **query: str) -> AppTest:
    at = app_test(page)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def param(at: AppTest, name: str) -> str:
    value = at.query_params[name]
    return value if isinstance(value, str) else value[0]


def texts(at: AppTest) -> str:
    """Every message, caption, markdown and alert on the page, as one text."""
    parts = [*at.markdown, *at.caption, *at.info, *at.success, *at.warning, *at.error]
    return "\n".join(str(p.value) for p in parts)


def assert_drawn(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.title, "the page drew its step"


def test_the_teacher_opens_a_class_in_presenter_mode(store: classroom.Store) -> None:
    at = joined("lecture", present="1")
    at.button(key="class_open").click().run()
    assert_drawn(at)
    code, key = param(at, "class"), param(at, "teacher")
    assert store.is_teacher(code, key)
    assert f"`{code}`" in texts(at)  # the join code, large
    assert any(f"/lecture?class={code}" == c.value for c in at.code)  # the join link
    assert at.get("image"), "the join link's QR code"


def test_a_student_votes_and_the_teacher_counts_and_reveals(store: classroom.Store) -> None:
    o = store.open()
    teacher = joined(STEP, **{"class": o.code, "teacher": o.key})
    assert_drawn(teacher)
    assert store.snapshot(o.code).step == "attention"  # the teacher's step, for the followers
    assert "**0** students have voted." in texts(teacher)
    student = joined(STEP, **{"class": o.code})
    assert_drawn(student)
    assert classroom.is_student(param(student, "student"))  # kept in the URL
    assert "l2_reveal" not in [b.key for b in student.button]  # the teacher reveals
    radio = student.radio(key="l2_guess")
    radio.set_value(radio.options[0]).run()
    assert store.results(o.code)["steps"]["attention"][radio.options[0]] == 1
    assert "Your vote is counted" in texts(student)
    radio.set_value(radio.options[1]).run()  # a changed pick replaces the vote
    assert sum(store.results(o.code)["steps"]["attention"].values()) == 1
    teacher.run()
    assert "**1** student has voted." in texts(teacher)
    teacher.button(key="l2_reveal").click().run()
    assert "attention" in store.snapshot(o.code).revealed
    said = texts(teacher)
    assert "100% of you said" in said and "The model's answer" in said
    student.run()
    assert_drawn(student)
    assert "100% of you said" in texts(student) and student.get("bidi_component")
    assert store.results(o.code)["answers"]["attention"] in radio.options  # kept by the reveal
    radio = student.radio(key="l2_guess")
    counted = radio.value
    radio.set_value(next(a for a in radio.options if a != counted)).run()  # after the reveal
    assert student.radio(key="l2_guess").value == counted  # locked: the counted vote stays
    assert "the votes are locked" in texts(student)
    assert store.results(o.code)["steps"]["attention"][counted] == 1


def test_a_follower_loads_the_teachers_step_afresh(store: classroom.Store) -> None:
    """The join link (the overview) with the teacher on a step: the tab is sent to the
    step's address by a fresh load (not a page switch inside the session, which left some
    tabs blank), keeping the class, the student's id and the language; nothing else drawn."""
    o = store.open()
    joined(STEP, **{"class": o.code, "teacher": o.key})  # the teacher is on the step
    at = joined("lecture", **{"class": o.code, "lang": "ko"})
    assert not at.exception, [e.value for e in at.exception]
    [html] = at.get("html")
    address = re.search(r'location\.replace\("([^"]+)"\)', html.proto.body).group(1)
    path, query = address.split("?")
    assert path == STEP and "/" not in path  # relative: keeps a deployment's base path
    assert parse_qs(query) == {"class": [o.code], "student": [param(at, "student")],
                               "lang": ["ko"]}  # fmt: skip
    n = BY_SLUG[STEP.removeprefix("lecture-")].number
    assert not at.title and f"선생님은 {n}단계에 있습니다." in texts(at)
    again = joined(STEP, **{"class": o.code, "student": param(at, "student")})
    assert_drawn(again)  # on the teacher's step: it stays
    assert not again.get("html") or "location.replace" not in again.get("html")[0].proto.body


def test_in_a_class_next_loads_the_next_step_afresh(store: classroom.Store) -> None:
    """The teacher's Next in a class: a fresh load of the next step's address, keeping the
    class, the teacher's key and presenter mode; not a page switch inside the session (a
    switch while the class's polls ticked left the teacher's tab blank once)."""
    o = store.open()
    at = joined(STEP, **{"class": o.code, "teacher": o.key, "present": "1"})
    at.button(key="lec_next_top").click().run()
    assert not at.exception, [e.value for e in at.exception]
    [script] = [h.proto.body for h in at.get("html") if "location.replace" in h.proto.body]
    path, query = re.search(r'location\.replace\("([^"]+)"\)', script).group(1).split("?")
    assert path == STEPS[BY_SLUG[STEP.removeprefix("lecture-")].number].key  # the next one
    assert parse_qs(query) == {"class": [o.code], "teacher": [o.key], "present": ["1"]}


def test_a_wrong_teacher_key_gets_the_student_view(store: classroom.Store) -> None:
    o = store.open()
    at = joined(STEP, **{"class": o.code, "teacher": "' OR 1=1 --"})
    assert_drawn(at)
    assert at.radio(key="l2_guess") is not None and "l2_reveal" not in [b.key for b in at.button]
    assert store.snapshot(o.code).step == ""  # it moved nothing


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_class_values_say_no_such_class(store: classroom.Store, value: str) -> None:
    at = joined(STEP, **{"class": value, "teacher": value, "student": value})
    assert_drawn(at)
    assert NO_SUCH in texts(at)
    assert "Your answer" not in [r.label for r in at.radio]  # the page alone, as today


@pytest.mark.parametrize("value", HOSTILE[:4], ids=range(4))
def test_a_hostile_code_in_the_join_box_says_no_such_class(store, value: str) -> None:
    at = joined("lecture")
    at.text_input(key="class_code_box").input(value[:12])
    submit = next(b for b in at.button if b.label == "Join")
    submit.click().run()
    assert_drawn(at)
    assert NO_SUCH in texts(at) and "class" not in at.query_params


def test_an_unreachable_database_leaves_the_lecture_alone(monkeypatch) -> None:
    monkeypatch.setenv(DATABASE_ENV, "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = joined(STEP, **{"class": "ABC234"})
    assert_drawn(at)
    assert UNAVAILABLE in texts(at)
    assert "l2_reveal" in [b.key for b in at.button]  # predict, then reveal, as always
    at = joined("lecture", present="1")
    at.button(key="class_open").click().run()
    assert_drawn(at)
    assert UNAVAILABLE in texts(at)


RETRY = """
import streamlit as st
from ui.lecture import classroom
classroom.ticking = lambda: True  # AppTest does not tick fragments: each run is the tick
st.session_state["runs"] = st.session_state.get("runs", 0) + 1
if st.session_state["runs"] < 3:
    classroom.retry({code!r})
st.write(f"runs: {{st.session_state['runs']}}")
"""


def test_the_class_comes_back_with_its_database(monkeypatch, tmp_path) -> None:
    """A page that ran while the database was unreachable polls it (ui.lecture.classroom
    .retry) and runs again, in the class, once it answers; not before."""
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    opened = classroom.Store(url).open()
    monkeypatch.setenv(DATABASE_ENV, "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = AppTest.from_string(RETRY.format(code=opened.code)).run()
    assert not at.exception and at.markdown[0].value == "runs: 1"  # no answer: no rerun
    monkeypatch.setenv(DATABASE_ENV, url)
    at = AppTest.from_string(RETRY.format(code=opened.code)).run()
    assert not at.exception and at.markdown[0].value == "runs: 3"  # it answers: reruns


def test_outside_a_class_nothing_changes(store: classroom.Store) -> None:
    at = joined(STEP)
    assert_drawn(at)
    assert "class" not in at.query_params and "Your answer" not in [r.label for r in at.radio]
    assert "l2_reveal" in [b.key for b in at.button]


def test_each_question_has_its_own_poll_id() -> None:
    assert poll_id("attention", "l2") == "attention"
    assert poll_id("multi-head-attention", "l7") == "multi-head-attention"
    assert poll_id("multi-head-attention", "l7_bank") == "multi-head-attention/bank"
    assert poll_id("watch-it-learn", "l_learn") == "watch-it-learn"
    assert poll_id("build-it-yourself", "l13_A") == "build-it-yourself/A"
    assert poll_id("lab", "lab_spot_B") == "lab/B"


def test_a_class_speaks_korean(store: classroom.Store, monkeypatch) -> None:
    monkeypatch.setenv("GLASSBOX_LANG", "ko")
    o = store.open()
    teacher = joined(STEP, **{"class": o.code, "teacher": o.key, "lang": "ko"})
    student = joined(STEP, **{"class": o.code, "lang": "ko"})
    assert_drawn(teacher)
    assert_drawn(student)
    said = texts(teacher)
    assert "**0**명이 투표했습니다." in said and "students have voted" not in said
    assert f"참여 중인 수업 · {o.code}" in texts(student)
    assert [r.label for r in student.radio if r.key == "l2_guess"] == ["내 답"]
    radio = student.radio(key="l2_guess")
    radio.set_value(radio.options[0]).run()
    teacher.run()
    teacher.button(key="l2_reveal").click().run()
    assert "you said" not in texts(teacher) and "여러분 중" in texts(teacher)


def links(at: AppTest) -> list[str]:
    """Every link the page shows a person: its code blocks and the URLs in its text and in
    its expanders' labels."""
    shown = [c.value for c in at.code] + [str(e.label) for e in at.expander] + [texts(at)]
    link = r"(?:https?://[^\s`]*?)?/lecture\?[^\s`)*]*"
    return [u for text in shown for u in re.findall(link, text)]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_join_link_opens_the_class_in_its_language(store, monkeypatch, lang) -> None:
    """No particle or mark glued to a link or its code, in any language: each link shown to
    the teacher parses to the class's exact code and the class's language, and a student
    who opens it is in the class."""
    o = store.open()
    query = {"class": o.code, "teacher": o.key} | ({"lang": lang} if lang != "en" else {})
    teacher = joined("lecture", **query)
    assert_drawn(teacher)
    found = links(teacher)
    assert found, "the teacher sees the join link"
    for link in found:
        params = parse_qs(link.split("?", 1)[1])
        assert params["class"] == [o.code], link
        assert params.get("lang", ["en"]) == [lang], link
        student = joined("lecture", **{k: v[0] for k, v in params.items()})
        assert_drawn(student)
        assert store.results(o.code)["students"] >= 1
        assert o.code in texts(student)
    label = [str(e.label) for e in teacher.expander if o.code in str(e.label)]
    assert label and all(re.search(rf"\b{o.code}\b", x) for x in label)  # the code stands alone


def test_the_join_link_uses_the_public_address_and_warns_of_localhost(store, monkeypatch):
    o = store.open()
    teacher = joined("lecture", **{"class": o.code, "teacher": o.key})
    said = texts(teacher)  # AppTest has no browser address: the link is the path alone
    assert "GLASSBOX_PUBLIC_URL" in said and "localhost" in said
    monkeypatch.setenv("GLASSBOX_PUBLIC_URL", "https://class.example.org/glassbox/")
    teacher = joined("lecture", **{"class": o.code, "teacher": o.key})
    assert f"https://class.example.org/glassbox/lecture?class={o.code}" in links(teacher)
    assert "localhost" not in texts(teacher)


def test_the_join_link_keeps_the_servers_base_path(store) -> None:
    """Served under a base path (server.baseUrlPath), the link names it; the browser's
    address is no guide to it (Streamlit reports a step's as /lecture-/lecture-attention)."""
    from streamlit import config

    o = store.open()
    config.set_option("server.baseUrlPath", "glassbox")
    try:
        teacher = joined(STEP, **{"class": o.code, "teacher": o.key})
    finally:
        config.set_option("server.baseUrlPath", "")
    shown = [c.value for c in teacher.code]
    assert f"/glassbox/lecture?class={o.code}" in shown, shown


def test_ending_asks_first_keeps_the_results_and_shows_the_summary(store) -> None:
    o = store.open()
    student = joined(STEP, **{"class": o.code})
    radio = student.radio(key="l2_guess")
    radio.set_value(radio.options[0]).run()
    teacher = joined(STEP, **{"class": o.code, "teacher": o.key})
    teacher.button(key="l2_reveal").click().run()
    teacher.button(key="class_close").click().run()  # asks first: nothing ended yet
    assert store.closed(o.code) is None
    teacher.button(key="class_close_yes").click().run()
    assert_drawn(teacher)
    assert store.closed(o.code) is not None
    said = texts(teacher)
    heads = [h.value for h in teacher.subheader]
    assert f"The class {o.code} has ended: what it got right" in heads
    assert "**1** student joined the class." in said
    answer = store.results(o.code)["answers"]["attention"]
    right = 1.0 if answer == radio.options[0] else 0.0
    assert f"1 vote; {right:.0%} picked the model's answer" in said
    csv = [b for b in teacher.get("download_button")]
    assert csv, "the CSV to download"
    # the results still answer, and a student's tab is told the class has ended
    assert store.results(o.code)["steps"]["attention"][radio.options[0]] == 1
    student.run()
    assert_drawn(student)
    assert "The class has ended." in texts(student)
    assert "class" not in student.query_params  # it stopped following


def test_the_teacher_sees_the_choices_and_the_revealed_state(store) -> None:
    o = store.open()
    teacher = joined(STEP, **{"class": o.code, "teacher": o.key})
    student = joined(STEP, **{"class": o.code})
    options = student.radio(key="l2_guess").options
    assert "#### " + " · ".join(options) in [m.value for m in teacher.markdown]
    teacher.button(key="l2_reveal").click().run()
    teacher.run()
    assert "l2_reveal" not in [b.key for b in teacher.button]
    assert "Revealed: the votes are locked." in texts(teacher)
