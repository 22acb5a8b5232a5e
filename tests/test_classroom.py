"""The class's store (classroom/), on SQLite always and on PostgreSQL (a throwaway cluster,
tests/pg.py; under CI=true a missing PostgreSQL fails instead of skipping): codes and keys,
following, votes, reveals (and the votes they lock), results, the class's summary, closing
(which keeps the results until expiry), expiry, the rate limit, hostile values, two processes
on one SQLite file, an older database's schema, an unreachable database, and the command
line's contract (JSON and CSV)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, inspect, select, text

import classroom
from classroom import store as cs
from classroom.store import ALPHABET, CODE_LENGTH, TABLES, Store
from tests import pg

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ["' OR 1=1 --", "🙂🙂🙂🙂🙂🙂", "x" * 10_000, "", " ", "ABC12", "abc1234",
           "'; DROP TABLE gb_votes; --", "%", "_", "\x00", "<script>alert(1)</script>",
           "ＡＢＣＤＥＦ", "ABCDEF\n"]  # fmt: skip
CHOICES = ["river", "cash", "road"]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def postgres_url():
    why = pg.missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs PostgreSQL: {why}", pytrace=False)
        pytest.skip(why)
    with pg.cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'class.sqlite3'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(url, clock) -> Store:
    return Store(url, clock=clock)


def rows(store: Store, code: str) -> int:
    """How many rows of all tables belong to class `code`."""
    with store.engine.connect() as conn:
        return sum(conn.execute(select(func.count()).select_from(t).where(t.c.code == code))
                   .scalar_one() for t in TABLES)  # fmt: skip


def test_a_class_has_a_short_code_and_a_secret_key(store: Store) -> None:
    opened = [store.open() for _ in range(20)]
    for o in opened:
        assert len(o.code) == CODE_LENGTH and set(o.code) <= set(ALPHABET)
        assert not set(o.code) & set("0O1I")
        assert len(o.key) == 48 and set(o.key) <= set("0123456789abcdef")  # no leading '-'
        assert o.student_url == f"/lecture?class={o.code}"
        assert o.teacher_url == f"/lecture?class={o.code}&teacher={o.key}"
        assert store.check(o.code.lower()) == o.code  # typed in lower case: the same class
    assert len({o.code for o in opened}) == 20 and len({o.key for o in opened}) == 20
    with store.engine.connect() as conn:  # the key itself is never stored
        stored = " ".join(r.key_hash for r in conn.execute(select(cs.classes.c.key_hash)))
    assert not any(o.key in stored for o in opened)


def test_only_the_teacher_key_moves_reveals_sees_and_closes(store: Store) -> None:
    o = store.open()
    assert store.is_teacher(o.code, o.key)
    for wrong in (None, "", "x", o.key[:-1], o.key + "x", "' OR 1=1 --", "🙂" * 500):
        assert not store.is_teacher(o.code, wrong)
        with pytest.raises(classroom.NotTeacher):
            store.move(o.code, wrong, "attention")
        with pytest.raises(classroom.NotTeacher):
            store.reveal(o.code, wrong, "attention", CHOICES, "river")
        with pytest.raises(classroom.NotTeacher):
            store.tally(o.code, wrong, "attention")
        with pytest.raises(classroom.NotTeacher):
            store.close(o.code, wrong)
    assert store.snapshot(o.code) == classroom.Snapshot("", frozenset())


def test_students_follow_the_teachers_step_and_reveals(store: Store) -> None:
    o = store.open()
    student = classroom.new_student()
    store.join(o.code, student)
    store.move(o.code, o.key, "attention")
    assert store.snapshot(o.code).step == "attention"
    store.move(o.code, o.key, "query-key-value")
    store.reveal(o.code, o.key, "query-key-value", ["c++", "java"], "java")
    assert store.snapshot(o.code) == classroom.Snapshot("query-key-value",
                                                        frozenset({"query-key-value"}))


def test_a_vote_counts_once_and_a_changed_pick_replaces_it(store: Store) -> None:
    o = store.open()
    a, b = classroom.new_student(), classroom.new_student()
    store.vote(o.code, a, "attention", "river", CHOICES)
    store.vote(o.code, b, "attention", "river", CHOICES)
    assert store.tally(o.code, o.key, "attention") == {"river": 2}
    store.vote(o.code, b, "attention", "cash", CHOICES)
    assert store.tally(o.code, o.key, "attention") == {"river": 1, "cash": 1}
    assert store.my_vote(o.code, b, "attention") == "cash"
    assert store.my_vote(o.code, classroom.new_student(), "attention") is None


@pytest.mark.parametrize("answer", ["bank", "", None, 3, "River", "river " * 50, "' OR 1=1 --"])
def test_a_vote_must_be_one_of_the_questions_own_answers(store: Store, answer) -> None:
    o = store.open()
    with pytest.raises(classroom.Refused):
        store.vote(o.code, classroom.new_student(), "attention", answer, CHOICES)
    with pytest.raises(classroom.Refused):  # nor a student id the app did not make
        store.vote(o.code, "' OR 1=1 --", "attention", "river", CHOICES)
    assert store.results(o.code) == {"students": 0, "steps": {}, "answers": {}}


def test_votes_are_rate_limited_per_student(store: Store, clock: Clock) -> None:
    o = store.open()
    fast, calm = classroom.new_student(), classroom.new_student()
    for n in range(classroom.VOTES_PER_MINUTE):
        store.vote(o.code, fast, "attention", CHOICES[n % 3], CHOICES)
    with pytest.raises(classroom.TooFast):
        store.vote(o.code, fast, "attention", "road", CHOICES)
    store.vote(o.code, calm, "attention", "road", CHOICES)  # the others still vote
    last = CHOICES[(classroom.VOTES_PER_MINUTE - 1) % 3]  # the fast one's last counted pick
    assert store.tally(o.code, o.key, "attention") == {last: 1} | {"road": 1 + (last == "road")}
    clock.now += 61
    store.vote(o.code, fast, "attention", "cash", CHOICES)  # a minute later: again
    assert store.tally(o.code, o.key, "attention") == {"cash": 1, "road": 1}


def test_results_follow_the_contract(store: Store) -> None:
    o = store.open()
    store.join(o.code, classroom.new_student())
    voters = [classroom.new_student() for _ in range(3)]
    for s, pick in zip(voters, ["river", "river", "cash"], strict=True):
        store.vote(o.code, s, "attention", pick, CHOICES)
    store.vote(o.code, voters[0], "build-it-yourself/B", "no 1/√d", ["no 1/√d", "no positions"])
    assert store.results(o.code) == {"students": 4, "steps": {
        "attention": {"river": 2, "cash": 1, "road": 0},
        "build-it-yourself/B": {"no 1/√d": 1, "no positions": 0}}, "answers": {}}  # fmt: skip
    store.reveal(o.code, o.key, "attention", CHOICES, "cash")  # the reveal keeps the answer
    assert store.results(o.code)["answers"] == {"attention": "cash"}


def test_votes_lock_at_the_reveal(store: Store) -> None:
    """Issue 56: after the reveal every student and the teacher see the same final shares."""
    o = store.open()
    a, b, late = (classroom.new_student() for _ in range(3))
    store.vote(o.code, a, "attention", "river", CHOICES)
    store.vote(o.code, b, "attention", "cash", CHOICES)
    store.vote(o.code, a, "attention", "road", CHOICES)  # before the reveal: a change counts
    store.reveal(o.code, o.key, "attention", CHOICES, "river")
    final = {"road": 1, "cash": 1}
    for student, pick in ((a, "river"), (b, "river"), (late, "cash")):
        with pytest.raises(classroom.Locked):  # a changed vote, or a first one, after it
            store.vote(o.code, student, "attention", pick, CHOICES)
    assert store.tally(o.code, o.key, "attention") == final
    assert store.revealed_tally(o.code, "attention") == final
    assert store.my_vote(o.code, a, "attention") == "road"
    store.reveal(o.code, o.key, "attention", CHOICES, "cash")  # again: the first answer stays
    assert store.results(o.code)["answers"] == {"attention": "river"}
    store.vote(o.code, b, "query-key-value", "java", ["c++", "java"])  # other polls stay open
    assert store.tally(o.code, o.key, "query-key-value") == {"java": 1}
    assert issubclass(classroom.Locked, classroom.Refused)


def cast(store: Store, o: classroom.Opened) -> dict[str, dict[str, int]]:
    """A small class: 5 students vote on three polls, two of them revealed. Returns the
    votes cast, per poll, as the test itself counts them."""
    picks = {"attention": ["river", "river", "cash", "river", "road"],
             "query-key-value": ["c++", "java", "java"],
             "positions": ["yes", "no"]}  # fmt: skip
    choices = {"attention": CHOICES, "query-key-value": ["c++", "java", "haskell"],
               "positions": ["yes", "no"]}  # fmt: skip
    voters = [classroom.new_student() for _ in range(5)]
    for poll, chosen in picks.items():
        for student, pick in zip(voters, chosen, strict=False):
            store.vote(o.code, student, poll, pick, choices[poll])
    store.reveal(o.code, o.key, "attention", CHOICES, "river")
    store.reveal(o.code, o.key, "query-key-value", choices["query-key-value"], "haskell")
    return {poll: {c: picks[poll].count(c) for c in choices[poll]} for poll in picks}


def expected_csv(counted: dict[str, dict[str, int]], answers: dict[str, str]) -> list[list[str]]:
    """The CSV's rows as the test computes them from the votes it cast."""
    return [["step", "answer", "votes", "model_answer"]] + [
        [poll, answer, str(n), "true" if answers.get(poll) == answer else "false"]
        for poll in sorted(counted)
        for answer, n in counted[poll].items()
    ]


