"""A class together in Lecture mode (issue 37): the page's side of classroom.Store.

    enter(slug)     every lecture page calls it first (and the Lab page's Spot the bug): reads
                    ?class=CODE (&teacher=KEY | &student=ID) or the session's class, draws the
                    class's bar (the teacher's join code, link and QR code; a student's
                    "follow the teacher"), and keeps the class in the URL
    ask(...)        kit.predict inside a class: a student's pick is their vote, the teacher
                    sees the count and on demand the histogram, live, and reveals to everyone
                    who follows
    open_button()   presenter mode's "Open a class"

Outside a class nothing here draws anything. A code that is no class says so and the page
goes on alone; so does a database that cannot be reached. A student is a random id in the
URL (it survives a replica's death); the teacher's key is checked against the store on
every run. Followers poll the store every POLL_EVERY seconds (a fragment's run_every).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import segno
import streamlit as st

import classroom
import viz
from i18n import DEFAULT, _, language, ngettext
from ui.figures import chart
from ui.show import md_escape
from ui.workarounds import fragment_run
from viz._common import update_axes

POLL_EVERY = 1.0  # seconds between a follower's (and the teacher's counts') reads
PUBLIC_URL = "GLASSBOX_PUBLIC_URL"  # the address students reach (the join link, its QR code)
HERE = "class_here"  # session key: the Joined of the page being drawn
STUDENT, CODE_BOX = "class_student", "class_code_box"
OVERVIEW = "lecture"  # the overview's slug (ui.lecture.frame.OVERVIEW): the teacher stays put
# A student votes with a thumb: each answer is a target at least 44 px high and wide
THUMB_CSS = """<style>
[class*="st-key-class_vote_"] [role="radiogroup"] { gap: 0.5rem; }
[class*="st-key-class_vote_"] [role="radiogroup"] label { min-height: 44px; min-width: 44px;
  padding: 0.3rem 0.9rem 0.3rem 0.6rem; border: 1px solid #c9ced6; border-radius: 0.5rem;
  align-items: center; margin: 0; }
</style>"""
KEPT = ("lang", "present")  # what a follower's tab keeps of its URL on the way to a step


@dataclass
class Joined:
    """The session's class on this page: its code, the student's id or the teacher's key,
    the page's step slug, and whether the student follows the teacher."""

    code: str
    slug: str
    student: str = ""
    key: str = ""
    follows: bool = True
    revealed: frozenset[str] = field(default_factory=frozenset)
    step: str = ""  # the teacher's step when the page was drawn
    go: Callable[[str, dict[str, str]], None] | None = None  # switch to a step (the frame's)
    steps: dict[str, str] = field(default_factory=dict)  # slug -> "2. Attention" (summary)
    slot: object | None = None  # the teacher's place for the step's first question (its top)

    def claim_slot(self) -> object | None:
        """The place at the top of the step for its first question, once (then None): on
        the projector the question, its choices and the count come first."""
        slot, self.slot = self.slot, None
        return slot

    @property
    def teacher(self) -> bool:
        return bool(self.key)


def store() -> classroom.Store:
    """The store of GLASSBOX_DATABASE_URL (an engine per process, classroom.store)."""
    return classroom.Store()


def unavailable() -> None:
    st.warning(_("The class is unavailable right now: the lecture goes on without it."),
               icon=":material/cloud_off:")  # fmt: skip


def no_such_class() -> None:
    st.error(_("No such class: check the code and the link."), icon=":material/group_off:")


def here() -> Joined | None:
    """The class of the page being drawn, or None outside a class."""
    return st.session_state.get(HERE)


def poll_id(slug: str, key: str) -> str:
    """A question's id in a class: its step's slug ("attention"), or slug/name for a step's
    other questions ("multi-head-attention/bank", "build-it-yourself/A")."""
    name = re.sub(r"^(l\d*|lab_spot)(_|$)", "", key)
    return slug if name in ("", *slug.split("-")) else f"{slug}/{name}"


def _params(joined: Joined) -> dict[str, str]:
    """The query that keeps a tab in its class (written back after every page change)."""
    who = {"teacher": joined.key} if joined.teacher else {"student": joined.student}
    return {"class": joined.code, **who}


