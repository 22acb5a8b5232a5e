"""The "Watch it learn" page and its lecture step through AppTest (issue 28): a few-step
training drawn live then scrubbed, Stop, the place in line while another training holds
the server's one slot, one training per session, and the step's two runs side by side."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from tests.test_app import assert_ok, charts, page
from ui.parts import learn
from ui.show import section_key

LIVE_CHARTS = {"learn_loss", "learn_accuracy", "learn_attention", "learn_answer"}


def until(at: AppTest, done, seconds: float = 60) -> AppTest:
    """Rerun (as the page's fragment would) until `done(at)`, or fail after `seconds`."""
    end = time.monotonic() + seconds
    while not done(at):
        assert time.monotonic() < end, "the page never got there"
        time.sleep(0.3)
        at.run()
        assert_ok(at)
    return at


def ended(at: AppTest) -> bool:
    return bool(at.success)


def test_the_page_trains_a_few_steps_then_scrubs_its_snapshots() -> None:
    at = page("learn", toy_steps=40)
    assert_ok(at)
    assert at.title[0].value == "Watch it learn"
    assert at.button(key="learn_train").proto.type == "primary"
    assert not set(charts(at)) & LIVE_CHARTS, "nothing drawn before Train"
    at.button(key="learn_train").click().run()
    assert_ok(at)
    until(at, ended)
    assert "Trained 40 steps" in at.success[0].value
    drawn = charts(at)
    assert set(drawn) >= LIVE_CHARTS
    curve = drawn["learn_accuracy"]["data"][0]
    assert curve["x"][0] == 0 and curve["x"][-1] == 40 and len(curve["x"]) >= 2
    slider = next(s for s in at.select_slider if s.label.startswith("Scrub"))
    assert slider.options[0] == "0" and slider.options[-1] == "40" and len(slider.options) >= 12
    assert "step 40" in drawn["learn_attention"]["layout"]["title"]["text"]
    slider.set_value(0).run()
    assert_ok(at)
    drawn = charts(at)
    assert "step 0" in drawn["learn_attention"]["layout"]["title"]["text"], "the untrained one"
    assert "step 0" in drawn["learn_answer"]["layout"]["title"]["text"]


def test_stop_ends_a_run_and_a_new_one_replaces_it() -> None:
    at = page("learn")
    at.button(key="learn_train").click().run()
    first = at.session_state[learn.LIVE_KEY][1]
    until(at, lambda at: first.runs[0].step > 0)
    assert at.radio(key="learn_task").disabled, "the choices are fixed while it trains"
    at.button(key="learn_stop").click().run()
    until(at, ended)
    assert "Stop was pressed" in at.success[0].value
    assert first.runs[0].net is None, "an ended run lets its model go"
    at.session_state["toy_steps"] = 5
    at.radio(key="learn_task").set_value("histogram").run()
    at.button(key="learn_train").click().run()
    until(at, ended)
    owner, second = at.session_state[learn.LIVE_KEY]
    assert owner == "learn" and second is not first, "one training per session"
    assert second.runs[0].setup.task == "histogram"


def test_a_second_training_waits_with_its_place_shown() -> None:
    gate = learn.gate()
    holders = [f"another class {i}" for i in range(gate.limit)]
    try:
        assert all(gate.enter(h) == 0 for h in holders), "every slot taken"
        at = page("learn", toy_steps=5)
        at.button(key="learn_train").click().run()
        until(at, lambda at: any("Waiting in line" in c.value for c in at.caption), 20)
        live = at.session_state[learn.LIVE_KEY][1]
        assert live.place == 1 and live.runs[0].step == 0
    finally:
        for holder in holders:
            gate.leave(holder)
    until(at, ended)
    assert live.runs[0].step == 5


def test_the_lecture_step_predicts_then_trains_both_side_by_side() -> None:
    at = page("lecture-watch-it-learn", toy_steps=20)
    assert_ok(at)
    assert any("without positional encoding" in r.label for r in at.radio), "the question"
    at.radio(key="l_learn_guess").set_value("count only")
    at.button(key="l_learn_reveal").click().run()
    assert at.success and "Right!" in at.success[0].value, "the report: it counts, not reverses"
    assert "l_learn_measured" in charts(at)
    at.button(key="l_learn_train").click().run()
    until(at, lambda at: sum("Trained 20 steps" in c.value for c in at.caption) == 2)
    assert {"l_learn_reverse", "l_learn_histogram_answer"} <= set(charts(at))


XATTN_CHARTS = {"learn_xattn_loss", "learn_xattn_accuracy", "learn_xattn_cross",
                "learn_xattn_shipped", "learn_xattn_answer", "learn_xattn_match"}  # fmt: skip


def test_cross_attention_forming_trains_a_translator_then_scrubs_it() -> None:
    at = page("learn", toy_steps=3)
    at.session_state[section_key("learn")] = "cross"
    at.run()
    assert_ok(at)
    assert any("120 s of training" in m.value for m in at.markdown), "the budget, from the code"
    assert any("held-out pairs exactly" in c.value for c in at.caption), "the calibration"
    assert not set(charts(at)) & XATTN_CHARTS, "nothing drawn before Train"
    at.button(key="learn_xattn_train").click().run()
    assert_ok(at)
    until(at, ended)
    owner, live = at.session_state[learn.LIVE_KEY]
    assert owner == learn.XATTN and live.runs[0].step == 3 and live.runs[0].net is None
    drawn = charts(at)
    assert set(drawn) >= XATTN_CHARTS
    curve = drawn["learn_xattn_accuracy"]["data"][0]
    assert curve["name"] == "pairs translated exactly" and curve["x"][-1] == 3
    cross = drawn["learn_xattn_cross"]
    assert "step 3" in cross["layout"]["title"]["text"]
    assert "layer 3, average of the heads" in cross["layout"]["title"]["text"]
    slider = next(s for s in at.select_slider if s.label.startswith("Scrub"))
    assert slider.options == ["0", "1", "2", "3"], "a snapshot at every early step"
    slider.set_value(0).run()
    assert_ok(at)
    drawn = charts(at)
    assert "step 0" in drawn["learn_xattn_cross"]["layout"]["title"]["text"], "the untrained one"
    assert "step 0" in drawn["learn_xattn_answer"]["layout"]["title"]["text"]
    assert any("At step 0, for" in c.value for c in at.caption), "how alike, computed"
    at.radio(key="learn_xattn_head").set_value(1).run()
    assert_ok(at)
    assert "head 2" in charts(at)["learn_xattn_shipped"]["layout"]["title"]["text"]
