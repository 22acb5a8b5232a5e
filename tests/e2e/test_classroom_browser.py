"""A class in real browsers (issue 37): a teacher's tab on the projector and 6 students' tabs.

- On the session's server: the students join by the link and land on the teacher's step,
  follow the teacher to the next one, and vote; the teacher's count and histogram are
  exact; the teacher reveals and every student sees the class's answers beside the model's.
- Through nginx and 2 replicas (tests/e2e/cluster.py, marker deploy): the students vote, a
  replica is killed, they vote again, and the counts are still exact (a student is the id
  in their URL, the votes live in the database).

Both use the app's default database (the SQLite file in runs/), which the test reads too.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import classroom
from tests.e2e import harness

pytestmark = pytest.mark.e2e
STUDENTS = 6
PICKS = [0, 0, 0, 1, 1, 2]  # the option each student picks (by place)
AGAIN = [1, 1, 2, 2, 2, 3]  # their picks after the replica's death
STUDENT_VIEW = {"width": 900, "height": 1100}
WAIT = 120_000  # ms: a loaded machine's first visit of a step may take long; never a sleep
FIRST, SECOND = "attention", "query-key-value"


@pytest.fixture
def opened(app_server) -> Iterator[classroom.Opened]:
    """A class in the server's database (the default one), closed after the test (and
    after a failed test's screenshot: this fixture is set up before the tab)."""
    store = classroom.Store()
    opened = store.open()
    yield opened
    store.close(opened.code, opened.key)


def answers(tab):
    """The student's radio of answers (the sidebar's language menu is a radio too)."""
    return tab.get_by_role("radiogroup", name="Your answer").locator("label")


def students(browser, url: str, opened: classroom.Opened, step: str) -> tuple[list, list]:
    """STUDENTS tabs (each its own browser context) that opened the join link and landed
    on the teacher's step `step`; (contexts, tabs)."""
    contexts = [harness.new_context(browser, STUDENT_VIEW) for _ in range(STUDENTS)]
    tabs = [c.new_page() for c in contexts]
    for n, tab in enumerate(tabs):  # one after the other: each a fresh load of the app
        try:
            tab.goto(url + opened.student_url, wait_until="domcontentloaded")
            tab.wait_for_url(re.compile(f"/lecture-{step}\\?"), timeout=WAIT)
            tab.get_by_text(f"You are in class {opened.code}").wait_for(timeout=WAIT)
        except PlaywrightTimeout:
            tab.screenshot(path=str(harness.ARTIFACTS / "screenshots" / f"FAILED-student-{n}.png"))
            raise
    return contexts, tabs


def vote(tabs: list, picks: list[int]) -> dict[str, int]:
    """Each tab picks its answer (by place); the histogram it makes, by answer."""
    options = answers(tabs[0]).all_inner_texts()
    assert len(options) >= 4, options
    for tab, pick in zip(tabs, picks, strict=True):
        answers(tab).nth(pick).click()
        tab.get_by_text("Your vote is counted").wait_for(timeout=WAIT)
    return {options[p]: picks.count(p) for p in set(picks)}


def counted(store: classroom.Store, code: str, poll: str) -> dict[str, int]:
    return {a: n for a, n in store.results(code)["steps"].get(poll, {}).items() if n}