def _leave() -> None:
    for name in ("class", "teacher", "student"):
        if name in st.query_params:
            del st.query_params[name]
    for name in (HERE, "class_joined", "class_key"):
        st.session_state.pop(name, None)


def enter(slug: str, go: Callable[[str, dict[str, str]], None] | None = None,
          steps: dict[str, str] | None = None) -> Joined | None:  # fmt: skip
    """Join this page to the session's class, if any: the URL's ?class= first, else the one
    this session joined. `slug`: the step's (or "lab"); `go(slug, query)`: how this page
    switches to a step (the lecture's frame gives it: then the teacher's visit moves the
    class here and a follower is taken to the teacher's step; the Lab page gives none);
    `steps`: each step's slug and title, in order (the class's summary names them)."""
    steps = steps or {}
    moves = go is not None
    ss, qp = st.session_state, st.query_params
    ss.pop(HERE, None)
    value = qp.get("class", ss.get("class_joined"))
    if value is None:
        return None
    try:
        s = store()
        try:
            code = s.check(value)
        except classroom.Closed:
            ended(s, value, qp.get("teacher", ss.get("class_key", "")), steps)
            return None
        key = qp.get("teacher", ss.get("class_key", ""))
        key = key if key and s.is_teacher(code, key) else ""
        student = ""
        if not key:
            student = qp.get("student", ss.get(STUDENT, ""))
            student = student if classroom.is_student(student) else classroom.new_student()
            s.join(code, student)
        ss.update(class_joined=code, class_key=key, **{STUDENT: student} if student else {})
        joined = Joined(code, slug, student, key, ss.get("class_follow", True), go=go,
                        steps=steps)  # fmt: skip
        if key and moves and slug != OVERVIEW:
            s.move(code, key, slug)
        snap = s.snapshot(code)
    except classroom.NoSuchClass:
        no_such_class()
        ss.pop("class_joined", None)
        return None
    except classroom.Unavailable:
        unavailable()
        retry(value)
        return None
    joined.revealed, joined.step = snap.revealed, snap.step
    qp.update(_params(joined))
    if moves and not joined.teacher and joined.follows and snap.step and snap.step != slug:
        go_to(joined, snap.step)  # before the page draws: the join link, a late tab
    ss[HERE] = joined
    bar(joined, moves)
    return joined


def ended(s: classroom.Store, value: str, key: str, steps: dict[str, str]) -> None:
    """A class the teacher closed: its teacher sees its summary (kept until it expires); a
    student is told it has ended, and the tab leaves it (no more following)."""
    if key and s.is_teacher(value, key):
        with st.container(border=True):
            code = classroom.clean_code(value)
            st.subheader(_("The class {code} has ended: what it got right", code=code))
            from ui.lecture import summary

            summary.show(code, steps)
        return
    st.warning(_("The class has ended. Thank you for taking part! The lecture stays open to "
                 "explore on your own."), icon=":material/event_available:")  # fmt: skip
    _leave()


def retry(code: str) -> None:
    """While the database cannot be reached: every POLL_EVERY s, ask again; once it answers,
    the page runs again, in the class (a moment's outage does not leave a student out)."""

    @st.fragment(run_every=POLL_EVERY)
    def again() -> None:
        if not ticking():
            return
        with contextlib.suppress(classroom.ClassError):
            s = store()
            s.snapshot(s.check(code))
            st.rerun(scope="app")

    again()


def network_address() -> str | None:
    """This computer's address on its network (not loopback), as its own name resolves;
    None when it has none. Asks no other machine."""
    with contextlib.suppress(OSError):
        for *_rest, sockaddr in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            if not ipaddress.ip_address(sockaddr[0]).is_loopback:
                return sockaddr[0]
    return None


def is_loopback(host: str | None) -> bool:
    if not host or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.endswith(".localhost")


@dataclass(frozen=True)
class JoinLink:
    """The students' link: `url`, and where its address came from: "public" (the setting
    GLASSBOX_PUBLIC_URL), "browser" (the teacher's address bar), "network" (this computer's
    network address in place of the teacher's localhost) or "loopback" (nothing better:
    phones cannot open it)."""

    url: str
    source: str


