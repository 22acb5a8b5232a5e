"""The explorer pages' Korean beyond what the page walk checks (tests/test_walk.py draws
every page and tab in Korean, with its own sentences, SAYS): an English session unchanged,
notes and errors that keep no language, knocked-out heads described in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from i18n import N_, using
from model import CLEAN, RunOptions
from model.contract import Note
from tests.test_app import app_test
from tests.test_vision_page import png
from tests.walk import page_text
from ui.parts.interventions.knockout import described
from ui.parts.vision import ImageError, decode_image, said


@pytest.fixture(autouse=True)
def in_korean(monkeypatch: pytest.MonkeyPatch) -> None:
    """AppTest calls a widget's format_func in the test's own thread too, after the run,
    where no session says the language: GLASSBOX_LANG does there (tests/test_i18n.py)."""
    monkeypatch.setenv("GLASSBOX_LANG", "ko")


def test_an_english_session_is_unchanged() -> None:
    """The same page without a language chosen: the English sentences, no Hangul."""
    at = app_test("positional").run()
    assert not at.exception
    text = "\n".join(page_text(at))
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
