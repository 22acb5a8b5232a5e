"""The class's store (classroom/), on SQLite always and on PostgreSQL (a throwaway cluster,
tests/pg.py; under CI=true a missing PostgreSQL fails instead of skipping): codes and keys,
following, votes, reveals, results, closing, expiry, the rate limit, hostile values, two
processes on one SQLite file, an unreachable database, and the command line's contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import func, select

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
            store.reveal(o.code, wrong, "attention", CHOICES)
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
    store.reveal(o.code, o.key, "query-key-value", ["c++", "java"])
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
    assert store.results(o.code) == {"students": 0, "steps": {}}


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
        "build-it-yourself/B": {"no 1/√d": 1, "no positions": 0}}}  # fmt: skip


def test_closing_stops_the_code_and_deletes_the_rows(store: Store) -> None:
    o, other = store.open(), store.open()
    for c in (o, other):
        store.vote(c.code, classroom.new_student(), "attention", "river", CHOICES)
        store.reveal(c.code, c.key, "attention", CHOICES)
    assert rows(store, o.code) == 4
    store.close(o.code, o.key)
    assert rows(store, o.code) == 0 and rows(store, other.code) == 4
    for call in (lambda: store.check(o.code), lambda: store.snapshot(o.code),
                 lambda: store.results(o.code), lambda: store.join(o.code, "0" * 16),
                 lambda: store.vote(o.code, "0" * 16, "attention", "river", CHOICES)):  # fmt: skip
        with pytest.raises(classroom.NoSuchClass):
            call()


def test_a_class_expires_after_its_hours(store: Store, clock: Clock) -> None:
    o = store.open(hours=2)
    store.vote(o.code, classroom.new_student(), "attention", "river", CHOICES)
    clock.now += 2 * 3600 - 1
    assert store.check(o.code) == o.code
    clock.now += 2
    with pytest.raises(classroom.NoSuchClass):
        store.check(o.code)
    assert store.purge() >= 1 and rows(store, o.code) == 0


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_class_values_get_no_such_class_and_nothing_else(store: Store, value) -> None:
    o = store.open()
    store.vote(o.code, classroom.new_student(), "attention", "river", CHOICES)
    before = rows(store, o.code)
    for call in (store.check, store.snapshot, store.results,
                 lambda v: store.join(v, classroom.new_student()),
                 lambda v: store.vote(v, classroom.new_student(), "attention", "river", CHOICES),
                 lambda v: store.is_teacher(v, o.key),
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
        "attention": {"river": 1, "cash": 0, "road": 0}}}  # fmt: skip
    hostile = command(["results", "' OR 1=1 --", "--json"], url)
    assert hostile.returncode == 2 and hostile.stdout == "" and "no such class" in hostile.stderr
    assert command(["close", code, "wrong"], url).returncode == 2
    assert command(["close", code, key], url).returncode == 0
    assert "no such class" in command(["results", code, "--json"], url).stderr
