"""A lecture step's page, the overview, and the st.Page of each, served from the syllabus
(no file in pages/): app.py navigates to `pages()`.

Presenter mode (the sidebar's toggle, or ?present=1 in the URL) hides the sidebar, enlarges
the type and keeps previous / next (keys: ← and →) and the step number on every step. A
step's address is its slug (/lecture-attention), so a student can follow the teacher's link;
the old numbered addresses (/lecture_2) open the same steps (`old_links`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

from i18n import DEFAULT, N_, _, language
from ui.lecture import classroom
from ui.lecture.syllabus import BY_SLUG, OLD_NUMBERS, STEPS, Step
from ui.sidebar import APP_NAME, language_menu
from ui.workarounds import leave_legacy_mode

SCREENSHOTS = Path(__file__).resolve().parents[2] / "assets" / "screenshots"
SECTION = N_("Lecture")  # the menu's section: shown as _(SECTION)
ICON = ":material/slideshow:"
OVERVIEW = "lecture"  # the overview's address and key
PRESENTER_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
html { font-size: 20px; }
.block-container { padding-top: 1.2rem !important; max-width: 100% !important; }
</style>"""


def titles() -> dict[str, str]:
    """Each step's slug -> "n. its title" (in the language of the moment), in order."""
    return {step.slug: f"{step.number}. {step.title}" for step in STEPS}


def thumbnail(step: Step) -> Path | None:
    """The step's screenshot in the session's language (lecture-ko-<slug>.png), else the
    English one (lecture-<slug>.png), else None: tests/e2e/screenshots.py copies them."""
    lang = language()
    names = ([f"lecture-{lang}-{step.slug}.png"] if lang != DEFAULT else []) + [f"{step.key}.png"]
    return next((SCREENSHOTS / n for n in names if (SCREENSHOTS / n).is_file()), None)


def _page(run: Callable[[], None], name: str, title: str, url_path: str, icon: str = ICON,
          visibility: str = "visible") -> st.Page:  # fmt: skip
    run.__name__ = run.__qualname__ = name  # Streamlit names a callable page by its function
    return st.Page(run, title=title, icon=icon, url_path=url_path, visibility=visibility)


def step_page(step: Step) -> st.Page:
    """The page of one step, at /lecture-<slug>. Built afresh each run: a Page keeps state
    of its own run, so none is shared between sessions."""
    return _page(lambda: lecture_step(step.slug), step.key.replace("-", "_"),
                 f"{step.number}. {step.title}", step.key)  # fmt: skip


def overview_page() -> st.Page:
    return _page(lecture_overview, "lecture_overview", _("Overview"), OVERVIEW,
                 ":material/school:")


def old_links() -> list[st.Page]:
    """Hidden pages at the numbered addresses of earlier versions (/lecture_5): each loads the
    step it showed then (OLD_NUMBERS) afresh, with the same query (?present=1). Not a page
    switch: as a fresh server's first visit, a switch ended the run before the script that
    closes Streamlit's "Page not found" dialog reached the browser, and the dialog stayed
    over the step."""
    def forward(slug: str) -> Callable[[], None]:
        return lambda: load_step(BY_SLUG[slug], st.query_params.to_dict())

    return [_page(forward(slug), f"lecture_{n}", f"{n}. {BY_SLUG[slug].title}", f"lecture_{n}",
                  visibility="hidden") for n, slug in OLD_NUMBERS.items()]  # fmt: skip


def pages() -> list[st.Page]:
    """Lecture mode's menu section: the overview, then every step in order."""
    return [overview_page(), *[step_page(step) for step in STEPS]]


def _set_present(on: bool) -> None:
    """Presenter mode in the URL (`?present=1`), its one store; the toggle shows it."""
    if on:
        st.query_params["present"] = "1"
    else:
        st.query_params.pop("present", None)
    st.session_state["w_present"] = on


def kept() -> dict[str, str]:
    """What a step's link keeps of this address that no widget binds: presenter mode."""
    return {"present": "1"} if st.query_params.get("present") == "1" else {}


def presenting() -> bool:
    """Presenter mode: the URL's `?present=1`, and the sidebar's toggle that sets it."""
    present = st.query_params.get("present") == "1"
    with st.sidebar:
        st.markdown(_(":material/co_present: **{app}** · Lecture", app=APP_NAME))
        st.toggle(_("Presenter mode"), present, help=_(
            "For a projector: no sidebar, larger type, ← and → step through the lecture. "
            "Leave it with the button at the bottom of the step or by removing ?present=1 "
            "from the address."), key="w_present",
            on_change=lambda: _set_present(st.session_state["w_present"]))
    if present:
        st.html(PRESENTER_CSS)
    return present