def test_the_summary_gives_each_polls_share_and_commonest_other_answer(store: Store) -> None:
    o = store.open()
    counted = cast(store, o)
    summary = {s.poll: s for s in store.summary(o.code)}
    assert [s.poll for s in store.summary(o.code)] == sorted(counted)
    attention, qkv, positions = (summary[p] for p in ("attention", "query-key-value",
                                                      "positions"))  # fmt: skip
    assert dict(attention.counts) == counted["attention"] and attention.votes == 5
    assert attention.answer == "river" and attention.revealed
    assert attention.right == pytest.approx(3 / 5) and attention.other == "cash"  # tie: first
    assert qkv.right == 0 and qkv.other == "java" and qkv.votes == 3
    assert positions.answer is None and not positions.revealed  # never revealed: no answer
    assert positions.right is None and positions.other == "yes"
    empty = classroom.PollSummary("x", {"a": 0, "b": 0}, "a", True)
    assert empty.votes == 0 and empty.right is None and empty.other is None


def test_the_csv_has_one_row_per_answer(store: Store) -> None:
    o = store.open()
    counted = cast(store, o)
    answers = {"attention": "river", "query-key-value": "haskell"}
    got = list(csv.reader(io.StringIO(classroom.results_csv(store.results(o.code)))))
    assert got == expected_csv(counted, answers)
    tricky = classroom.results_csv({"students": 1, "steps": {"s": {'a, "b"': 1}},
                                    "answers": {"s": 'a, "b"'}})  # fmt: skip
    assert list(csv.reader(io.StringIO(tricky)))[1] == ["s", 'a, "b"', "1", "true"]


