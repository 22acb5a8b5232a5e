"""Lecture mode: the lecture's steps in order, each one idea on the real models, with a
question for the class before the model's answer, and a presenter mode for a projector.

    lecture_step(                   # the first line of every pages/lecture_<n>.py
        "lecture_2",
    )

Presenter mode (the sidebar's toggle, or ?present=1 in the URL) hides the sidebar, enlarges
the type and keeps previous / next (keys: ← and →) and the step number on every step. The
step is the page's own path (/lecture_2), so a student can follow the teacher's link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

import model
from ui import cache, state
from ui.frame import APP_NAME, leave_legacy_mode
from ui.registry import BY_KEY
from ui.show import md_escape

SCREENSHOTS = Path(__file__).resolve().parent.parent / "assets" / "screenshots"
PRESENTER_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
html { font-size: 20px; }
.block-container { padding-top: 1.2rem !important; max-width: 100% !important; }
</style>"""


@dataclass(frozen=True)
class LectureStep:
    """One step: its number, title, the idea in one line, and the function drawing it."""

    number: int
    title: str
    idea: str
    draw: Callable[[], None]

    @property
    def key(self) -> str:
        return f"lecture_{self.number}"


def pick(page: str) -> tuple[str, str]:
    """The first model that can serve explorer page `page`, and the device it runs on."""
    names = cache.models_for(BY_KEY[page])
    if not names:
        st.error("No model here can serve this step.")
        st.stop()
    return names[0], model.pick_device(st.session_state.get("device", "auto"))


def presenting() -> bool:
    """Presenter mode: the sidebar's toggle, set from ?present=1 when a session opens."""
    ss = st.session_state
    if "present" not in ss:
        ss["present"] = st.query_params.get("present") == "1"
    ss["w_present"] = ss["present"]
    with st.sidebar:
        st.markdown(f":material/co_present: **{APP_NAME}** · Lecture")
        st.toggle("Presenter mode", key="w_present", help="For a projector: no sidebar, "
                  "larger type, ← and → step through the lecture. Leave it with the button at "
                  "the bottom of the step or by removing ?present=1 from the address.",
                  on_change=lambda: ss.update(present=ss["w_present"]))  # fmt: skip
    if ss["present"]:
        st.query_params["present"] = "1"
        st.html(PRESENTER_CSS)
    elif "present" in st.query_params:
        del st.query_params["present"]
    return ss["present"]


def _go(number: int) -> None:
    st.switch_page(f"pages/lecture_{number}.py")


def navigation(step: LectureStep, where: str) -> None:
    """Previous / step n of N / next; the arrow keys ← and → press the top bar's."""
    from ui.lessons import STEPS

    n = len(STEPS)
    left, mid, right = st.columns([1, 3, 1], vertical_alignment="center")
    keys = where == "top"
    if left.button("Previous", key=f"lec_prev_{where}", disabled=step.number == 1,
                   shortcut="Left" if keys else None, width="stretch"):  # fmt: skip
        _go(step.number - 1)
    mid.markdown(f"**Step {step.number} of {n}** · {step.title}")
    if right.button("Next", key=f"lec_next_{where}", disabled=step.number == n, type="primary",
                    shortcut="Right" if keys else None, width="stretch"):  # fmt: skip
        _go(step.number + 1)


def lecture_step(key: str) -> None:
    """Draw lecture step `key` ("lecture_3"): header, navigation, the step, navigation; or,
    for "lecture", the overview of every step."""
    from ui.lessons import STEPS

    leave_legacy_mode()
    state.init_state()
    present = presenting()
    if key == "lecture":
        st.caption(f":material/school: {APP_NAME} · Lecture")
        st.title("The lecture, step by step")
        st.markdown("The Transformer lecture in its order, each step one idea on the real "
                    "models: first a question for the class, then the model's answer.")  # fmt: skip
        overview()
        return
    step = STEPS[int(key.split("_")[1]) - 1]
    if not present:
        st.caption(f":material/school: {APP_NAME} · Lecture · step {step.number} of {len(STEPS)}")
    navigation(step, "top")
    st.title(f"{step.number}. {step.title}")
    st.markdown(step.idea)
    step.draw()
    st.divider()
    navigation(step, "bottom")
    if present and st.button("Leave presenter mode", key="lec_leave"):
        st.session_state["present"] = False
        st.rerun()


def predict(key: str, question: str, choices: list[str], answer: str, why: str) -> bool:
    """Predict, then reveal: the class picks an answer, then the model's answer is shown.
    Returns whether it is revealed (the step then draws its figure)."""
    ss = st.session_state
    st.markdown(f"**:material/quiz: Predict first.** {question}")
    pick_ = st.radio("The class's answer", choices, index=None, key=f"{key}_guess",
                     horizontal=True)  # fmt: skip
    if st.button("Reveal the model's answer", key=f"{key}_reveal", type="primary",
                 icon=":material/visibility:"):  # fmt: skip
        ss[f"{key}_shown"] = True
    if not ss.get(f"{key}_shown"):
        st.caption("Pick an answer with the class, then reveal.")
        return False
    said = f"The model's answer: **{md_escape(answer)}**. {why}"
    if pick_ is None:
        st.info(said, icon="💡")
    elif pick_ == answer:
        st.success("Right! " + said, icon="✅")
    else:
        st.warning(f"Not {md_escape(pick_)}. " + said, icon="🤔")
    return True


def try_your_own(key: str, label: str, default: str, where=None, max_chars: int = 300) -> str:
    """The step's own text box ("try your own"), kept for the session, stripped and cut to
    `max_chars` (the browser's limit, checked again here). A blank box says what to type
    under it and gives "". `where`: a column or container to put it in (default: here)."""
    where = where or st
    text = where.text_input(label, default, key=key, max_chars=max_chars).strip()[:max_chars]
    if not text:
        where.info(f"“{label}” is empty: type something in it to try it.", icon="✍️")
    return text


def overview() -> None:
    """Every step: its number and title (a link), one line, and a thumbnail when one exists."""
    from ui.lessons import STEPS

    for row in range(0, len(STEPS), 3):
        for column, step in zip(st.columns(3), STEPS[row : row + 3], strict=False):
            with column, st.container(border=True):
                shot = SCREENSHOTS / f"{step.key}.png"
                if shot.exists():
                    st.image(str(shot), width="stretch")
                label = f"{step.number}. {step.title}"
                try:
                    st.page_link(f"pages/{step.key}.py", label=label, icon=":material/slideshow:")
                except StreamlitAPIException:  # a page run alone (AppTest): a plain link
                    st.markdown(f"[{label}]({step.key})")
                st.caption(step.idea)
