"""Every box of every page, given hostile values (issue 25): generated, not listed by hand.

For each page in the registry (explorer pages and lecture steps) the test opens every view
it can find by itself: the first view, each section tab, each expander drawn only while
open, each toggle turned on (compare mode), each short radio's options (the image source),
and the lecture step's answer revealed. In each view it finds every text area, text input,
number input, select box, multiselect, radio and slider drawn, and gives each one hostile
values in turn, on a fresh copy of that view. It asserts:
- no exception element, and the page still shows its title;
- no element that may render HTML, and no chart, carries the visitor's markup;
- a blank or refused text is answered by a message that was not there before;
- every kind of element drawn has its Streamlit JavaScript fetched early
  (ui.workarounds.widget_js.CHUNKS, or drawn by what the page loads first).
A new page, tab or box is covered without editing this file. The bounded-work tests
(tests/test_bounds.py) count the work the worst inputs cost; this one checks the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import TESTING_KEY, Block

from tests.charts import charts as drawn_charts
from tests.test_app import EVERY_PAGE, app_test
from ui.show import section_ids, section_key
from ui.workarounds.widget_js import CHUNKS, IN_ENTRY

# Text that a visitor may type, paste or upload. Those in REFUSED must draw a message.
HOSTILE_TEXT: dict[str, str] = {
    "empty": "",
    "only spaces": "   \t  ",
    "60,000 characters": ("the dog bit the man " * 3000)[:60000],
    "html and script": "<script>alert(1)</script><b>bold</b><img src=x onerror=alert(2)>",
    "3,000 emoji": "😀" * 3000,
    "right-to-left, zero-width, combining": "\u202eשלום\u200b مرحبا\u200f e\u0301\u0301\u0301x",
    "a NUL byte": "the cat\x00 sat",
    "only punctuation": "?!.,;:—…",
    "300 masks": " ".join(["[MASK]"] * 300),
    "outside the vocabulary": "zyzzyva quokka xylophonist",
}
REFUSED = {"empty", "only spaces"}
SHORT_RADIO = 4  # radios with at most this many options open a view per option (not layers)
MARKUP = ("<script", "onerror", "<img")


@dataclass
class View:
    """One way into a page: what to do to a freshly run page to reach it."""

    name: str
    steps: list[Callable[[AppTest], None]] = field(default_factory=list)

    def open(self, key: str) -> AppTest:
        at = app_test(key).run()
        for step in self.steps:
            step(at)
            at.run()
        return at


def _set_state(key: str, value: object) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        at.session_state[key] = value

    return step


def _switch_on(key: str) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        at.toggle(key=key).set_value(True)  # through the widget: its on_change runs

    return step


def _click(key: str) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        at.button(key=key).click()

    return step


def _choose(key: str, label: str) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        _pick(at.radio(key=key), label)

    return step


def _pick(widget, labels: str | list[str]) -> None:
    """Choose a menu's options by the labels drawn, as a browser does: AppTest knows the
    options only as labels, so its copy of the page's format_func is set to `str` for this
    widget, and the server turns the label back into the page's value."""
    widget.root.session_state[TESTING_KEY][widget.id] = str
    widget.set_value(labels)


def views(key: str) -> list[View]:
    """Every view the page offers, found from its first run."""
    at = View("first view").open(key)
    found = [View("first view")]
    found += [View(f"tab {t.label}", [_set_state(section_key(key), tab)])
              for t, tab in zip(at.tabs, section_ids(key), strict=True)]  # fmt: skip
    found += [View(f"expander {e.key}", [_set_state(e.key, True)])
              for e in at.expander if getattr(e, "key", None)]  # fmt: skip
    found += [View(f"toggle {t.key}", [_switch_on(t.key)]) for t in at.toggle if t.key]
    for radio in at.radio:  # not the language menu: the Korean pages are tests/test_i18n.py's
        if (radio.key and not radio.key.endswith("_guess") and radio.key != "w_lang"
                and len(radio.options) <= SHORT_RADIO):  # fmt: skip
            found += [View(f"{radio.key} = {o}", [_choose(radio.key, o)])
                      for o in radio.options[1:]]  # fmt: skip
    found += [View("revealed", [_click(b.key)]) for b in at.button
              if b.key and b.key.endswith("_reveal")]  # fmt: skip
    return found


def boxes(at: AppTest) -> Iterator[tuple[str, str]]:
    """(kind, key) of every keyed input the view drew; not the language menu (English or
    Korean, nothing hostile to give it: the Korean pages are tests/test_i18n.py's)."""
    for kind in ("text_area", "text_input", "number_input", "selectbox", "multiselect",
                 "radio", "slider"):  # fmt: skip
        for widget in getattr(at, kind):
            if widget.key and widget.key != "w_lang":
                yield kind, widget.key


