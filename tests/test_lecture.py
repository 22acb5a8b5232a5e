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
from tests.test_app import TIMEOUT, app_test, assert_ok, charts, page
from ui.lecture.syllabus import BY_SLUG, OLD_NUMBERS, STEPS

STEP_KEYS = [step.key for step in STEPS]


def reveal(at: AppTest) -> AppTest:
    button = next(b for b in at.button if b.key and b.key.endswith("_reveal"))
    return button.click().run()


def test_the_syllabus_numbers_its_steps_and_keeps_every_old_link() -> None:
    assert [s.number for s in STEPS] == list(range(1, len(STEPS) + 1))
    assert len(BY_SLUG) == len(STEPS), "one slug per step"
    assert all(s.title and s.idea and callable(s.module.draw) for s in STEPS)
    assert sorted(OLD_NUMBERS) == list(range(1, 13)) and set(OLD_NUMBERS.values()) <= set(BY_SLUG)


def _follow_old_links() -> None:
    """Each old numbered page's callable, with ?present=1, under its own address (AppTest
    runs this; each draws the script that loads its step)."""
    import streamlit as st

    from ui.lecture import frame

    st.query_params["present"] = "1"
    for link in frame.old_links():
        st.text(f"{link.url_path} {link.visibility}")
        link._page()


def test_an_old_numbered_link_opens_the_same_step() -> None:
    """/lecture_5 (the address before steps had slugs) is a hidden page that loads
    "Positional encoding" afresh, keeping its query; the browser test follows one for real."""
    at = AppTest.from_function(_follow_old_links, default_timeout=TIMEOUT).run()
    assert_ok(at)
    lines = [t.value for t in at.text]
    scripts = [h.proto.body for h in at.get("html")]
    assert lines == [f"lecture_{n} hidden" for n in OLD_NUMBERS]
    assert scripts == [f'<script>window.location.replace("lecture-{slug}?present=1");</script>'
                       for slug in OLD_NUMBERS.values()]  # fmt: skip
    assert "lecture-positional-encoding?present=1" in scripts[list(OLD_NUMBERS).index(5)]


def test_a_right_guess_is_praised_and_a_wrong_one_corrected() -> None:
    at = page("lecture-bert")
    at.radio(key="l10_guess").set_value("bank")
    at = reveal(at)
    assert at.success and "Right!" in at.success[0].value
    at = page("lecture-bert")
    at.radio(key="l10_guess").set_value("shore")
    at = reveal(at)
    question, said = at.warning[0].value.split("\n\n", 1)
    assert question.startswith("BERT reads the words") and said.startswith("Not shore")
    assert "l10_guess" not in [r.key for r in at.radio], "revealed, the prediction is final"


def test_presenter_mode_follows_the_url_and_the_toggle() -> None:
    at = app_test("lecture-query-key-value")
    at.query_params["present"] = "1"
    at.run()
    assert_ok(at)
    assert at.toggle(key="w_present").value is True and at.query_params["present"] == "1"
    at.toggle(key="w_present").set_value(False).run()
    assert at.toggle(key="w_present").value is False and "present" not in at.query_params
    at.toggle(key="w_present").set_value(True).run()
    assert at.query_params["present"] == "1" and at.button(key="lec_leave")
    at.button(key="lec_leave").click().run()
    assert at.toggle(key="w_present").value is False and "present" not in at.query_params


def test_the_overview_lists_every_step() -> None:
    at = page("lecture")
    assert_ok(at)
    links = {(el.proto.label, el.proto.page) for el in at.get("page_link")}
    assert links == {(f"{s.number}. {s.title}", s.key) for s in STEPS}, "a link to each step"
    ideas = " ".join(c.value for c in at.caption)
    assert all(step.idea in ideas for step in STEPS)


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
        ("lecture-attention", "l2_own", "the boat reached the shore", "l2_own_row", "shore"),
        ("lecture-positional-encoding", "l5_a", "the cat chased the mouse quickly", "l5_own",
         "cat"),
        ("lecture-multi-head-attention", "l7_own", "a zebra ran home", "l7_own_roles", "L1H1"),
        ("lecture-bert", "l10_text", "the cat sat on the [MASK].", "l10_tokens", "cat"),
    ],
)
def test_try_your_own_draws_the_visitors_input(key, box, text, chart, token) -> None:
    at = page(key)
    at.text_input(key=box).input(text).run()
    assert_ok(at)
    at = reveal(at)
    assert_ok(at)
    assert token in json.dumps(charts(at)[chart])
