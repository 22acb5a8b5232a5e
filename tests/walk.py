"""The page walk's parts (issue 35; not a test module): how a page's views are found, the
hostile values each box gets, and what a person reads on a drawn page.

tests/test_walk.py draws every page of the app once per view and language and runs every
check on that drawing; the browser tests borrow EXAMPLE_TOKENS and `english_left`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache

from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import TESTING_KEY

import i18n.catalogue as catalogue
from tests.charts import charts
from tests.test_app import app_test
from ui.show import section_ids, section_key

# --- the views of a page ----------------------------------------------------------------------

SHORT_RADIO = 4  # radios with at most this many options open a view per option (not layers)
LANGUAGE_MENU = "lang"  # a view of its own: the walk draws each language from the start


@dataclass
class View:
    """One way into a page: what to do to a freshly run page to reach it. `tab` is the
    section tab it opens (None: the page's first tab), `reveal` the question it reveals."""

    name: str
    steps: list[Callable[[AppTest], None]] = field(default_factory=list)
    tab: str | None = None
    reveal: str | None = None
    option: bool = False  # another option of a short radio: the same content, other input

    def open(self, key: str, lang: str) -> AppTest:
        at = app_test(key)
        at.session_state["lang"] = lang
        at.run()
        for step in self.steps:
            step(at)
            at.run()
        return at

    def then(self, name: str, step: Callable[[AppTest], None], **kwargs: str) -> View:
        return View(f"{self.name}, {name}", [*self.steps, step], self.tab, **kwargs)


def set_state(key: str, value: object) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        at.session_state[key] = value

    return step


def switch_on(key: str) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        at.toggle(key=key).set_value(True)  # through the widget: its on_change runs

    return step


def click(key: str) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        at.button(key=key).click()

    return step


def choose(key: str, label: str) -> Callable[[AppTest], None]:
    def step(at: AppTest) -> None:
        pick(at.radio(key=key), label)

    return step


def pick(widget, labels: str | list[str]) -> None:
    """Choose a menu's options by the labels drawn, as a browser does: AppTest knows the
    options only as labels, so its copy of the page's format_func is set to `str` for this
    widget, and the server turns the label back into the page's value."""
    widget.root.session_state[TESTING_KEY][widget.id] = str
    widget.set_value(labels)


def reveal_buttons(at: AppTest) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.endswith("_reveal")]


def section_options(at: AppTest, page: str) -> list[str]:
    """The labels of `page`'s section picker as drawn ([] without one: ui.show.lazy_sections)."""
    return [o for b in at.button_group if (b.key or "").startswith(section_key(page))
            for o in b.options]  # fmt: skip


def views(key: str, first: AppTest, lang: str) -> list[View]:
    """Every view the page offers, found from its first run (`first`): each section tab,
    each expander drawn only while open, each toggle turned on, each short radio's other
    options, each question revealed (also one found only inside an expander)."""
    found = [View("first view")]
    found += [View(f"tab {tab}", [set_state(section_key(key), tab)], tab=tab)
              for tab in section_ids(key)[1:] if section_options(first, key)]  # fmt: skip
    opened = [View(f"expander {e.key}", [set_state(e.key, True)])
              for e in first.expander if getattr(e, "key", None)]  # fmt: skip
    opened += [View(f"toggle {t.key}", [switch_on(t.key)]) for t in first.toggle if t.key]
    found += opened
    for radio in first.radio:
        if (radio.key and not radio.key.endswith("_guess") and radio.key != LANGUAGE_MENU
                and len(radio.options) <= SHORT_RADIO):  # fmt: skip
            found += [View(f"{radio.key} = {o}", [choose(radio.key, o)], option=True)
                      for o in radio.options[1:]]  # fmt: skip
    shown = reveal_buttons(first)
    found += [View(f"revealed {b}", [click(b)], reveal=b) for b in shown]
    for view in opened:  # a question drawn only inside an expander (the heads step's)
        if view.name.startswith("expander"):
            inside = [b for b in reveal_buttons(view.open(key, lang)) if b not in shown]
            found += [view.then(f"revealed {b}", click(b), reveal=b) for b in inside]
    return found


