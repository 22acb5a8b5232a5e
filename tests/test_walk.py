"""One walk per page and language (issue 35): every page of the app (the registry's
explorer pages, Lecture mode's overview and steps) is drawn through AppTest once per view
it offers, in English and in Korean, and every check runs on that drawing:

- no exception, the page's title there, no visitor markup where it could render;
- bounded work: at most MAX_CHARTS charts and MAX_NUMBERS numbers sent, and on the text
  pages at most MAX_FORWARD forward passes for the worst inputs (counted, not timed);
- numbers in heatmap cells only where they fit (PLOT_PX), the sinusoids as curves;
- in Korean: Hangul, no catalogue message left in English, the page's own sentences (SAYS);
- a lecture step asks first, and its answer reveals a figure of its own example (in
  presenter mode the sidebar is hidden);
- in English, every box gets every hostile value (walk.HOSTILE_TEXT, numbers out of
  range, each end of a menu) in the first view that draws it; the shared sentence box also
  every lecture example.
  In Korean the text boxes get the hostile text that draws a message. A box the first
  view already drew (the sidebar's) gets, in every other view, the inputs that stress what
  that view draws (AGAIN); its menus get their ends in the first view. A value a box
  already holds is not given again (the view itself was checked with it), and a view that
  is another option of a short radio (layer 2, a drawn digit) gives only the boxes it adds.

The views and boxes are found by the walk itself (tests/walk.py), so a new page, tab or
box is covered without editing this file.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import ui.cache
from i18n import _, using
from model.examples import PROBES
from model.lm import TransformerLM
from tests.charts import charts
from tests.test_app import EVERY_PAGE, PAGES, shows_token, tokens_of
from tests.walk import (
    EXAMPLE_TOKENS,
    HANGUL,
    HOSTILE_TEXT,
    REFUSED,
    View,
    boxes,
    english_left,
    give,
    hostile_values,
    last_line,
    markup_shown,
    messages,
    page_text,
    section_options,
    views,
)
from ui.lecture.syllabus import BY_SLUG
from ui.show import section_ids

TABBED = {"tokens", "positional", "masked", "causal"}  # sections as tabs (lazy_sections)
MAX_FORWARD = 6  # forward passes on one run of a text page (trace, masked trace, predictions)
MAX_CHARTS = 16
MAX_NUMBERS = 100_000  # numbers in all the figures of one view together
WORST = {"60,000 characters", "256 tokens", "3,000 emoji", "300 masks"}  # counted from cold
# What a box of the first view gets again in another view (a tab, a toggle, a reveal): the
# inputs that stress what the view draws (bounded work), a blank one, markup
AGAIN = WORST | REFUSED | {"html and script"}
# In Korean the text boxes get the values that draw a message (blank, cut, unknown, markup)
KOREAN_HOSTILE = {"empty", "only spaces", "60,000 characters", "html and script",
                  "outside the vocabulary"}  # fmt: skip
# Plot areas measured in Chromium at 1280x720 (the charts' .nsewdrag boxes), in px.
PLOT_PX = {"tok_cosine": 169, "pos_dot": 104, "causal_attention": 217}
SAYS = {  # (page, open tab or None) -> sentences (or their start) it shows in Korean
    ("tokens", None): ["모델은 글자를 보지 않습니다", "토큰 임베딩 (토큰 × 차원)", "수치"],
    ("tokens", "neighbours"): ["**어휘에서 가장 가까운 토큰** (코사인)",
                               "주성분 분석(PCA)은 벡터를"],
    ("positional", None): ["어텐션은 모든 토큰을 다른 모든 토큰과 비교할 뿐", "첫 번째 아이디어"],
    ("positional", "order"): ["위치 정보가 없으면 어순이 보이지 않습니다",
                              "코사인 (위치 없음)"],
    ("attention", None): ["각 토큰은 **쿼리**를 던지고", "행은 쿼리, 열은 키이며",
                          "단계별로: 레이어 1, 헤드 1"],
    ("masked", None): ["BERT 같은 인코더는", "모델의 추측", "마스크할 토큰"],
    ("masked", "learns"): ["BERT의 학습 방식: 무작위로 뽑은 토큰 15%", "다시 뽑기"],
    ("masked", "knockout"): ["헤드를 하나씩 제거했을 때", "함께 제거할 헤드"],
    ("causal", None): ["GPT 같은 디코더는 **왼쪽**만 볼 수 있습니다", "인과 마스크"],
    ("causal", "writing"): ["다음 토큰", "한 번에 한 토큰씩 생성하기", "온도"],
    ("rnn", None): ["순환 신경망은 문장을", "한 단어씩 읽기", "측정한 병목"],
    ("cross_attention", None): ["인코더는 셀프 어텐션으로 영어 문장을 읽습니다", "원문 (인코더)",
                                "교차 어텐션: 쿼리는 디코더에서, 키는 인코더에서"],
    ("vision", None): ["비전 트랜스포머(ViT)는", "테스트 이미지", "토큰이 된 패치"],
    ("vision", "cls"): ["[CLS]가 보는 곳", "롤아웃: 모든 레이어, 헤드 평균"],
}


@pytest.fixture
def forward_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts TransformerLM.forward calls (every trace, fill-mask and next-token pass)."""
    calls: list[int] = []
    original = TransformerLM.forward

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TransformerLM, "forward", counted)
    return calls


