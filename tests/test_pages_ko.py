"""The explorer pages drawn in Korean (issue 31): each page, run with the session's
language set to Korean before its first run, shows no exception and says a few of its own
sentences in Korean (the translations in locale/ko/drafts/pages.po, compiled into the
catalogue by `python -m i18n.catalogue`)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.charts import charts
from tests.test_app import app_test

KINDS = ("title", "markdown", "caption", "subheader", "info", "error", "warning", "code")
WIDGETS = ("selectbox", "multiselect", "slider", "radio", "toggle", "text_input", "button")

SAYS = {  # page -> sentences (or their start) it shows in Korean on its first run
    "tokens": ["모델은 글자를 보지 않습니다", "토큰 임베딩 (토큰 × 차원)", "수치"],
    "positional": ["어텐션은 모든 토큰을 다른 모든 토큰과 비교할 뿐", "첫 번째 아이디어"],
}


def page_text(at: AppTest) -> str:
    """Everything the page wrote that a person reads: text elements, widget labels and
    options, chart specs (their titles)."""
    said = [str(e.value) for kind in KINDS for e in getattr(at, kind)]
    for kind in WIDGETS:
        for w in getattr(at, kind):
            said.append(w.label)
            said.extend(str(o) for o in getattr(w, "options", []) or [])
    said.extend(json.dumps(c.figure, ensure_ascii=False) for c in charts(at))
    return "\n".join(said)


def korean(name: str, **state: object) -> AppTest:
    """`name` run once in Korean, with `state` set first."""
    at = app_test(name)
    at.session_state["lang"] = "ko"
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


@pytest.mark.parametrize("name", list(SAYS))
def test_the_page_speaks_korean(name: str) -> None:
    at = korean(name)
    assert not at.exception, [e.value for e in at.exception]
    text = page_text(at)
    missing = [s for s in SAYS[name] if s not in text]
    assert not missing, f"not on the Korean {name} page: {missing}"