# --- the boxes and what they are given -------------------------------------------------------

# Text that a visitor may type, paste or upload. Those in REFUSED must draw a message.
HOSTILE_TEXT: dict[str, str] = {
    "empty": "",
    "only spaces": "   \t  ",
    "60,000 characters": ("the dog bit the man " * 3000)[:60000],
    "256 tokens": " ".join(["the dog bit the man and"] * 60),
    "html and script": "<script>alert(1)</script><b>bold</b><img src=x onerror=alert(2)>",
    "3,000 emoji": "😀" * 3000,
    "right-to-left, zero-width, combining": "\u202eשלום\u200b مرحبا\u200f e\u0301\u0301\u0301x",
    "a NUL byte": "the cat\x00 sat",
    "only punctuation": "?!.,;:—…",
    "300 masks": " ".join(["[MASK]"] * 300),
    "outside the vocabulary": "zyzzyva quokka xylophonist",
}
REFUSED = {"empty", "only spaces"}
MARKUP = ("<script", "onerror", "<img")
KINDS = ("text_area", "text_input", "number_input", "selectbox", "multiselect", "radio",
         "slider")  # fmt: skip


def boxes(at: AppTest) -> Iterator[tuple[str, str]]:
    """(kind, key) of every keyed input the view drew, but the language menu (the walk
    draws each language from the start)."""
    for kind in KINDS:
        for widget in getattr(at, kind):
            if widget.key and widget.key != LANGUAGE_MENU:
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


def give(at: AppTest, kind: str, key: str, value: object) -> None:
    """Put `value` in the box, as a visitor would (not run yet); a box in a form is sent
    with the form's submit button."""
    widget = getattr(at, kind)(key=key)
    if kind in ("text_area", "text_input"):
        widget.input(value)
    elif kind in ("selectbox", "multiselect", "radio"):
        pick(widget, value)
    else:
        widget.set_value(value)
    form = widget.proto.form_id
    submit = [b for b in at.button if form and b.proto.form_id == form
              and b.proto.is_form_submitter]  # fmt: skip
    if submit:
        submit[0].click()


def messages(at: AppTest) -> set[str]:
    return {m.value for m in (*at.error, *at.warning, *at.info)}


def last_line(stack: list[str]) -> str:
    """The exception's own line ("ValueError: ..."), not the redacted message."""
    return next((line.strip() for line in reversed(stack) if line.strip()), "?")[-200:]


def markup_shown(at: AppTest) -> list[str]:
    """The visitor's markup where it could be rendered: an element that allows HTML, the
    app's own st.html elements, or a chart."""
    found = []
    for element in [*at.markdown, *at.caption]:
        if element.proto.allow_html and any(m in element.value for m in MARKUP):
            found.append(f"markup rendered as HTML: {element.value[:80]!r}")
    for element in at.get("html"):  # the app's own CSS and scripts only
        if any(m in str(element.proto) for m in MARKUP[1:]) or "alert(" in str(element.proto):
            found.append("the visitor's markup reached an st.html element")
    found += [f"chart {c.key} carries raw markup" for c in charts(at)
              if any(m in c.spec for m in MARKUP)]  # fmt: skip
    return found


# --- what a person reads ----------------------------------------------------------------------

HANGUL = re.compile(r"[가-힣]")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
# Where a person reads text: an element's or widget's fields, a figure's (titles, ticks,
# legends, hovers, annotations); not ids, keys, or Plotly's settings ("right", "markers").
ELEMENT_TEXT = {"body", "label", "help", "options", "placeholder", "caption"}
FIGURE_TEXT = {"text", "ticktext", "name", "hovertemplate", "texttemplate", "customdata",
               "hovertext", "fullScreenTitle", "dictionary"}  # fmt: skip


def _strings(value: object, out: list[str], keys: set[str], inside: bool = False) -> None:
    """Every string under one of `keys` in a proto's dict or a figure's JSON."""
    if isinstance(value, str):
        if inside:
            out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, out, keys, inside or key in keys)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, keys, inside)


