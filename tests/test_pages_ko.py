"""The explorer pages drawn in Korean (issue 31): each page, run with the session's
language set to Korean before its first run, shows no exception and says a few of its own
sentences in Korean (the translations in locale/ko/drafts/pages.po, compiled into the
catalogue by `python -m i18n.catalogue`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from i18n import N_, using
from model import CLEAN, RunOptions
from model.contract import Note
from tests.charts import charts
from tests.test_app import app_test
from tests.test_vision_page import png
from ui.parts.interventions.knockout import described
from ui.parts.vision import ImageError, decode_image, said
from ui.show import section_key

KINDS = ("title", "markdown", "caption", "subheader", "info", "error", "warning", "code")
WIDGETS = ("selectbox", "multiselect", "slider", "radio", "toggle", "text_input", "button")

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


def page_text(at: AppTest) -> str:
    """Everything the page wrote that a person reads: text elements, widget labels and
    options, table columns, tab labels, chart specs (their titles)."""
    said = [str(e.value) for kind in KINDS for e in getattr(at, kind)]
    for kind in WIDGETS:
        for w in getattr(at, kind):
            said.append(w.label)
            said.extend(str(o) for o in getattr(w, "options", []) or [])
    said.extend(str(c) for frame in at.dataframe for c in frame.value.columns)
    said.extend(tab.label for tab in at.tabs)
    said.extend(json.dumps(c.figure, ensure_ascii=False) for c in charts(at))
    return "\n".join(said)


def korean(name: str, **state: object) -> AppTest:
    """`name` run once in Korean, with `state` set first."""
    at = app_test(name)
    at.session_state["lang"] = "ko"
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


@pytest.fixture(autouse=True)
def in_korean(monkeypatch: pytest.MonkeyPatch) -> None:
    """AppTest calls a widget's format_func in the test's own thread too, after the run,
    where no session says the language: GLASSBOX_LANG does there (tests/test_i18n.py)."""
    monkeypatch.setenv("GLASSBOX_LANG", "ko")


@pytest.mark.parametrize(("name", "tab"), list(SAYS), ids=[f"{n}-{t}" for n, t in SAYS])
def test_the_page_speaks_korean(name: str, tab: str | None) -> None:
    at = korean(name, **({} if tab is None else {section_key(name): tab}))
    assert not at.exception, [e.value for e in at.exception]
    text = page_text(at)
    missing = [s for s in SAYS[name, tab] if s not in text]
    assert not missing, f"not on the Korean {name} page ({tab}): {missing}"


def test_an_english_session_is_unchanged() -> None:
    """The same page without a language chosen: the English sentences, no Hangul."""
    at = app_test("positional").run()
    assert not at.exception
    text = page_text(at)
    assert "First idea: write the position in binary" in text
    assert "Attention compares every token with every other one" in text
    assert "첫 번째 아이디어" not in text and "위치 인코딩" not in text


def test_a_model_note_is_english_as_a_str_and_read_in_the_session_language() -> None:
    """A model is shared by every session: its notes keep their English (saved, joined,
    compared) and read in the language of whoever shows them, a nested note too."""
    source = Note(N_("GGUF, dequantized to float32"))
    with using("ko"):  # whoever loads the model first, its notes' text stays English
        note = Note(N_("A Hugging Face transformers model ({type}, {source}), traced through "
                       "forward hooks."), type="llama", source=source)
    english = "A Hugging Face transformers model (llama, GGUF, dequantized to float32), traced"
    assert note.startswith(english) and "\n".join([note]).startswith(english)
    with using("en"):
        assert str(note).startswith(english)
    with using("ko"):
        assert str(note).startswith("Hugging Face transformers 모델(llama, GGUF, float32로 "
                                    "역양자화)")
        assert f"{note}" == str(note)


def test_an_image_error_keeps_no_language() -> None:
    with pytest.raises(ImageError) as caught:
        decode_image("seven.png", png(np.zeros((16, 16, 4)), "RGBA"))  # fully transparent
    err = caught.value
    with using("en"):
        assert str(err) == "'seven.png': the image is fully transparent: nothing is drawn"
    with using("ko"):
        assert said(err.message, err.values) == (
            "'seven.png': 이미지가 완전히 투명합니다. 아무것도 그려져 있지 않습니다")


def test_knocked_out_heads_are_described_in_both_languages() -> None:
    options = RunOptions(ablate=[("cross", 0, 1), ("encoder", 1, 0)])
    with using("en"):
        assert described(options) == options.describe()
        assert described(options) == "cross L1H2, encoder L2H1 knocked out (zero)"
        assert described(CLEAN) == CLEAN.describe() == "clean"
    with using("ko"):
        assert described(options) == "교차 L1H2, 인코더 L2H1 제거 (0으로 대체)"
        assert described(CLEAN) == "원래 실행"