def test_a_teacher_and_six_students(opened, app_server, browser, page, screenshot_dir) -> None:
    store, teacher = classroom.Store(), page
    harness.open_app(teacher, f"{app_server.url}/lecture-{FIRST}?class={opened.code}"
                     f"&teacher={opened.key}&present=1")  # fmt: skip
    teacher.get_by_text(opened.code).first.wait_for(timeout=WAIT)
    assert store.snapshot(opened.code).step == FIRST
    contexts, tabs = students(browser, app_server.url, opened, FIRST)
    try:
        # the teacher moves on: every student follows
        # pressed with the keyboard: a click's press and release can fall on different
        # places of a page whose live parts redraw (test_class_projector.py, `_class_bar`)
        teacher.get_by_role("button", name="Next").first.press("Enter")
        try:
            teacher.wait_for_url(re.compile(f"/lecture-{SECOND}\\?"), timeout=WAIT)
        except PlaywrightTimeout as err:  # what the teacher's tab showed, for the cause
            teacher.screenshot(path=str(harness.ARTIFACTS / "screenshots"
                                        / "FAILED-teacher-next.png"))  # fmt: skip
            raise AssertionError(
                f"Next did not move the teacher: {teacher.url}; "
                f"{teacher.evaluate(harness.STATE_JS)}; JavaScript errors: {teacher.js_errors}"
            ) from err
        for n, tab in enumerate(tabs):
            try:
                tab.wait_for_url(re.compile(f"/lecture-{SECOND}\\?"), timeout=WAIT)
                answers(tab).first.wait_for(timeout=WAIT)
            except PlaywrightTimeout:
                tab.screenshot(path=str(harness.ARTIFACTS / "screenshots"
                                        / f"FAILED-student-{n}-follows.png"))  # fmt: skip
                raise
        assert store.snapshot(opened.code).step == SECOND

        expected = vote(tabs, PICKS)
        assert store.results(opened.code)["students"] == STUDENTS
        assert counted(store, opened.code, SECOND) == expected

        # the teacher's live count and histogram (within a poll of the store)
        teacher.get_by_text(f"{STUDENTS} students have voted.").wait_for(timeout=WAIT)
        teacher.get_by_text("Show the class's answers").click()
        options = answers(tabs[0]).all_inner_texts()
        line = " · ".join(f"{o}: {expected.get(o, 0)}" for o in options)
        teacher.get_by_text(line, exact=True).wait_for(timeout=WAIT)
        teacher.locator(harness.DRAWN_CHART).first.wait_for(timeout=WAIT)
        teacher.screenshot(path=str(screenshot_dir / "class-projector.png"))

        # the reveal reaches every student who follows
        teacher.get_by_role("button", name="Reveal to the class").press("Enter")
        share = f"{max(expected.values()) / STUDENTS:.0%} of you said"
        teacher.get_by_text(share).first.wait_for(timeout=WAIT)
        for tab in tabs:
            tab.get_by_text(share).first.wait_for(timeout=WAIT)
        assert not harness.exceptions(teacher)
        assert not any(harness.exceptions(tab) for tab in tabs)
    finally:
        for c in contexts:
            c.close()


def revote(store: classroom.Store, opened: classroom.Opened, tab, pick: int,
           timeout: float = 120.0) -> None:  # fmt: skip
    """Pick again until the store holds the new pick: a tab whose replica died reconnects
    to the other one (a click while it is away is lost), then its vote replaces the old."""
    student = parse_qs(urlsplit(tab.url).query)["student"][0]
    deadline = time.monotonic() + timeout
    while True:
        label = answers(tab).nth(pick)
        label.wait_for(timeout=WAIT)
        label.click()
        want = label.inner_text()
        with contextlib.suppress(PlaywrightTimeout):
            tab.get_by_text("Your vote is counted").wait_for(timeout=10_000)
        if store.my_vote(opened.code, student, SECOND) == want:
            return
        assert time.monotonic() < deadline, f"the vote of {student} never came back"


@pytest.mark.deploy
def test_votes_survive_a_replica_killed(browser, chromium_path) -> None:
    from deploy.serve import find_nginx
    from tests.e2e.cluster import Cluster

    if find_nginx() is None:
        harness.unavailable("no nginx found (apt-get install nginx, or set GLASSBOX_NGINX)")
    store = classroom.Store()
    opened = store.open()
    contexts = []
    try:
        with Cluster(2, "classroom") as cluster:
            teacher_ctx = harness.new_context(browser)
            contexts.append(teacher_ctx)
            teacher = teacher_ctx.new_page()
            harness.open_app(teacher, f"{cluster.url}/lecture-{SECOND}?class={opened.code}"
                             f"&teacher={opened.key}")  # fmt: skip
            teacher.get_by_text(opened.code).first.wait_for(timeout=WAIT)
            more, tabs = students(browser, cluster.url, opened, SECOND)
            contexts += more
            expected = vote(tabs, PICKS)
            assert counted(store, opened.code, SECOND) == expected

            old = cluster.kill(1)
            cluster.wait_healthy(1, old)
            options = answers(tabs[0]).all_inner_texts()
            for tab, pick in zip(tabs, AGAIN, strict=True):
                revote(store, opened, tab, pick)
            again = {options[p]: AGAIN.count(p) for p in set(AGAIN)}
            assert counted(store, opened.code, SECOND) == again
            assert store.results(opened.code)["students"] == STUDENTS
            teacher.get_by_text(f"{STUDENTS} students have voted.").wait_for(timeout=WAIT)
    finally:
        for c in contexts:
            c.close()
        store.close(opened.code, opened.key)