def join_link(joined: Joined) -> JoinLink:
    """The link a student opens or scans: the setting's address, else the teacher's, with
    this computer's network address in place of a loopback host; the class's language."""
    query = {"class": joined.code} | ({"lang": language()} if language() != DEFAULT else {})
    path = f"/lecture?{urlencode(query)}"
    public = os.environ.get(PUBLIC_URL, "").strip().rstrip("/")
    if public:
        return JoinLink(public + path, "public")
    # The path the app is served under, from the server's setting: the browser's address
    # is no guide (Streamlit reports a step's address as /lecture-/lecture-attention).
    served = str(st.get_option("server.baseUrlPath") or "").strip("/")
    path = f"/{served}{path}" if served else path
    try:
        parts = urlsplit(st.context.url or "")
    except (AttributeError, RuntimeError, ValueError):
        return JoinLink(path, "loopback")
    if not (parts.scheme and parts.netloc):
        return JoinLink(path, "loopback")
    if not is_loopback(parts.hostname):
        return JoinLink(f"{parts.scheme}://{parts.netloc}{path}", "browser")
    here = network_address()
    port = f":{parts.port}" if parts.port else ""
    if here is None:
        return JoinLink(f"{parts.scheme}://{parts.netloc}{path}", "loopback")
    return JoinLink(f"{parts.scheme}://{here}{port}{path}", "network")


def join_url(joined: Joined) -> str:
    """The student's link (`join_link`'s url)."""
    return join_link(joined).url


@st.cache_data(max_entries=64, show_spinner=False)
def qr_png(url: str) -> bytes:
    """The join link's QR code as a PNG (segno; the URL holds only the code)."""
    import io

    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="png", scale=12, border=2)
    return out.getvalue()


def bar(joined: Joined, moves: bool) -> None:
    """The class's line above the step: the teacher's join code and QR code, a student's
    "follow the teacher" and "catch up"; live (it reads the store every POLL_EVERY s)."""
    if joined.teacher:
        teacher_bar(joined)
    else:
        student_bar(joined, moves)
    live(joined, moves)


ENDING = "class_ending"  # session key: the class whose end the teacher is asked to confirm


def teacher_bar(joined: Joined) -> None:
    link = join_link(joined)
    ending = st.session_state.get(ENDING) == joined.code
    # keyed: its open state is kept through the page's reruns (unkeyed, a rerun closed it
    # under the teacher's hand, the End button's question with it)
    with st.expander(_("Class {code} · the join link and its QR code", code=joined.code),
                     expanded=joined.slug == OVERVIEW or ending, icon=":material/groups:",
                     key="class_bar_open"):  # fmt: skip
        # top-aligned: the QR code, arriving after the bar opens, moves nothing beside it
        left, right = st.columns([3, 2], vertical_alignment="top")
        left.markdown(_("Join code"))
        left.markdown(f"# `{joined.code}`")
        left.code(link.url, language=None)
        if link.source == "loopback":
            left.warning(_("This link names this computer only (localhost): students' phones "
                           "cannot open it. Start the app with GLASSBOX_PUBLIC_URL set to an "
                           "address they can reach."), icon=":material/wifi_off:")  # fmt: skip
        elif link.source == "network":
            left.caption(_("The link uses this computer's network address: phones on the same "
                           "network can open it. GLASSBOX_PUBLIC_URL sets another."))  # fmt: skip
        left.caption(_("Students scan the code or open the link; the class ends after {hours:g} "
                       "hours or when you close it.", hours=classroom.HOURS))
        right.image(qr_png(link.url), width=360, caption=_("The join link"))
        one, two = left.columns(2)
        if one.button(_("Class summary"), key="class_summary", icon=":material/bar_chart:"):
            summary_dialog(joined.code, joined.steps)
        if not ending:
            two.button(_("End the class"), key="class_close", icon=":material/logout:",
                       on_click=st.session_state.update, kwargs={ENDING: joined.code})
            return
        # End the class, once the teacher says so: its code stops working, its results stay
        # (until it expires) and its summary is shown (the page's next run: `ended`).
        left.warning(_("**End the class {code}?** The students can no longer vote or follow. "
                       "The results are kept for {hours:g} hours after the class opened.",
                       code=joined.code, hours=classroom.HOURS))  # fmt: skip
        yes, no = left.columns(2)
        yes.button(_("End the class"), key="class_close_yes", type="primary", width="stretch",
                   on_click=end_class, args=(joined.code, joined.key))  # fmt: skip
        no.button(_("Cancel"), key="class_close_no", width="stretch",
                  on_click=st.session_state.pop, args=(ENDING, None))  # fmt: skip


