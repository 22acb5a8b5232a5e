"""Lecture mode (issue 13) through AppTest: every step renders with presenter mode on and
off, asks first and reveals the model's answer with a figure of its example, and the
arithmetic behind the steps (soft lookup, what heads do, what sublayers add)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.heads import head_roles
from analysis.lecture import soft_lookup, sublayer_change
from tests.test_app import ROOT, TIMEOUT, assert_ok, charts, page
from ui.registry import LECTURE, LECTURE_STEPS

STEP_KEYS = [f"lecture_{n}" for n in range(1, len(LECTURE_STEPS) + 1)]
# The tokens of each step's own example that its figure must show once revealed.
EXAMPLE_TOKENS = {
    "lecture_1": ["clauses in the sentence"],
    "lecture_2": ["river", "bank", "swam"],
    "lecture_3": ["c++", "haskell"],
    "lecture_4": ["industrial", "aluminum"],
    "lecture_5": ["dog", "man", "bit"],
    "lecture_6": ["bank", "river"],
    "lecture_7": ["researcher", "assistant"],
    "lecture_8": ["cat", "mat"],
    "lecture_9": ["school"],
    "lecture_10": ["[MASK]", "river"],
    "lecture_11": ["school"],
    "lecture_12": ["[CLS]"],
}


def reveal(at: AppTest) -> AppTest:
    button = next(b for b in at.button if b.key and b.key.endswith("_reveal"))
    return button.click().run()


def test_the_registry_lists_an_overview_and_the_twelve_steps_in_order() -> None:
    assert [p.key for p in LECTURE] == ["lecture", *STEP_KEYS]
    assert [p.title.split(". ", 1)[1] for p in LECTURE[1:]] == [t for t, _ in LECTURE_STEPS]


@pytest.mark.parametrize("present", [False, True], ids=["plain", "presenter"])
@pytest.mark.parametrize("key", STEP_KEYS)
def test_each_step_asks_first_then_shows_its_example(key: str, present: bool) -> None:
    at = page(key, present=present)
    assert_ok(at)
    assert at.title[0].value.startswith(key.split("_")[1] + ". ")
    assert any("Predict first" in m.value for m in at.markdown)
    before = set(charts(at))
    at = reveal(at)
    assert_ok(at)
    after = charts(at)
    assert set(after) - before, "revealing draws the model's figure"
    answers = [m.value for m in (*at.success, *at.warning, *at.info)]
    assert any("The model's answer" in a for a in answers)
    text = " ".join(json.dumps(fig) for fig in after.values())
    for token in EXAMPLE_TOKENS[key]:
        assert json.dumps(token)[1:-1] in text, f"{key} shows {token}"
    styles = [el for el in at.get("html") if "stSidebar" in getattr(el.proto, "body", "")]
    assert bool(styles) == present, "presenter mode hides the sidebar, and only then"


def test_a_right_guess_is_praised_and_a_wrong_one_corrected() -> None:
    at = page("lecture_10")
    at.radio(key="l10_guess").set_value("bank")
    at = reveal(at)
    assert at.success and "Right!" in at.success[0].value
    at = page("lecture_10")
    at.radio(key="l10_guess").set_value("shore")
    at = reveal(at)
    assert at.warning and at.warning[0].value.startswith("Not shore")


def test_presenter_mode_follows_the_url_and_the_toggle() -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "lecture_3.py"), default_timeout=TIMEOUT)
    at.query_params["present"] = "1"
    at.run()
    assert_ok(at)
    assert at.session_state["present"] is True
    at.toggle(key="w_present").set_value(False).run()
    assert at.session_state["present"] is False and "present" not in at.query_params


def test_the_overview_lists_every_step() -> None:
    at = page("lecture")
    assert_ok(at)
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    for title, idea in LECTURE_STEPS:
        assert title in text and idea in text


def test_the_soft_lookup_blends_every_value() -> None:
    keys = np.eye(4)
    values = np.arange(8.0).reshape(4, 2)
    found = soft_lookup(np.array([4.0, 0, 0, 0]), keys, values)
    assert found.weights.sum() == pytest.approx(1) and found.weights.argmax() == 0
    assert (found.weights > 0).all(), "a soft lookup gives every key some weight"
    assert found.output == pytest.approx(found.weights @ values)
    assert found.scores == pytest.approx([2.0, 0, 0, 0])  # q·k / sqrt(4)


def test_head_roles_tell_a_previous_token_head_from_a_self_head() -> None:
    t = 5
    itself = np.eye(t)
    previous = np.eye(t, k=-1)
    previous[0, 0] = 1.0
    roles = head_roles(np.stack([itself, previous])[None], causal=True)
    assert roles["itself"][0] == pytest.approx([1.0, 0.2])
    assert roles["previous token"][0] == pytest.approx([0.0, 1.0])
    assert roles["spread"][0] == pytest.approx([0.0, 0.0])
    uniform = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    assert head_roles(uniform[None, None], causal=True)["spread"][0, 0] == pytest.approx(1.0)


def test_sublayer_change_has_one_column_per_sublayer(tiny_mlm) -> None:
    tr = tiny_mlm.trace("the dog bit the man")
    sizes, names = sublayer_change(tr)
    assert sizes.shape == (len(tr.tokens), 2 * tr.n_layers) and (sizes >= 0).all()
    assert names[:2] == ["L1 attention", "L1 MLP"]
    lay = tr.layers[0]
    want = np.linalg.norm(lay.attn_out[1]) / np.linalg.norm(lay.resid_pre[1])
    assert sizes[1, 0] == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize(
    ("key", "box", "text", "chart", "token"),
    [
        ("lecture_2", "l2_own", "the boat reached the shore", "l2_own_row", "shore"),
        ("lecture_5", "l5_a", "the cat chased the mouse quickly", "l5_own", "cat"),
        ("lecture_7", "l7_own", "a zebra ran home", "l7_own_roles", "L1H1"),
        ("lecture_10", "l10_text", "the cat sat on the [MASK].", "l10_tokens", "cat"),
    ],
)
def test_try_your_own_draws_the_visitors_input(key, box, text, chart, token) -> None:
    at = page(key)
    at.text_input(key=box).input(text).run()
    assert_ok(at)
    at = reveal(at)
    assert_ok(at)
    assert token in json.dumps(charts(at)[chart])
