"""A class's rows, over SQLAlchemy 2 Core: SQLite in the app's data folder by default (WAL, a
busy timeout: every replica on one machine shares the file), PostgreSQL for a cluster
(GLASSBOX_DATABASE_URL=postgresql+psycopg://...). The schema is created on start.

Four tables, each keyed on the class's code:
    classes    code, the teacher key's SHA-256, when it opened, closed and expires, the
               teacher's step
    polls      a question (its step slug) with its answer ids, whether it is revealed, and
               the model's answer (stored by the teacher's reveal)
    votes      one row per (poll, student): a changed pick replaces the old one, until the
               reveal locks them
    students   the random ids that joined, and each one's votes in the current minute

A closed class keeps its rows (results, summary) until it expires; its code stops working.

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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

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
    inspect,
    select,
    text,
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
    Column("closed", Float, nullable=True),  # when the teacher closed it; NULL: open
)  # fmt: skip
polls = Table(
    "gb_polls", metadata,
    Column("code", String(CODE_LENGTH), primary_key=True),
    Column("poll", String(MAX_ID), primary_key=True),
    Column("choices", Text, nullable=False),
    Column("revealed", Boolean, nullable=False, default=False),
    Column("answer", String(MAX_ID), nullable=True),  # the model's, stored at the reveal
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
TABLES = (votes, polls, students, classes)  # the order a purge deletes in
ADDED = {classes: ("closed", "FLOAT"), polls: ("answer", f"VARCHAR({MAX_ID})")}  # since 56


class ClassError(Exception):
    """Anything a class refuses; its message is English for logs, the UI says its own."""


class NoSuchClass(ClassError):
    """Not a code, an unknown code, a closed or an expired class."""


class Closed(NoSuchClass):
    """A class the teacher closed: its code no longer works, its results are still kept."""


class NotTeacher(ClassError):
    """A missing or wrong teacher key."""


class Refused(ClassError):
    """A vote that is not one of the question's own answer ids."""


class Locked(Refused):
    """A vote on a revealed poll: the votes lock at the reveal."""


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


@dataclass(frozen=True)
class PollSummary:
    """One poll of a class at its end: the votes per answer (locked at the reveal), the
    model's answer (None if the poll was never revealed), and what they add up to."""

    poll: str
    counts: Mapping[str, int]
    answer: str | None
    revealed: bool

    @property
    def votes(self) -> int:
        return sum(self.counts.values())

    @property
    def right(self) -> float | None:
        """The share of the votes that picked the model's answer (None: no answer, no votes)."""
        if self.answer is None or not self.votes:
            return None
        return self.counts.get(self.answer, 0) / self.votes

    @property
    def other(self) -> str | None:
        """The commonest answer other than the model's that got a vote (ties: the first)."""
        others = [(n, -i, a) for i, (a, n) in enumerate(self.counts.items())
                  if n and a != self.answer]  # fmt: skip
        return max(others)[2] if others else None