@st.dialog(" ", width="large")
def summary_dialog(code: str, steps: dict[str, str]) -> None:
    """The class's summary, on demand, over the page."""
    from ui.lecture import summary

    st.subheader(_("What the class got right so far"))
    summary.show(code, steps)


def end_class(code: str, key: str) -> None:
    """The confirmation's callback: close the class (before the run it starts)."""
    st.session_state.pop(ENDING, None)
    with contextlib.suppress(classroom.ClassError):
        store().close(code, key)


def student_bar(joined: Joined, moves: bool) -> None:
    ss = st.session_state
    left, right = st.columns([3, 2], vertical_alignment="center")
    left.caption(_(":material/groups: You are in class {code}.", code=joined.code))
    if not moves:
        return
    right.toggle(_("Follow the teacher"), True, key="class_follow", persist_state="session")
    if not joined.follows and joined.step and joined.step != joined.slug and right.button(
            _("Catch up with the teacher"), key="class_catch_up", icon=":material/sync:",
            on_click=ss.update, kwargs={"class_follow": True}):  # fmt: skip
        go_to(joined, joined.step)


def go_to(joined: Joined, slug: str) -> None:
    """Take this tab to step `slug` (the frame's `go`: a fresh load of its address), with
    the class, the language and presenter mode in the URL; nothing more is drawn here."""
    if joined.go is None:
        return
    joined.go(slug, query(joined))
    st.stop()


def query(joined: Joined) -> dict[str, str]:
    """The query a fresh load of a step keeps: the class, the language, presenter mode."""
    kept = {name: st.query_params[name] for name in KEPT if name in st.query_params}
    return {**kept, **_params(joined)}


def live(joined: Joined, moves: bool) -> None:
    """Every POLL_EVERY s: a follower goes to the teacher's step and redraws on a reveal."""

    @st.fragment(run_every=POLL_EVERY)
    def poll() -> None:
        try:
            snap = store().snapshot(joined.code)
            joined_n = store().students(joined.code) if joined.teacher else 0
        except classroom.NoSuchClass:
            if ticking():  # the page's run says it has ended, and leaves the class
                st.rerun(scope="app")
            return
        except classroom.Unavailable:
            st.caption(_("The class is unavailable right now: the lecture goes on without it."))
            return
        if joined.teacher:
            st.caption(ngettext(":material/groups: Join code **{code}** · {n} student joined",
                                ":material/groups: Join code **{code}** · {n} students joined",
                                joined_n, code=joined.code))  # fmt: skip
            return
        if not st.session_state.get("class_follow", True):
            return
        if not ticking():
            return
        if moves and snap.step and snap.step != joined.slug:
            go_to(joined, snap.step)
        elif snap.revealed != joined.revealed:
            st.rerun(scope="app")  # the page's own run shows the reveal

    poll()


def ticking() -> bool:
    """Whether this is a fragment's own run (its run_every tick), not the page's full run
    (which reads the store itself): only a tick moves a follower or reruns on a reveal."""
    return fragment_run()


def open_button() -> None:
    """Presenter mode's "Open a class": a new class, this tab its teacher. The home page's
    "Teach a class" link (?teach=1) presses it."""
    if here() is not None:
        return
    asked = st.query_params.get("teach") == "1"
    if asked:
        del st.query_params["teach"]
    if asked or st.button(_("Open a class"), key="class_open", icon=":material/groups:"):
        try:
            opened = store().open()
        except classroom.Unavailable:
            unavailable()
            return
        st.query_params.update({"class": opened.code, "teacher": opened.key})
        st.session_state.update(class_joined=opened.code, class_key=opened.key)
        st.rerun()


