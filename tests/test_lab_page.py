"""The Lab page through AppTest: the exercises and the notebook, and Spot the bug on the
visitor's own sentence (issue 27). Its file is pages/build.py: a page file named lab.py
would shadow the lab package (Streamlit puts pages/ on the path). Bad input in its boxes is
the generated fuzz test's (tests/test_fuzz_pages.py); the lab's lecture step is walked by
tests/test_lecture.py and tests/e2e/test_lecture_browser.py."""

from __future__ import annotations

import json

from lab.mistakes import MISTAKES
from lab.notebook import EXERCISES, SHIPPED
from lab.spot import SPOT
from tests.test_app import assert_ok, charts, page
from ui.show import section_key

SENTENCE = "the teacher asked the student a question"


def test_the_exercises_tab_lists_the_notebook_and_offers_it() -> None:
    at = page("build", SENTENCE)
    at.session_state[section_key("build")] = "exercises"
    at.run()
    assert_ok(at)
    labels = [e.label for e in at.expander]
    assert all(any(text.split("\n")[0].lstrip("# ") in lab for lab in labels)
               for _, text, _ in EXERCISES)  # fmt: skip
    (button,) = [b for b in at.get("download_button") if "notebook" in b.proto.label]
    assert SHIPPED.is_file()


def test_spot_the_bug_draws_each_bug_on_the_sentence_and_reveals_it() -> None:
    at = page("build", SENTENCE)  # its first tab
    assert_ok(at)
    drawn = charts(at)
    assert [k for k in drawn if k.startswith("lab_spot_")] == ["lab_spot_bugs"], (
        "the pictures in one figure; the model's own only once one is revealed")
    pictures = [t for t in drawn["lab_spot_bugs"]["data"] if t["type"] == "heatmap"]
    assert len(pictures) == len(SPOT)
    assert '"teacher"' in json.dumps(drawn["lab_spot_bugs"]), "run on the visitor's sentence"
    at.radio(key="lab_spot_A_guess").set_value(MISTAKES[SPOT[0]].title)
    at.button(key="lab_spot_A_reveal").click().run()
    assert_ok(at)
    assert "lab_spot_model" in charts(at), "the model's own attention, once a bug is revealed"
    said = " ".join(m.value for m in (*at.success, *at.warning))
    assert "The model's answer" in said
    assert "```diff\n-" in said and "\n+" in said, "the bug's one-line diff in its answer"
    assert "lab_spot_A_reveal" not in [b.key for b in at.button], "the answer replaces it"


def test_the_pictures_order_is_the_sentences_own() -> None:
    from ui.parts.lab import order

    assert order("a", 4) == order("a", 4) and sorted(order("b", 4)) == [0, 1, 2, 3]
    assert len({tuple(order(f"s{i}", 4)) for i in range(20)}) > 1, "shuffled per sentence"
