"""A class's rows, over SQLAlchemy 2 Core: SQLite in the app's data folder by default (WAL, a
busy timeout: every replica on one machine shares the file), PostgreSQL for a cluster
(GLASSBOX_DATABASE_URL=postgresql+psycopg://...). The schema is created on start.

Four tables, each keyed on the class's code:
    classes    code, the teacher key's SHA-256, when it opened and expires, the teacher's step
    polls      a question (its step slug) with its answer ids, and whether it is revealed
    votes      one row per (poll, student): a changed pick replaces the old one
    students   the random ids that joined, and each one's votes in the current minute

Every statement is built by SQLAlchemy with bound parameters. A value that is not a code
never reaches the database; a database that cannot be reached raises Unavailable.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    case,
    create_engine,
    delete,
    event,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

DATABASE_ENV = "GLASSBOX_DATABASE_URL"  # unset: SQLite in the data folder
DATA_ENV = "GLASSBOX_DATA"  # the app's data folder (default: runs/ in the repository)
DATA_DIR = Path(__file__).resolve().parent.parent / "runs"
SQLITE_FILE = "classroom.sqlite3"
ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, no 1/I: easy to read off a projector
CODE_LENGTH = 6  # 32**6: about a billion codes
CODE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")
STUDENT = re.compile(r"[0-9a-f]{16}")
HOURS = 3.0  # a class expires this many hours after it opened
MAX_HOURS = 24.0
VOTES_PER_MINUTE = 30  # a student's votes are refused beyond this rate
MAX_ID = 120  # the longest poll or answer id stored

metadata = MetaData()
classes = Table(
    "gb_classes", metadata,
    Column("code", String(CODE_LENGTH), primary_key=True),
    Column("key_hash", String(64), nullable=False),
    Column("opened", Float, nullable=False),
    Column("expires", Float, nullable=False),
    Column("step", String(MAX_ID), nullable=False, default=""),
)  # fmt: skip
polls = Table(
    "gb_polls", metadata,
    Column("code", String(CODE_LENGTH), primary_key=True),
    Column("poll", String(MAX_ID), primary_key=True),
    Column("choices", Text, nullable=False),
    Column("revealed", Boolean, nullable=False, default=False),
)  # fmt: skip
votes = Table(
    "gb_votes", metadata,
    Column("code", String(CODE_LENGTH), primary_key=True),
    Column("poll", String(MAX_ID), primary_key=True),
    Column("student", String(16), primary_key=True),
    Column("answer", String(MAX_ID), nullable=False),
    Column("at", Float, nullable=False),
)  # fmt: skip
students = Table(
    "gb_students", metadata,
    Column("code", String(CODE_LENGTH), primary_key=True),
    Column("student", String(16), primary_key=True),
    Column("minute", Float, nullable=False),
    Column("count", Integer, nullable=False),
)  # fmt: skip
TABLES = (votes, polls, students, classes)  # the order a close deletes in


class ClassError(Exception):
    """Anything a class refuses; its message is English for logs, the UI says its own."""


class NoSuchClass(ClassError):
    """Not a code, an unknown code, a closed or an expired class."""


class NotTeacher(ClassError):
    """A missing or wrong teacher key."""


class Refused(ClassError):
    """A vote that is not one of the question's own answer ids."""


class TooFast(ClassError):
    """A student voting faster than VOTES_PER_MINUTE."""


class Unavailable(ClassError):
    """The database cannot be reached: the lecture goes on alone."""


@dataclass(frozen=True)
class Opened:
    """A new class: its join code and the teacher's key (shown once, never stored)."""

    code: str
    key: str

    @property
    def student_url(self) -> str:
        return f"/lecture?class={self.code}"

    @property
    def teacher_url(self) -> str:
        return f"/lecture?class={self.code}&teacher={self.key}"


@dataclass(frozen=True)
class Snapshot:
    """What a follower reads every poll: the teacher's step and the revealed polls."""

    step: str
    revealed: frozenset[str]


def clean_code(value: object) -> str:
    """A class code as typed (spaces, lower case allowed), or NoSuchClass for anything else."""
    code = str(value).strip().upper() if isinstance(value, str) and len(value) <= 40 else ""
    code = code.replace(" ", "").replace("-", "")
    if not CODE.fullmatch(code):
        raise NoSuchClass("no such class")
    return code


def new_student() -> str:
    """A student's random id: no name, nothing personal."""
    return secrets.token_hex(8)