def join_box() -> None:
    """The overview's box for a student who has a code to type."""
    if here() is not None:
        return
    with st.form("class_join", border=False):
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        typed = left.text_input(_("Join a class: its code"), key=CODE_BOX, max_chars=12,
                                placeholder="ABC234")  # fmt: skip
        if right.form_submit_button(_("Join"), icon=":material/login:"):
            try:
                code = store().check(typed)
            except classroom.NoSuchClass:
                no_such_class()
                return
            except classroom.Unavailable:
                unavailable()
                return
            st.query_params["class"] = code
            st.rerun()


# --- a question inside a class ----------------------------------------------------------------


def ask(joined: Joined, key: str, asked: str, choices: list[str], answer: str, why: str,
        label: Callable[[str], str]) -> bool:  # fmt: skip
    """kit.predict inside a class: `asked` (the question, markdown) is put, the pick is a
    vote, the teacher counts and reveals. Returns whether it is revealed in this tab."""
    poll = poll_id(joined.slug, key)
    if joined.teacher:
        return teacher_asks(joined, key, asked, poll, choices, answer, why, label)
    st.markdown(asked)
    return student_asks(joined, key, poll, choices, answer, why, label)


def _said(answer: str, why: str, label: Callable[[str], str]) -> str:
    return _("The model's answer: **{answer}**. {why}", answer=md_escape(label(answer)), why=why)


def class_said(counts: dict[str, int], answer: str, why: str,
               label: Callable[[str], str]) -> str:  # fmt: skip
    """"62% of you said river. The model's answer: ...": the class beside the model."""
    votes = sum(counts.values())
    if not votes:
        return _("Nobody voted. {said}", said=_said(answer, why, label))
    top = max(counts, key=lambda a: (counts[a], a == answer))
    return _("{share:.0%} of you said {top}. {said}", share=counts[top] / votes,
             top=md_escape(label(top)), said=_said(answer, why, label))  # fmt: skip


def class_bars(shares: list[tuple[str, float]], title: str) -> viz.Figure:
    """viz.topk_bar of the class's shares, its axis named for what it shows; its rows
    narrower than a prediction's, so that it fits beside the question on the projector."""
    fig = viz.topk_bar(shares, title=title)
    fig["layout"]["height"] = 16 * len(shares) + 70
    update_axes(fig["layout"], "x", title={"text": _("share of the class")})
    return fig


def histogram(key: str, poll: str, counts: dict[str, int], choices: list[str],
              label: Callable[[str], str]) -> None:  # fmt: skip
    """The class's answers: one bar per answer (its share), and the counts as text."""
    votes = sum(counts.values()) or 1
    shares = [(label(c), counts.get(c, 0) / votes) for c in choices]
    chart(f"{key}_class", (poll, tuple(sorted(counts.items()))), class_bars, shares,
          title=_("the class's answers"), filename="class_answers")  # fmt: skip
    st.markdown(" · ".join(f"{md_escape(label(c))}: {counts.get(c, 0)}" for c in choices))