def hostile_values(at: AppTest, kind: str, key: str) -> dict[str, object]:
    """The values to try on one box: hostile text, numbers outside the range, every end
    of a menu, everything chosen at once."""
    widget = getattr(at, kind)(key=key)
    if kind in ("text_area", "text_input"):
        return HOSTILE_TEXT
    if kind in ("number_input", "slider"):
        lo, hi = widget.min, widget.max
        if isinstance(widget.value, tuple):  # a range slider
            return {"below its range": (lo - 1, lo - 1), "above its range": (hi + 1, hi + 1)}
        return {"below its range": lo - 1, "above its range": hi + 1, "its minimum": lo,
                "its maximum": hi}  # fmt: skip
    options = list(widget.options)
    if kind == "multiselect":
        return {"nothing": [], "everything": options}
    return {"its first option": options[0], "its last option": options[-1]}


def _set(at: AppTest, kind: str, key: str, value: object) -> None:
    widget = getattr(at, kind)(key=key)
    if kind in ("text_area", "text_input"):
        widget.input(value)
    elif kind in ("selectbox", "multiselect", "radio"):
        _pick(widget, value)
    else:
        widget.set_value(value)


def element_kinds(node, found: set[str] | None = None) -> set[str]:
    """Every kind of element drawn under `node` ("text_input", "bidi_component", ...)."""
    found = set() if found is None else found
    for child in getattr(node, "children", {}).values():
        if isinstance(child, Block):
            element_kinds(child, found)
        else:
            found.add(child.type)
    return found


def messages(at: AppTest) -> set[str]:
    return {m.value for m in (*at.error, *at.warning, *at.info)}


def _last_line(stack: list[str]) -> str:
    """The exception's own line ("ValueError: ..."), not the redacted message."""
    return next((line.strip() for line in reversed(stack) if line.strip()), "?")[-200:]


def problems(at: AppTest, title: str, before: set[str], label: str) -> list[str]:
    """What is wrong with the page after one hostile value (empty when nothing is)."""
    found = [f"exception: {_last_line(e.stack_trace)}" for e in at.exception]
    if not any(t.value == title for t in at.title):
        found.append(f"the title {title!r} is gone")
    for element in [*at.markdown, *at.caption]:
        if element.proto.allow_html and any(m in element.value for m in MARKUP):
            found.append(f"markup rendered as HTML: {element.value[:80]!r}")
    for element in at.get("html"):  # the app's own CSS and scripts only
        if any(m in str(element.proto) for m in MARKUP[1:]) or "alert(" in str(element.proto):
            found.append("the visitor's markup reached an st.html element")
    for chart in drawn_charts(at):
        if any(m in chart.spec for m in MARKUP):
            found.append(f"chart {chart.key} carries raw markup")
    if label in REFUSED and not messages(at) - before:
        found.append("no message says what to type")
    return found


@pytest.mark.parametrize("key", EVERY_PAGE)
def test_every_box_answers_hostile_input(key: str) -> None:
    failures: list[str] = []
    for view in views(key):
        base = view.open(key)
        if base.exception:
            failures.append(f"{view.name}: {[e.message for e in base.exception]}")
            continue
        title = base.title[0].value
        before = messages(base)
        # Streamlit's JavaScript for each kind drawn is fetched early (ui.workarounds.widget_js)
        unknown = element_kinds(base._tree) - set(CHUNKS) - IN_ENTRY
        failures += [f"{view.name}: {kind} is not in widget_js.CHUNKS" for kind in unknown]
        for kind, box in list(boxes(base)):
            at = view.open(key)
            for label, value in hostile_values(base, kind, box).items():
                if (kind, box) not in set(boxes(at)):  # the last value hid it: start again
                    at = view.open(key)
                _set(at, kind, box, value)
                at.run()
                found = problems(at, title, before, label)
                failures += [f"{view.name} / {box} = {label}: {p}" for p in found]
                if found:  # the next value starts from a clean view, not from this one
                    at = view.open(key)
    assert not failures, "\n".join(failures)


def test_the_views_and_boxes_are_found() -> None:
    """The discovery itself: the tokens page's tabs and its sidebar boxes, a step's reveal."""
    tokens = {v.name for v in views("tokens")}
    assert {"first view", "tab Nearest neighbours", "toggle w_compare_on"} <= tokens
    assert ("text_area", "w_sentence") in set(boxes(View("first view").open("tokens")))
    assert "revealed" in {v.name for v in views("lecture-positional-encoding")}
    compare = next(v for v in views("attention") if v.name == "toggle w_compare_on")
    assert ("text_input", "w_compare_text") in set(boxes(compare.open("attention")))
