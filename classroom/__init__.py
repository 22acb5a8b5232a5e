"""A class together: join codes, the teacher's step, votes on the lecture's questions.

    store.py     the Store over SQLAlchemy 2 Core (SQLite by default, PostgreSQL with
                 GLASSBOX_DATABASE_URL), its errors and the code/student id rules
    __main__.py  python -m classroom open --json | results CODE --json|--csv | close CODE KEY

No Streamlit here: the lecture's pages (ui/lecture/classroom.py) and tools outside the
repository use the same Store. docs/CLASSROOM.md says how to teach with it.
"""

from classroom.store import (
    DATABASE_ENV,
    HOURS,
    VOTES_PER_MINUTE,
    ClassError,
    Closed,
    Locked,
    NoSuchClass,
    NotTeacher,
    Opened,
    PollSummary,
    Refused,
    Snapshot,
    Store,
    TooFast,
    Unavailable,
    clean_code,
    is_student,
    new_student,
    results_csv,
)

__all__ = [
    "DATABASE_ENV", "HOURS", "VOTES_PER_MINUTE", "ClassError", "Closed", "Locked",
    "NoSuchClass", "NotTeacher", "Opened", "PollSummary", "Refused", "Snapshot", "Store",
    "TooFast", "Unavailable", "clean_code", "is_student", "new_student", "results_csv",
]  # fmt: skip