def teacher_asks(joined: Joined, key: str, asked: str, poll: str, choices: list[str],
                 answer: str, why: str, label: Callable[[str], str]) -> bool:  # fmt: skip
    """The projector's poll: the question, its choices, show / reveal and (revealed) the
    class's final share beside the model's answer on the left; the live count and the
    histogram on the right."""
    ss = st.session_state
    shown = poll in joined.revealed
    left, right = st.columns([3, 2])
    left.markdown(asked)
    left.markdown("#### " + " · ".join(md_escape(label(c)) for c in choices))  # the choices
    show, reveal = left.columns(2, vertical_alignment="center")
    show.toggle(_("Show the class's answers"), key=f"{key}_class_show", value=shown)
    place = reveal.empty()  # the button, and once pressed (in the same run) the revealed state
    if not shown and place.button(_("Reveal to the class"), key=f"{key}_reveal", type="primary",
                                  icon=":material/visibility:"):  # fmt: skip
        try:
            store().reveal(joined.code, joined.key, poll, choices, answer)
        except classroom.ClassError:
            unavailable()
            return False
        joined.revealed = joined.revealed | {poll}
        shown = True
    if shown:
        place.caption(_(":material/lock: Revealed: the votes are locked."))
        try:  # the votes are locked: the class's final share, beside the model's answer
            left.info(class_said(store().tally(joined.code, joined.key, poll), answer, why,
                                 label), icon="💡")  # fmt: skip
        except classroom.ClassError:
            left.info(_said(answer, why, label), icon="💡")

    @st.fragment(run_every=POLL_EVERY)
    def counts() -> None:
        try:
            tally = store().tally(joined.code, joined.key, poll)
        except classroom.ClassError:
            unavailable()
            return
        votes = sum(tally.values())
        st.markdown(ngettext("**{n}** student has voted.", "**{n}** students have voted.",
                             votes))  # fmt: skip
        if ss.get(f"{key}_class_show") or shown:
            histogram(key, poll, tally, choices, label)

    with right:
        counts()
    return shown


def vote(joined: Joined, key: str, poll: str, choices: list[str]) -> None:
    """The radio's callback: the pick is the student's vote (a new pick replaces it, until
    the reveal locks the votes: then the radio goes back to the vote that counted)."""
    ss = st.session_state
    pick = ss.get(f"{key}_guess")
    if pick is None:
        return
    try:
        store().vote(joined.code, joined.student, poll, pick, choices)
        ss[f"{key}_voted"] = "ok"
    except classroom.Locked:
        with contextlib.suppress(classroom.ClassError):
            mine = store().my_vote(joined.code, joined.student, poll)
            ss[f"{key}_guess"] = mine if mine in choices else None
        ss[f"{key}_voted"] = "locked"
    except classroom.TooFast:
        st.session_state[f"{key}_voted"] = "fast"
    except classroom.ClassError:
        st.session_state[f"{key}_voted"] = "down"


def student_asks(joined: Joined, key: str, poll: str, choices: list[str], answer: str,
                 why: str, label: Callable[[str], str]) -> bool:  # fmt: skip
    ss = st.session_state
    if f"{key}_guess" not in ss:  # a new session (a replica died): the vote it gave
        try:
            mine = store().my_vote(joined.code, joined.student, poll)
        except classroom.ClassError:
            mine = None
        ss[f"{key}_guess"] = mine if mine in choices else None
    st.html(THUMB_CSS)
    with st.container(key=f"class_vote_{key}"):
        pick = st.radio(_("Your answer"), choices, key=f"{key}_guess", horizontal=True,
                        format_func=label, on_change=vote, args=(joined, key, poll, choices))
    said = ss.get(f"{key}_voted")
    if said == "fast":
        st.warning(_("Too many votes at once: wait a minute, then pick again."))
    elif said == "down":
        unavailable()
    elif said == "locked":
        st.caption(_(":material/lock: The answer is revealed: the votes are locked."))
    elif pick is not None:
        st.caption(_(":material/how_to_vote: Your vote is counted."))
    following = ss.get("class_follow", True)
    if not following and st.button(_("Reveal the model's answer"), key=f"{key}_reveal",
                                   icon=":material/visibility:"):  # fmt: skip
        ss[f"{key}_shown"] = True
    if not (poll in joined.revealed or (not following and ss.get(f"{key}_shown"))):
        st.caption(_("The teacher reveals the answer when the class has voted."))
        return False
    if poll in joined.revealed:
        try:
            st.info(class_said(store().revealed_tally(joined.code, poll), answer, why, label),
                    icon="💡")  # fmt: skip
        except classroom.ClassError:
            st.info(_said(answer, why, label), icon="💡")
    if pick == answer:
        st.success(_("Right! Your answer was the model's."), icon="✅")
    elif pick is not None:
        st.warning(_("Your answer was {guess}.", guess=md_escape(label(pick))), icon="🤔")
    return True