# --- the checks on one drawing ------------------------------------------------------------------


def numbers_in(spec: dict) -> int:
    """How many numbers a figure sends: its traces' z, x and y arrays."""
    total = 0
    for trace in spec["data"]:
        for name in ("z", "x", "y"):
            value = trace.get(name)
            if isinstance(value, dict) and "shape" in value:  # a typed array
                total += int(np.prod([int(n) for n in str(value["shape"]).split(",")]))
            elif isinstance(value, list):
                total += len(json.dumps(value).split(","))
    return total


def cells_fit(fig: dict, plot_px: float) -> bool:
    """Every heatmap with numbers in its cells draws them at a size that fits a cell of a
    plot area `plot_px` wide, and keeps its values for the hover."""
    for trace in fig["data"]:
        if trace.get("type") != "heatmap" or not trace.get("texttemplate"):
            continue
        text = trace["text"]
        longest = max(len(str(v)) for row in text for v in row)
        if longest * trace["textfont"]["size"] * 0.6 > plot_px / len(text[0]):
            return False
        if trace.get("customdata") is None:
            return False
    return True


def waves_are_curves(fig: dict) -> bool:
    """The sinusoids: each wave a line through many points between two positions."""

    def n(values: list | dict) -> int:
        if isinstance(values, list):
            return len(values)
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).size

    lines = [t for t in fig["data"] if t.get("mode") == "lines"]
    dots = [t for t in fig["data"] if t.get("mode") == "markers"]
    return bool(lines) and len(lines) == len(dots) and all(
        n(line["x"]) >= 8 * n(dot["x"]) for line, dot in zip(lines, dots, strict=True))


def drawn_problems(at: AppTest, title: str) -> list[str]:
    """What any drawing must not show, whatever was given: an exception, a lost title, the
    visitor's markup, unbounded charts, cells too small for their numbers."""
    found = [f"exception: {last_line(e.stack_trace)}" for e in at.exception]
    if not any(t.value == title for t in at.title):
        found.append(f"the title {title!r} is gone")
    found += markup_shown(at)
    drawn = charts(at)
    if len(drawn) > MAX_CHARTS:
        found.append(f"{len(drawn)} charts")
    sent = sum(numbers_in(c.figure) for c in drawn)
    if sent > MAX_NUMBERS:
        found.append(f"{sent:,} numbers sent to the browser")
    for chart in drawn:
        if chart.key in PLOT_PX and not cells_fit(chart.figure, PLOT_PX[chart.key]):
            found.append(f"{chart.key}: numbers that do not fit their cells")
        if chart.key == "pos_waves" and not waves_are_curves(chart.figure):
            found.append("pos_waves: the sinusoids are not curves")
    return found