def page_text(at: AppTest) -> list[str]:
    """What a person reads on the page: every element's and widget's text (values, labels,
    help, options, placeholders), every table's column names and text cells, and every
    chart's titles, axes, legends and hovers."""
    found: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and type(node).__name__ != "UnknownElement":
            _strings(MessageToDict(proto), found, ELEMENT_TEXT)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    for frame in at.dataframe:  # a table's column names and text cells (Arrow, not in the proto)
        table = frame.value
        found += [str(c) for c in table.columns]
        found += [v for c in table.columns for v in table[c].tolist() if isinstance(v, str)]
    for chart in charts(at):
        _strings({"figure": chart.figure, "config": chart.config}, found, FIGURE_TEXT)
    return [html.unescape(s).replace("\\", "") for s in found]


@cache
def english_messages() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(message, the English pieces a Korean page must not show) for every message of the
    source whose Korean differs from it: the message itself, or, for one with placeholders,
    each piece between them of two words or more that the Korean does not keep."""
    korean = catalogue.read_catalogue(catalogue.po_path())
    found = []
    for message in catalogue.extract():
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        entry = korean.get(message.id)
        strings = entry.string if entry is not None else ""
        strings = strings if isinstance(strings, tuple) else (strings,)
        if all(catalogue.same_in_both(i) for i in ids) or any(s == i for s in strings
                                                                 for i in ids):  # fmt: skip
            continue
        pieces = tuple(
            piece.strip(" :;,.·()")
            for i in ids
            for piece in _PLACEHOLDER.split(i.replace("{{", "{").replace("}}", "}"))
        )
        if _PLACEHOLDER.search(ids[0]):  # a piece the Korean keeps too ("Hugging Face") is none
            pieces = tuple(p for p in pieces if len(p.split()) >= 2 and len(p) >= 10
                           and not any(p in k for k in strings))  # fmt: skip
        else:
            pieces = tuple(p for p in {ids[0].strip()} if len(p) >= 4)
        if pieces:
            found.append((ids[0], pieces))
    return tuple(found)


@cache
def _english_pattern() -> tuple[re.Pattern, dict[str, list[str]], dict[str, list[str]]]:
    """english_messages() as one pattern for the pieces of two words or more (longest
    first), and each piece's messages: (pattern, messages by long piece, by word)."""
    long: dict[str, list[str]] = {}
    words: dict[str, list[str]] = {}
    for message, pieces in english_messages():
        for piece in pieces:
            (long if " " in piece else words).setdefault(piece, []).append(message)
    alternatives = "|".join(re.escape(p) for p in sorted(long, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![A-Za-z])"), long, words


def english_left(texts: list[str]) -> list[str]:
    """The catalogue messages still shown in English in `texts`: a one-word message that
    is a whole text, a longer one (or a piece of one with placeholders) inside a text.
    (A piece inside another one found is not named again: the list may be short, never
    empty when English is left.)"""
    pattern, long, words = _english_pattern()
    found = [m for text in {t.strip() for t in texts} for m in words.get(text, [])]
    found += [m for hit in pattern.finditer("\n".join(texts)) for m in long[hit.group()]]
    return list(dict.fromkeys(found))


# The tokens of each lecture step's own example that its figure must show once revealed.
EXAMPLE_TOKENS = {
    "lecture-rnn-bottleneck": ["clauses in the sentence"],
    "lecture-attention": ["river", "bank", "swam"],
    "lecture-query-key-value": ["c++", "haskell"],
    "lecture-tokens-and-embeddings": ["industrial", "aluminum"],
    "lecture-positional-encoding": ["dog", "man", "bit"],
    "lecture-watch-it-learn": ["reverse", "without positions"],
    "lecture-similarity-and-softmax": ["bank", "river"],
    "lecture-multi-head-attention": ["researcher", "assistant"],
    "lecture-transformer-layer": ["cat", "mat"],
    "lecture-cross-attention": ["school"],
    "lecture-bert": ["[MASK]", "river"],
    "lecture-gpt": ["school"],
    "lecture-vision-transformer": ["[CLS]"],
    "lecture-build-it-yourself": ["cat", "warm"],
}