def navigation(step: Step, where: str) -> None:
    """Previous / step n of N / next; the arrow keys ← and → press the top bar's."""
    n = len(STEPS)
    left, mid, right = st.columns([1, 3, 1], vertical_alignment="center")
    keys = where == "top"
    if left.button(_("Previous"), key=f"lec_prev_{where}", disabled=step.number == 1,
                   shortcut="Left" if keys else None, width="stretch"):  # fmt: skip
        step_to(STEPS[step.number - 2])
    mid.markdown(_("**Step {n} of {total}** · {title}", n=step.number, total=n,
                   title=step.title))  # fmt: skip
    if right.button(_("Next"), key=f"lec_next_{where}", disabled=step.number == n,
                    type="primary", shortcut="Right" if keys else None,
                    width="stretch"):  # fmt: skip
        step_to(STEPS[step.number])


def step_to(target: Step) -> None:
    """Go to step `target`: a page switch inside the session, or in a class a fresh load of
    its address: a page switch while the class's polls tick (fragments' run_every) can leave
    the teacher's tab blank, as it can followers' (`go_to_step`)."""
    joined = classroom.here()
    if joined is not None:
        load_step(target, classroom.query(joined))
        st.stop()
    st.switch_page(step_page(target), query_params=kept())


def go_to_step(slug: str, query: dict[str, str]) -> None:
    """Take this tab to step `slug` with `query` (a class's follower, ui.lecture.classroom):
    the browser loads the step's address afresh, a new session there. A page switch inside
    the session (st.switch_page) in the run that a poll's tick asked for left some tabs
    blank: Streamlit's frontend (1.67) met a delta for the page before ("Bad delta path
    index") and stopped drawing. A fresh load keeps nothing of the page before; the class,
    the student's id and the language are in `query`."""
    if slug not in BY_SLUG:
        return
    step = BY_SLUG[slug]
    load_step(step, query)
    st.info(_("The teacher is on step {n}.", n=step.number), icon=":material/sync:")


def load_step(step: Step, query: dict[str, str]) -> None:
    """The browser loads `step`'s address afresh, with `query`: a new session there."""
    address = step.key + (f"?{urlencode(query)}" if query else "")  # relative: a base path
    st.html(f"<script>window.location.replace({json.dumps(address)});</script>",
            unsafe_allow_javascript=True)  # fmt: skip


def _open() -> bool:
    """What every lecture page does first: the session's state, then presenter mode."""
    leave_legacy_mode()
    language_menu()  # English / 한국어 in the sidebar, as on every page
    return presenting()


def lecture_step(slug: str) -> None:
    """Draw the step `slug`: header, navigation, the step, navigation."""
    present = _open()
    step = BY_SLUG[slug]
    classroom.enter(slug, go_to_step, titles())  # ?class=: the class's bar; a follower moves
    if not present:
        st.caption(_(":material/school: {app} · Lecture · step {n} of {total}", app=APP_NAME,
                     n=step.number, total=len(STEPS)))  # fmt: skip
    navigation(step, "top")
    st.title(f"{step.number}. {step.title}")
    st.markdown(step.idea)
    teaching = (joined := classroom.here()) is not None and joined.teacher
    if not teaching:  # a teacher's projector shows the step's question first
        step.intro()
    step_body(step.draw)
    if teaching:
        step.intro()
    st.divider()
    navigation(step, "bottom")
    if present:
        classroom.open_button()
    if present:
        st.button(_("Leave presenter mode"), key="lec_leave", on_click=_set_present,
                  args=(False,))


@st.fragment
def step_body(draw: Callable[[], None]) -> None:
    """The step below its title, as one fragment: its own inputs (a sentence, a slider, a
    reveal) rerun only this part, not the menu, the sidebar and the navigation. In a class,
    the teacher's first question is drawn at its top (`Joined.claim_slot`)."""
    joined = classroom.here()
    if joined is not None and joined.teacher:
        joined.slot = st.container()
    draw()


def lecture_overview() -> None:
    """Every step: its number and title (a link), one line, and a thumbnail when one exists."""
    present = _open()
    classroom.enter(OVERVIEW, go_to_step, titles())  # a late joiner goes to the teacher's step
    st.caption(_(":material/school: {app} · Lecture", app=APP_NAME))
    st.title(_("The lecture, step by step"))
    st.markdown(_("The Transformer lecture in its order, each step one idea on the real "
                  "models: first a question for the class, then the model's answer."))
    if present:
        classroom.open_button()
    else:
        classroom.join_box()
    for row in range(0, len(STEPS), 3):
        for column, step in zip(st.columns(3), STEPS[row : row + 3], strict=False):
            with column, st.container(border=True):
                shot = thumbnail(step)
                if shot is not None:
                    st.image(str(shot), width="stretch")
                label = f"{step.number}. {step.title}"
                try:
                    st.page_link(step_page(step), label=label, icon=ICON,
                                 query_params=kept())
                except StreamlitAPIException:  # a page run alone (AppTest): a plain link
                    st.markdown(f"[{label}]({step.key})")
                st.caption(step.idea)