def in_korean(at: AppTest, key: str, view: View) -> list[str]:
    """The Korean page says Korean, leaves no catalogue message in English and says its
    own sentences."""
    texts = page_text(at)
    found = [] if any(HANGUL.search(t) for t in texts) else ["nothing in Korean at all"]
    found += [f"still in English: {m!r}" for m in english_left(texts)]
    joined = "\n".join(texts)
    if view.name == "first view" or view.tab:
        found += [f"does not say {s!r}" for s in SAYS.get((key, view.tab), []) if s not in joined]
    return found


def lecture_problems(at: AppTest, key: str, view: View, first: AppTest, lang: str) -> list[str]:
    """A step asks first; a revealed question says the model's answer, and the step's
    first one draws a figure of its example; presenter mode hides the sidebar."""
    found = []
    with using(lang):
        asked = _("**:material/quiz: Predict first.** {question}", question="").strip()
        answered = _("The model's answer: **{answer}**. {why}", answer="", why="").split("*")[0]
    questions = [*(m.value for m in at.markdown), *(r.label for r in at.radio)]  # alone: a label
    if view.name == "first view" and not any(q.startswith(asked) for q in questions):
        found.append("no question before the reveal")
    if view.reveal:
        said = [m.value for m in (*at.success, *at.warning, *at.info)]
        if not any(answered.strip() in s for s in said):
            found.append(f"no answer after {view.reveal}")
    if view.reveal and view.reveal == (reveal_keys := first_reveal(first)):
        new = {c.key for c in charts(at)} - {c.key for c in charts(first)}
        if not new:
            found.append(f"{reveal_keys} drew no figure")
        text = " ".join(c.spec for c in charts(at))
        if lang == "en":
            found += [f"the figure lacks {t!r}" for t in EXAMPLE_TOKENS[key]
                      if json.dumps(t)[1:-1] not in text]  # fmt: skip
    styles = [el for el in at.get("html") if "stSidebar" in getattr(el.proto, "body", "")]
    if bool(styles) != (view.name == "toggle w_present"):
        found.append("presenter mode and the hidden sidebar disagree")
    return found


def first_reveal(first: AppTest) -> str | None:
    return next((b.key for b in first.button if b.key and b.key.endswith("_reveal")), None)


def sentence_problems(at: AppTest, key: str, label: str, value: str, lang: str) -> list[str]:
    """What the shared sentence box must do on the text pages: a blank one asks for a
    sentence and draws nothing, a long one is cut with a warning, an example is drawn."""
    with using(lang):
        asked = _("There is no sentence yet. Type one in the **Sentence** box in the sidebar (on "
                  "the left), pick one of the lecture's examples, or upload a text file.")
    if label in REFUSED:
        found = [] if any(i.value == asked for i in at.info) else ["no 'no sentence yet'"]
        return found + (["charts drawn for a blank sentence"] if charts(at) else [])
    if label == "60,000 characters" and not any("256" in w.value for w in at.warning):
        return ["no warning that the text was cut at 256 tokens"]
    if label.startswith("example"):
        model = {"masked": "mlm", "causal": "clm"}.get(key, at.session_state["model"])
        text = " ".join(c.spec for c in charts(at))
        return [f"the figures lack {t!r}" for t in tokens_of(model, value)[1:4]
                if not shows_token(text, t)]  # fmt: skip
    return []


# --- the walk ---------------------------------------------------------------------------------


def expected_title(key: str, first: AppTest, lang: str) -> str:
    if key.startswith("lecture-"):
        step = BY_SLUG[key.removeprefix("lecture-")]
        with using(lang):
            return f"{step.number}. {step.title}"
    return first.title[0].value if first.title else "?"