def test_closing_stops_the_code_and_keeps_the_results(store: Store, clock: Clock) -> None:
    o, other = store.open(hours=2), store.open()
    for c in (o, other):
        store.vote(c.code, classroom.new_student(), "attention", "river", CHOICES)
        store.reveal(c.code, c.key, "attention", CHOICES, "river")
    assert rows(store, o.code) == 4
    before, summary = store.results(o.code), store.summary(o.code)
    clock.now += 60
    store.close(o.code, o.key)
    assert store.closed(o.code) == clock.now and store.closed(other.code) is None
    assert rows(store, o.code) == 4 and rows(store, other.code) == 4  # kept
    for call in (lambda: store.check(o.code), lambda: store.snapshot(o.code),
                 lambda: store.join(o.code, "0" * 16), lambda: store.move(o.code, o.key, "x"),
                 lambda: store.vote(o.code, "0" * 16, "attention", "river", CHOICES),
                 lambda: store.reveal(o.code, o.key, "attention", CHOICES, "river"),
                 lambda: store.tally(o.code, o.key, "attention")):  # fmt: skip
        with pytest.raises(classroom.Closed):  # a NoSuchClass: the pages say it has ended
            call()
    assert store.results(o.code) == before and store.summary(o.code) == summary
    assert store.students(o.code) == before["students"] == 1
    assert store.is_teacher(o.code, o.key) and not store.is_teacher(o.code, "x")
    with pytest.raises(classroom.NotTeacher):
        store.close(o.code, "wrong")
    clock.now += 60
    store.close(o.code, o.key)  # again: nothing changes
    assert store.closed(o.code) == clock.now - 60
    clock.now += 2 * 3600  # a closed class expires as an open one does
    assert store.purge() >= 1 and rows(store, o.code) == 0
    for call in (store.results, store.summary, store.closed, store.check, store.students):
        with pytest.raises(classroom.NoSuchClass) as raised:
            call(o.code)
        assert not isinstance(raised.value, classroom.Closed)