def is_student(value: object) -> bool:
    return isinstance(value, str) and STUDENT.fullmatch(value) is not None


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def default_url() -> str:
    """GLASSBOX_DATABASE_URL, else the SQLite file in the data folder."""
    url = os.environ.get(DATABASE_ENV, "").strip()
    if url:
        return url
    folder = Path(os.environ.get(DATA_ENV) or DATA_DIR)
    return f"sqlite:///{folder / SQLITE_FILE}"


def _sqlite_engine(url: str) -> Engine:
    """SQLite shared by processes: WAL, a busy timeout, and writes that take the lock when
    they begin (BEGIN IMMEDIATE), so two replicas' writes wait instead of failing."""
    database = url.split("///", 1)[-1]
    if database and database != ":memory:":
        try:
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise Unavailable(f"the class database's folder cannot be made: {e}") from e
    engine = create_engine(url, connect_args={"timeout": 10})

    @event.listens_for(engine, "connect")
    def _connect(dbapi, _record) -> None:  # noqa: ANN001 (a DB-API connection)
        dbapi.isolation_level = None  # SQLAlchemy's "begin" below says BEGIN itself
        cursor = dbapi.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        write = conn.get_execution_options().get("write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10,
                         connect_args={"connect_timeout": 5})  # fmt: skip


_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def _forget_engines() -> None:
    """In a forked child: drop the parent's pooled connections without closing them (a
    socket shared by two processes corrupts both sides' conversations)."""
    for engine in _engines.values():
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_engines)


def engine_for(url: str) -> Engine:
    """One engine (one connection pool) per database URL per process, schema created once."""
    with _lock:
        if url not in _engines:
            engine = None
            try:
                engine = make_engine(url)
                metadata.create_all(engine)
            except (SQLAlchemyError, OSError, ImportError) as e:
                if engine is not None:
                    engine.dispose()
                raise Unavailable(f"the class database is unavailable: {type(e).__name__}") from e
            _engines[url] = engine
        return _engines[url]