def results_csv(results: dict) -> str:
    """`results` (Store.results) as CSV, the contract of `python -m classroom results --csv`:
    the header step,answer,votes,model_answer, then one row per answer of each poll, with
    model_answer true for the model's answer and false otherwise (also for every answer of
    a poll never revealed: its model's answer was never stored)."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["step", "answer", "votes", "model_answer"])
    for poll, counts in results["steps"].items():
        model = results["answers"].get(poll)
        for answer, n in counts.items():
            writer.writerow([poll, answer, n, "true" if answer == model else "false"])
    return out.getvalue()


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


def upgrade(engine: Engine) -> None:
    """Add the columns a database made before them lacks (create_all adds no column to a
    table that exists). Two replicas may add one at once: the loser's error is ignored
    when the column is there after all."""
    for table, (column, kind) in ADDED.items():
        if column in {c["name"] for c in inspect(engine).get_columns(table.name)}:
            continue
        try:
            with engine.connect().execution_options(write=True) as conn, conn.begin():
                conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {column} {kind}"))
        except SQLAlchemyError:
            if column not in {c["name"] for c in inspect(engine).get_columns(table.name)}:
                raise


def engine_for(url: str) -> Engine:
    """One engine (one connection pool) per database URL per process, schema created once."""
    with _lock:
        if url not in _engines:
            engine = None
            try:
                engine = make_engine(url)
                metadata.create_all(engine)
                upgrade(engine)
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
        live = (classes.c.code == p("code"), classes.c.expires > p("now"),
                classes.c.closed.is_(None))  # fmt: skip
        return {
            "live": select(classes.c.key_hash, classes.c.step).where(*live),
            "kept": select(classes.c.key_hash, classes.c.closed).where(*live[:2]),
            "snapshot": select(classes.c.step, polls.c.poll).select_from(classes.outerjoin(
                polls, (polls.c.code == classes.c.code) & polls.c.revealed.is_(True))).where(
                *live),
            "voting": select(classes.c.code, polls.c.revealed).select_from(classes.outerjoin(
                polls, (polls.c.code == classes.c.code) & (polls.c.poll == p("poll")))).where(
                *live),
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
        """(key hash, step) of a live class, or NoSuchClass (Closed for a closed one)."""
        row = conn.execute(self.hot["live"], {"code": code, "now": self.clock()}).first()
        if row is None:
            self._missing(conn, code)
        return row.key_hash, row.step

    def _kept(self, conn: Connection, code: str) -> tuple[str, float | None]:
        """(key hash, when it closed or None) of a class open or closed, not expired; or
        NoSuchClass. What its results are read from."""
        row = conn.execute(self.hot["kept"], {"code": code, "now": self.clock()}).first()
        if row is None:
            raise NoSuchClass("no such class")
        return row.key_hash, row.closed

    def _missing(self, conn: Connection, code: str) -> NoReturn:
        """A class that is not live: Closed if the teacher closed it, else NoSuchClass."""
        _hash, closed = self._kept(conn, code)
        raise Closed("the class is closed") if closed is not None else NoSuchClass("no such class")

    def check(self, value: object) -> str:
        """The code of a live class, or NoSuchClass."""
        code = clean_code(value)
        with self._tx() as conn:
            self._live(conn, code)
        return code

    def is_teacher(self, value: object, key: object) -> bool:
        """Whether `key` is the class's teacher key (compared in constant time), also for a
        closed class whose results are kept (its teacher may still read its summary)."""
        code = clean_code(value)
        if not isinstance(key, str) or not key or len(key) > 200:
            return False
        with self._tx() as conn:
            stored, _closed = self._kept(conn, code)
        return hmac.compare_digest(stored, key_hash(key))

    def _teacher(self, conn: Connection, code: str, key: object) -> None:
        stored, _step = self._live(conn, code)
        _check_key(stored, key)

    def close(self, value: object, key: object) -> None:
        """The teacher ends the class: its code stops working (Closed), its votes and polls
        are kept until it expires, for its results and summary. Closing again changes
        nothing."""
        code = clean_code(value)
        with self._tx(write=True) as conn:
            stored, closed = self._kept(conn, code)
            _check_key(stored, key)
            if closed is None:
                conn.execute(update(classes).where(classes.c.code == code)
                             .values(closed=self.clock()))  # fmt: skip

    def closed(self, value: object) -> float | None:
        """When the class was closed (time.time()), or None while it is open; NoSuchClass
        for an unknown or expired one."""
        code = clean_code(value)
        with self._tx() as conn:
            return self._kept(conn, code)[1]

    def purge(self) -> int:
        """Delete every expired class's rows; how many classes went."""
        with self._tx(write=True) as conn:
            gone = [r.code for r in conn.execute(select(classes.c.code).where(
                classes.c.expires <= self.clock()))]  # fmt: skip
            for table in TABLES:  # a closed class's too: kept only until it expires
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
        """The teacher's step and the revealed polls: what a follower reads every poll.
        Closed once the teacher closed the class."""
        code = clean_code(value)
        with self._tx() as conn:  # one query: the class and its revealed polls
            rows = conn.execute(self.hot["snapshot"], {"code": code, "now": self.clock()}).all()
            if not rows:
                self._missing(conn, code)
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
        A second pick replaces the first until the teacher reveals the poll; after it, any
        vote on it is Locked (every student and the teacher see the same final shares).
        Beyond VOTES_PER_MINUTE a vote is TooFast."""
        code = clean_code(value)
        if not is_student(student):
            raise Refused("not a student id")
        if not isinstance(answer, str) or answer not in choices or len(answer) > MAX_ID:
            raise Refused("not one of the question's answers")
        now = self.clock()
        values = {"code": code, "student": student, "poll": poll[:MAX_ID], "answer": answer,
                  "now": now, "fresh": now - 60}  # fmt: skip
        with self._tx(write=True) as conn:
            row = conn.execute(self.hot["voting"], {"code": code, "poll": values["poll"],
                                                     "now": now}).first()  # fmt: skip
            if row is None:
                self._missing(conn, code)
            if row.revealed:
                raise Locked("the votes on this question are locked: it is revealed")
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

    def reveal(self, value: object, key: object, poll: str, choices: list[str],
               answer: str) -> None:  # fmt: skip
        """The teacher reveals `poll` to every student who follows, and the store keeps the
        model's `answer` (the one the class is shown; a second reveal keeps the first). From
        here on the poll's votes are locked."""
        code = clean_code(value)
        if not isinstance(answer, str) or not answer:
            raise Refused("no model's answer")
        with self._tx(write=True) as conn:
            self._teacher(conn, code, key)
            self._ask(conn, code, poll, choices)
            conn.execute(update(polls).where(polls.c.code == code, polls.c.poll == poll[:MAX_ID])
                         .values(revealed=True, answer=func.coalesce(polls.c.answer,
                                                                     answer[:MAX_ID])))  # fmt: skip

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

    def students(self, value: object) -> int:
        """How many students joined the class (also a closed one, until it expires)."""
        code = clean_code(value)
        with self._tx() as conn:
            self._kept(conn, code)
            return int(conn.execute(select(func.count()).select_from(students).where(
                students.c.code == code)).scalar_one())  # fmt: skip

    def results(self, value: object) -> dict:
        """{"students": n, "steps": {poll: {answer: count}}, "answers": {poll: the model's
        answer}}: every poll asked, with zeros; "answers" holds the polls revealed (the
        reveal stores the model's answer). Also for a closed class, until it expires. For
        the teacher (the UI checks the key first) and `python -m classroom results`."""
        code = clean_code(value)
        with self._tx() as conn:
            return self._results(conn, code)[0]

    def _results(self, conn: Connection, code: str) -> tuple[dict, set[str]]:
        """results()'s dict and the polls revealed."""
        self._kept(conn, code)
        n = conn.execute(select(func.count()).select_from(students).where(
            students.c.code == code)).scalar_one()  # fmt: skip
        steps: dict[str, dict[str, int]] = {}
        answers: dict[str, str] = {}
        revealed: set[str] = set()
        for poll, choices, shown, answer in conn.execute(
            select(polls.c.poll, polls.c.choices, polls.c.revealed, polls.c.answer)
            .where(polls.c.code == code).order_by(polls.c.poll)
        ):  # fmt: skip
            steps[poll] = dict.fromkeys(json.loads(choices), 0)
            if shown:
                revealed.add(poll)
            if answer is not None:
                answers[poll] = answer
        for poll, answer, count in conn.execute(
            select(votes.c.poll, votes.c.answer, func.count())
            .where(votes.c.code == code).group_by(votes.c.poll, votes.c.answer)
        ):  # fmt: skip
            steps.setdefault(poll, {})[answer] = int(count)
        return {"students": int(n), "steps": steps, "answers": answers}, revealed

    def summary(self, value: object) -> list[PollSummary]:
        """The class's summary, one PollSummary per poll asked (in results' order): its
        votes, the share that picked the model's answer before the reveal (the votes lock
        at it) and the commonest other answer. Also for a closed class, until it expires."""
        code = clean_code(value)
        with self._tx() as conn:
            results, revealed = self._results(conn, code)
        return [PollSummary(poll, counts, results["answers"].get(poll), poll in revealed)
                for poll, counts in results["steps"].items()]  # fmt: skip


def _check_key(stored: str, key: object) -> None:
    """NotTeacher unless `key` hashes to `stored` (compared in constant time)."""
    if not isinstance(key, str) or not hmac.compare_digest(stored, key_hash(key)):
        raise NotTeacher("not the teacher")