def test_a_class_expires_after_its_hours(store: Store, clock: Clock) -> None:
    o = store.open(hours=2)
    store.vote(o.code, classroom.new_student(), "attention", "river", CHOICES)
    clock.now += 2 * 3600 - 1
    assert store.check(o.code) == o.code
    clock.now += 2
    with pytest.raises(classroom.NoSuchClass):
        store.check(o.code)
    with pytest.raises(classroom.NoSuchClass):
        store.results(o.code)
    assert store.purge() >= 1 and rows(store, o.code) == 0


def test_a_database_made_before_the_closed_and_answer_columns_gets_them(tmp_path) -> None:
    """A database from before issue 56 (no gb_classes.closed, no gb_polls.answer): the
    store adds the columns on start, and its classes go on."""
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    old = create_engine(url)
    with old.begin() as conn:
        conn.execute(text("CREATE TABLE gb_classes (code VARCHAR(6) PRIMARY KEY, key_hash "
                          "VARCHAR(64) NOT NULL, opened FLOAT NOT NULL, expires FLOAT NOT NULL, "
                          "step VARCHAR(120) NOT NULL)"))  # fmt: skip
        conn.execute(text("CREATE TABLE gb_polls (code VARCHAR(6), poll VARCHAR(120), choices "
                          "TEXT NOT NULL, revealed BOOLEAN NOT NULL, PRIMARY KEY (code, poll))"))
    old.dispose()
    store = Store(url)
    names = {t: {c["name"] for c in inspect(store.engine).get_columns(t)}
             for t in ("gb_classes", "gb_polls")}  # fmt: skip
    assert "closed" in names["gb_classes"] and "answer" in names["gb_polls"]
    o = store.open()
    store.vote(o.code, classroom.new_student(), "attention", "road", CHOICES)
    store.reveal(o.code, o.key, "attention", CHOICES, "road")
    store.close(o.code, o.key)
    assert store.results(o.code)["answers"] == {"attention": "road"}


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_class_values_get_no_such_class_and_nothing_else(store: Store, value) -> None:
    o = store.open()
    store.vote(o.code, classroom.new_student(), "attention", "river", CHOICES)
    before = rows(store, o.code)
    for call in (store.check, store.snapshot, store.results,
                 lambda v: store.join(v, classroom.new_student()),
                 lambda v: store.vote(v, classroom.new_student(), "attention", "river", CHOICES),
                 lambda v: store.is_teacher(v, o.key), store.summary, store.closed,
                 lambda v: store.close(v, o.key)):  # fmt: skip
        with pytest.raises(classroom.NoSuchClass):
            call(value)
    assert rows(store, o.code) == before