class Store:
    """The classes of one database. Methods that move, reveal, close or read a class's
    results for the teacher take the teacher's key."""

    def __init__(self, url: str | None = None, clock=time.time) -> None:  # noqa: ANN001
        self.url = url or default_url()
        self.clock = clock
        self.engine = engine_for(self.url)
        self.insert = (postgresql if self.engine.dialect.name == "postgresql" else sqlite).insert
        self.hot = self._statements()
        self.raw = {name: self._compile(self.hot[name]) for name in ("count", "ask", "vote")}

    def _compile(self, statement) -> tuple[str, dict, tuple | None]:  # noqa: ANN001
        """An upsert compiled once: SQLAlchemy does not cache the dialects' ON CONFLICT
        inserts (inherit_cache = False), and compiling one cost more than running it."""
        compiled = statement.compile(dialect=self.engine.dialect)
        return str(compiled), dict(compiled.params), compiled.positiontup

    def _run(self, conn: Connection, name: str, values: dict):  # noqa: ANN201
        """Run the compiled upsert `name` with its named values (still bound, never pasted)."""
        sql, defaults, order = self.raw[name]
        merged = defaults | values
        params = tuple(merged[k] for k in order) if order else merged
        return conn.exec_driver_sql(sql, params)

    def _statements(self) -> dict:
        """The statements every poll and vote runs, built once with named bound parameters
        (building a statement costs more than running it on SQLite)."""
        p, fresh = bindparam, students.c.minute <= bindparam("fresh")
        return {
            "live": select(classes.c.key_hash, classes.c.step).where(
                classes.c.code == p("code"), classes.c.expires > p("now")),
            "snapshot": select(classes.c.step, polls.c.poll).select_from(classes.outerjoin(
                polls, (polls.c.code == classes.c.code) & polls.c.revealed.is_(True))).where(
                classes.c.code == p("code"), classes.c.expires > p("now")),
            "count": self.insert(students).values(
                code=p("code"), student=p("student"), minute=p("now"), count=1)
            .on_conflict_do_update(index_elements=["code", "student"], set_={
                "minute": case((fresh, p("now")), else_=students.c.minute),
                "count": case((fresh, 1), else_=students.c.count + 1)})
            .returning(students.c.count),
            "ask": self.insert(polls).values(code=p("code"), poll=p("poll"), revealed=False,
                                             choices=p("choices")).on_conflict_do_nothing(),
            "vote": self.insert(votes).values(code=p("code"), poll=p("poll"),
                                              student=p("student"), answer=p("answer"),
                                              at=p("now")).on_conflict_do_update(
                index_elements=["code", "poll", "student"],
                set_={"answer": p("answer"), "at": p("now")}),
            "tally": select(votes.c.answer, func.count()).where(
                votes.c.code == p("code"), votes.c.poll == p("poll")).group_by(votes.c.answer),
        }  # fmt: skip

    @contextmanager
    def _tx(self, write: bool = False) -> Iterator[Connection]:
        """One transaction; any database failure becomes Unavailable."""
        try:
            with self.engine.connect().execution_options(write=write) as conn, conn.begin():
                yield conn
        except SQLAlchemyError as e:
            raise Unavailable(f"the class database is unavailable: {type(e).__name__}") from e

    # --- a class ------------------------------------------------------------------------------

    def open(self, hours: float = HOURS) -> Opened:
        """A new class with a fresh code and key, open for `hours`; expired ones are deleted."""
        hours = min(max(float(hours), 0.01), MAX_HOURS)
        key = secrets.token_hex(24)  # hex: never starts with '-', which the CLI read as an option
        now = self.clock()
        self.purge()
        for _try in range(20):
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            with self._tx(write=True) as conn:
                taken = conn.execute(select(classes.c.code).where(classes.c.code == code)).first()
                if taken is None:
                    conn.execute(classes.insert().values(code=code, key_hash=key_hash(key),
                                 opened=now, expires=now + hours * 3600, step=""))  # fmt: skip
                    return Opened(code, key)
        raise Unavailable("no free class code")  # 20 collisions: never seen at a billion codes

    def _live(self, conn: Connection, code: str) -> tuple[str, str]:
        """(key hash, step) of a live class, or NoSuchClass."""
        row = conn.execute(self.hot["live"], {"code": code, "now": self.clock()}).first()
        if row is None:
            raise NoSuchClass("no such class")
        return row.key_hash, row.step

    def check(self, value: object) -> str:
        """The code of a live class, or NoSuchClass."""
        code = clean_code(value)
        with self._tx() as conn:
            self._live(conn, code)
        return code

    def is_teacher(self, value: object, key: object) -> bool:
        """Whether `key` is the class's teacher key (compared in constant time)."""
        code = clean_code(value)
        if not isinstance(key, str) or not key or len(key) > 200:
            return False
        with self._tx() as conn:
            stored, _step = self._live(conn, code)
        return hmac.compare_digest(stored, key_hash(key))

    def _teacher(self, conn: Connection, code: str, key: object) -> None:
        stored, _step = self._live(conn, code)
        if not isinstance(key, str) or not hmac.compare_digest(stored, key_hash(key)):
            raise NotTeacher("not the teacher")

    def close(self, value: object, key: object) -> None:
        """The teacher ends the class: its code stops working and its rows are deleted."""
        code = clean_code(value)
        with self._tx(write=True) as conn:
            self._teacher(conn, code, key)
            for table in TABLES:
                conn.execute(delete(table).where(table.c.code == code))

    def purge(self) -> int:
        """Delete every expired class's rows; how many classes went."""
        with self._tx(write=True) as conn:
            gone = [r.code for r in conn.execute(select(classes.c.code).where(
                classes.c.expires <= self.clock()))]  # fmt: skip
            for table in TABLES:
                if gone:
                    conn.execute(delete(table).where(table.c.code.in_(gone)))
        return len(gone)

    # --- following ----------------------------------------------------------------------------

    def join(self, value: object, student: str) -> str:
        """A student joins (again): their random id is counted once. Returns the code."""
        code = clean_code(value)
        if not is_student(student):
            raise ClassError("not a student id")
        with self._tx(write=True) as conn:
            self._live(conn, code)
            conn.execute(self.insert(students).values(code=code, student=student, minute=0.0,
                         count=0).on_conflict_do_nothing())  # fmt: skip
        return code

    def move(self, value: object, key: object, step: str) -> None:
        """The teacher is on step `step` now (a slug)."""
        code = clean_code(value)
        with self._tx(write=True) as conn:
            self._teacher(conn, code, key)
            conn.execute(update(classes).where(classes.c.code == code).values(step=step[:MAX_ID]))

    def snapshot(self, value: object) -> Snapshot:
        """The teacher's step and the revealed polls: what a follower reads every poll."""
        code = clean_code(value)
        with self._tx() as conn:  # one query: the class and its revealed polls
            rows = conn.execute(self.hot["snapshot"], {"code": code, "now": self.clock()}).all()
        if not rows:
            raise NoSuchClass("no such class")
        return Snapshot(rows[0].step, frozenset(r.poll for r in rows if r.poll is not None))

    # --- polls --------------------------------------------------------------------------------

    def ask(self, value: object, poll: str, choices: list[str]) -> None:
        """The question `poll` with its answer ids, kept as first asked."""
        code = clean_code(value)
        with self._tx(write=True) as conn:
            self._live(conn, code)
            self._ask(conn, code, poll, choices)

    def _ask(self, conn: Connection, code: str, poll: str, choices: list[str]) -> None:
        self._run(conn, "ask", {"code": code, "poll": poll[:MAX_ID], "choices": json.dumps(
            [c[:MAX_ID] for c in choices], ensure_ascii=False)})  # fmt: skip

    def vote(self, value: object, student: str, poll: str, answer: object,
             choices: list[str]) -> None:  # fmt: skip
        """A student's pick for `poll`: one of `choices` (the question's own ids), or Refused.
        A second pick replaces the first; beyond VOTES_PER_MINUTE a vote is TooFast."""
        code = clean_code(value)
        if not is_student(student):
            raise Refused("not a student id")
        if not isinstance(answer, str) or answer not in choices or len(answer) > MAX_ID:
            raise Refused("not one of the question's answers")
        now = self.clock()
        values = {"code": code, "student": student, "poll": poll[:MAX_ID], "answer": answer,
                  "now": now, "fresh": now - 60}  # fmt: skip
        with self._tx(write=True) as conn:
            self._live(conn, code)
            count = self._run(conn, "count", values).scalar_one()
            if count <= VOTES_PER_MINUTE:
                self._ask(conn, code, poll, choices)
                self._run(conn, "vote", values)
        if count > VOTES_PER_MINUTE:
            raise TooFast(f"more than {VOTES_PER_MINUTE} votes a minute")

    def my_vote(self, value: object, student: str, poll: str) -> str | None:
        """The answer this student gave to `poll`, if any."""
        code = clean_code(value)
        with self._tx() as conn:
            return conn.execute(select(votes.c.answer).where(
                votes.c.code == code, votes.c.poll == poll, votes.c.student == student)
            ).scalar_one_or_none()  # fmt: skip

    def reveal(self, value: object, key: object, poll: str, choices: list[str]) -> None:
        """The teacher reveals `poll` to every student who follows."""
        code = clean_code(value)
        with self._tx(write=True) as conn:
            self._teacher(conn, code, key)
            self._ask(conn, code, poll, choices)
            conn.execute(update(polls).where(polls.c.code == code, polls.c.poll == poll)
                         .values(revealed=True))  # fmt: skip

    def tally(self, value: object, key: object, poll: str) -> dict[str, int]:
        """The teacher's histogram of `poll`: answer id -> votes."""
        code = clean_code(value)
        with self._tx() as conn:
            self._teacher(conn, code, key)
            return self._tally(conn, code, poll)

    def revealed_tally(self, value: object, poll: str) -> dict[str, int]:
        """A revealed poll's histogram, for every student; NotTeacher before the reveal."""
        code = clean_code(value)
        with self._tx() as conn:
            self._live(conn, code)
            shown = conn.execute(select(polls.c.revealed).where(
                polls.c.code == code, polls.c.poll == poll)).scalar_one_or_none()  # fmt: skip
            if not shown:
                raise NotTeacher("not revealed yet")
            return self._tally(conn, code, poll)

    def _tally(self, conn: Connection, code: str, poll: str) -> dict[str, int]:
        rows = conn.execute(self.hot["tally"], {"code": code, "poll": poll})
        return {answer: int(n) for answer, n in rows}

    def results(self, value: object) -> dict:
        """{"students": n, "steps": {poll: {answer: count}}}: every poll asked, with zeros.
        For the teacher (the UI checks the key first) and `python -m classroom results`."""
        code = clean_code(value)
        with self._tx() as conn:
            self._live(conn, code)
            n = conn.execute(select(func.count()).select_from(students).where(
                students.c.code == code)).scalar_one()  # fmt: skip
            steps: dict[str, dict[str, int]] = {}
            for poll, choices in conn.execute(select(polls.c.poll, polls.c.choices).where(
                    polls.c.code == code).order_by(polls.c.poll)):  # fmt: skip
                steps[poll] = dict.fromkeys(json.loads(choices), 0)
            for poll, answer, count in conn.execute(
                select(votes.c.poll, votes.c.answer, func.count())
                .where(votes.c.code == code).group_by(votes.c.poll, votes.c.answer)
            ):  # fmt: skip
                steps.setdefault(poll, {})[answer] = int(count)
        return {"students": int(n), "steps": steps}