def values_for(view: View, base: AppTest, kind: str, box: str, key: str, lang: str,
               again: bool) -> dict[str, object]:  # fmt: skip
    """What one box gets in this view: in English every hostile value (and, in the shared
    sentence box of a text page's first view, every lecture example); in Korean the
    hostile text of the text boxes that draws a message. A box the first view already
    had (`again`: the sidebar's) gets, in another view, only the text that stresses what
    the view draws (AGAIN); its menus were given their ends in the first view."""
    text = kind in ("text_area", "text_input")
    if (lang != "en" or again) and not text or lang != "en" and again:
        return {}
    widget = getattr(base, kind)(key=box)
    current = widget.value  # a menu's by its label, as hostile_values gives it
    if kind in ("selectbox", "radio"):
        current = None if widget.index is None else widget.options[widget.index]
    wanted = AGAIN if again else set(HOSTILE_TEXT) if lang == "en" else KOREAN_HOSTILE
    values = {label: value for label, value in hostile_values(base, kind, box).items()
              if value != current and (not text or label in wanted)}  # fmt: skip
    if lang == "en" and box == "sentence" and key in PAGES and view.name == "first view":
        values = {**values, **{f"example {i}": p for i, p in enumerate(PROBES)}}
    return values


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("key", EVERY_PAGE)
def test_walk(key: str, lang: str, forward_passes: list[int],
              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # AppTest calls a widget's format_func in the test's own thread, after the run, where
    # no session says the language: GLASSBOX_LANG does there.
    monkeypatch.setenv("GLASSBOX_LANG", lang)
    first = View("first view").open(key, lang)
    title = expected_title(key, first, lang)
    failures: list[str] = []
    downloads = bool(first.get("download_button"))  # or in the page's folded Numbers
    tabs = section_options(first, key)
    if key in PAGES and (bool(tabs) != (key in TABBED) or len(tabs) != len(section_ids(key))):
        failures.append(f"sections {tabs}")
    for view in views(key, first, lang):
        base = first if view.name == "first view" else view.open(key, lang)
        downloads |= view.name == f"expander {key}_numbers_open" and bool(base.download_button)
        found = drawn_problems(base, title)
        if lang == "ko":
            found += in_korean(base, key, view)
        if key.startswith("lecture-"):
            found += lecture_problems(base, key, view, first, lang)
        failures += [f"{lang} {view.name}: {p}" for p in found]
        if base.exception:
            continue
        before = messages(base)
        for kind, box in list(boxes(base)):
            again = view.name != "first view" and (kind, box) in set(boxes(first))
            if view.option and again:
                continue  # another option of a radio: only the boxes it adds
            values = values_for(view, base, kind, box, key, lang, again)
            at = view.open(key, lang) if values else base
            for label, value in values.items():
                if (kind, box) not in set(boxes(at)):  # the last value hid it: start again
                    at = view.open(key, lang)
                give(at, kind, box, value)
                if label in WORST:
                    st.cache_data.clear()  # the worst inputs' work, counted from cold
                    ui.cache.clear_traces()
                forward_passes.clear()
                at.run()
                found = drawn_problems(at, title)
                if label in REFUSED and not messages(at) - before:
                    found.append("no message says what to type")
                if key in PAGES and label in WORST and len(forward_passes) > MAX_FORWARD:
                    found.append(f"{len(forward_passes)} forward passes")
                if box == "sentence" and key in PAGES:
                    found += sentence_problems(at, key, label, str(value), lang)
                if lang == "ko" and not found:
                    found += [p for p in in_korean(at, key, view) if "English" in p]
                failures += [f"{lang} {view.name} / {box} = {label}: {p}" for p in found]
                if found:  # the next value starts from a clean view, not from this one
                    at = view.open(key, lang)
    if key in PAGES and not downloads:
        failures.append("no download on the first view or in its Numbers expander")
    assert not failures, f"{key} ({lang}):\n" + "\n".join(failures)


def test_the_walk_finds_the_views_and_boxes() -> None:
    """The discovery itself: the tokens page's tabs and sidebar boxes, the compare box, a
    step's reveal, the heads step's question found inside its expander."""
    def found(key: str) -> dict[str, View]:
        return {v.name: v for v in views(key, View("first view").open(key, "en"), "en")}

    tokens = found("tokens")
    assert {"first view", "tab neighbours", "toggle compare_on"} <= tokens.keys()
    assert ("text_area", "sentence") in set(boxes(View("first view").open("tokens", "en")))
    assert any(n.startswith("revealed") for n in found("lecture-positional-encoding"))
    compare = found("attention")["toggle compare_on"].open("attention", "en")
    assert ("text_input", "compare") in set(boxes(compare))
    heads = found("lecture-multi-head-attention")
    assert any(n.startswith("expander") and "revealed" in n for n in heads), list(heads)