def test_many_students_voting_at_once_are_all_counted(store: Store) -> None:
    o = store.open()
    voters = [classroom.new_student() for _ in range(60)]
    with ThreadPoolExecutor(12) as pool:
        list(pool.map(lambda s: store.vote(o.code, s, "attention", "cash", CHOICES), voters))
    assert store.tally(o.code, o.key, "attention") == {"cash": 60}
    assert store.results(o.code)["students"] == 60


VOTER = """
import sys
from classroom import Store, new_student
store = Store(sys.argv[1])
for _ in range(40):
    store.vote(sys.argv[2], new_student(), "attention", "river", ["river", "cash"])
"""


def test_two_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    """Two replicas on one machine: two processes writing the same file at once."""
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    o = Store(url).open()
    procs = [subprocess.Popen([sys.executable, "-c", VOTER, url, o.code], cwd=ROOT)
             for _ in range(2)]  # fmt: skip
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert Store(url).tally(o.code, o.key, "attention") == {"river": 80}
    with Store(url).engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


@pytest.mark.parametrize("url", [
    "postgresql+psycopg://nobody@127.0.0.1:1/none",
    "sqlite:////proc/no-such-folder/class.sqlite3",
    "nonsense://x",
])  # fmt: skip
def test_an_unreachable_database_is_unavailable(url: str) -> None:
    with pytest.raises(classroom.Unavailable):
        Store(url).open()


def test_the_default_database_is_sqlite_in_the_data_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv(cs.DATABASE_ENV, raising=False)
    monkeypatch.setenv(cs.DATA_ENV, str(tmp_path))
    assert cs.default_url() == f"sqlite:///{tmp_path / cs.SQLITE_FILE}"
    monkeypatch.setenv(cs.DATABASE_ENV, "postgresql+psycopg://x@h/db")
    assert cs.default_url() == "postgresql+psycopg://x@h/db"


def command(args: list[str], url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, cs.DATABASE_ENV: url}
    return subprocess.run([sys.executable, "-m", "classroom", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_the_command_line_keeps_the_contract(url: str) -> None:
    done = command(["open", "--json"], url)
    assert done.returncode == 0, done.stderr
    opened = json.loads(done.stdout)
    assert set(opened) == {"code", "student_url", "teacher_url"}
    code = opened["code"]
    assert opened["student_url"] == f"/lecture?class={code}"
    key = opened["teacher_url"].split("&teacher=")[1]
    assert opened["teacher_url"] == f"/lecture?class={code}&teacher={key}"
    store = Store(url)
    store.vote(code, classroom.new_student(), "attention", "river", CHOICES)
    done = command(["results", code, "--json"], url)
    assert json.loads(done.stdout) == {"students": 1, "steps": {
        "attention": {"river": 1, "cash": 0, "road": 0}}, "answers": {}}  # fmt: skip
    counted = cast(store, classroom.Opened(code, key))
    counted["attention"]["river"] += 1  # the vote above
    answers = {"attention": "river", "query-key-value": "haskell"}
    want = json.loads(done.stdout) | {"students": 6, "steps": counted, "answers": answers}
    assert json.loads(command(["results", code, "--json"], url).stdout) == want
    done = command(["results", code, "--csv"], url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "step,answer,votes,model_answer"  # the contract
    assert list(csv.reader(io.StringIO(done.stdout))) == expected_csv(counted, answers)
    hostile = command(["results", "' OR 1=1 --", "--json"], url)
    assert hostile.returncode == 2 and hostile.stdout == "" and "no such class" in hostile.stderr
    assert command(["close", code, "wrong"], url).returncode == 2
    assert command(["close", code, key], url).returncode == 0
    assert json.loads(command(["results", code, "--json"], url).stdout) == want  # closed: kept
    assert command(["results", code, "--csv"], url).stdout == done.stdout
    assert command(["results", "ABCDEF", "--csv"], url).returncode == 2
