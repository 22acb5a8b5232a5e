"""The Streamlit app through AppTest: every page, the shared frame, the URL, bad input.

Each page file is run on its own (AppTest runs a pages/ file without app.py, see the
pitfall in docs/ARCHITECTURE.md); every page draws the shared frame first, so that works. The
figures are checked through the Plotly JSON in each chart's proto (`proto.spec`). The
shipped checkpoints are used, so nothing here depends on what the model predicts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import model
import ui.cache
from model.examples import PROBES
from model.tokenizer import load_tokenizer
from tests.charts import charts as drawn_charts
from tests.charts import figures, specs
from tests.conftest import save_tiny
from ui.lecture.frame import OVERVIEW
from ui.lecture.syllabus import STEPS
from ui.registry import BY_KEY
from ui.registry import PAGES as PAGE_SPECS
from ui.show import section_key
from ui.state import MAX_UPLOAD_BYTES

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["tokens", "positional", "attention", "masked", "causal"]
# Every page of the app: the explorer pages, Lecture mode's overview and each of its steps.
EVERY_PAGE = [*BY_KEY, OVERVIEW, *(step.key for step in STEPS)]
TIMEOUT = 180  # the first run of a test session loads the models


def _lecture_page(key: str) -> None:
    """A Lecture-mode page, as app.py's navigation serves it (AppTest runs this alone)."""
    from ui.lecture.frame import OVERVIEW, lecture_overview, lecture_step

    if key == OVERVIEW:
        lecture_overview()
    else:
        lecture_step(key.removeprefix("lecture-"))


def app_test(name: str) -> AppTest:
    """Any page of the app, not run yet: an explorer page's file, or a lecture page."""
    if name in BY_KEY:
        return AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    return AppTest.from_function(_lecture_page, args=(name,), default_timeout=TIMEOUT)


def page(name: str, sentence: str | None = None, **state: object) -> AppTest:
    """A page, run once, with the shared sentence (and other session state) set first."""
    at = app_test(name)
    if sentence is not None:
        at.session_state["sentence"] = sentence
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def charts(at: AppTest) -> dict[str, dict]:
    """Every Plotly chart on the page as its figure JSON, by the chart's widget key."""
    return figures(at)


def figure_text(at: AppTest) -> str:
    return specs(at)


def shows_token(text: str, token: str) -> bool:
    """A figure label is the token, alone or after its position ("the", "3 the")."""
    return re.search(r'"(\d+ )?' + re.escape(json.dumps(token)[1:]), text) is not None


def z_of(fig: dict) -> list | dict:
    """The first trace's z: a nested list, or Plotly 6's typed array {"bdata", "shape"}."""
    return fig["data"][0]["z"]


def shape_of(z: list | dict) -> tuple[int, ...]:
    if isinstance(z, dict):
        return tuple(int(n) for n in z["shape"].split(","))
    return (len(z), len(z[0]))


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def tokens_of(model: str, text: str) -> list[str]:
    return ui.cache.load_model(model, "cpu").encode(text).tokens


# --- every page, every lecture example -----------------------------------------------------


def test_app_navigates_to_every_page_and_shares_the_sentence() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert_ok(at)
    assert at.title[0].value == "Tokens and embeddings"
    at.text_area(key="sentence").input("the man bit the dog").run()
    for name, title in zip(
        PAGES,
        ["Tokens", "Positional", "Attention", "Masked", "Causal"],
        strict=True,
    ):
        at.switch_page(f"pages/{name}.py").run()
        assert_ok(at)
        assert at.title[0].value.startswith(title)
        assert at.session_state["sentence"] == "the man bit the dog"
        assert at.text_area(key="sentence").value == "the man bit the dog"
        if name == "masked":
            first = at.multiselect(key="mask_tokens").value
    # Back on a page whose choices Streamlit forgot on the way (its widgets were not drawn):
    # they start again from the sentence, as on the first visit, and the browser is sent
    # the value the page uses (it may have missed the run that set it: a lost connection).
    at.switch_page("pages/masked.py").run()
    assert_ok(at)
    chosen = at.multiselect(key="mask_tokens")
    assert first and chosen.value == first, "the word masked on the first visit, again"
    assert chosen.proto.set_value
    at.slider(key="mask_k").set_value(6).run()  # any run sends the value the page uses
    assert at.multiselect(key="mask_tokens").proto.set_value
    assert "Where the [MASK] looked" in at.button_group(key=section_key("masked")).options
    assert not at.info


# --- a new model is a folder: every page it can serve runs on it ------------------------------


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory, tiny_tokenizer) -> dict[str, str]:
    """A fake tiny model of each kind, registered in a few lines: name by kind (the
    translators with the translation task's word-level tokenizer)."""
    words = load_tokenizer(ROOT / "assets" / "data" / "translation" / "tokenizer.json")
    names = {}
    for kind in ("encoder", "decoder", "encoder-decoder", "recurrent", "vision"):
        tok = tiny_tokenizer if kind in ("encoder", "decoder") else words
        folder = save_tiny(tmp_path_factory.mktemp("tiny") / kind, tok, kind)
        names[kind] = model.register(f"tiny-{kind}", folder).name
    yield names
    for name in names.values():
        model.unregister(name)


@pytest.mark.parametrize("spec", PAGE_SPECS, ids=[s.key for s in PAGE_SPECS])
def test_a_registered_tiny_model_serves_every_page_its_capabilities_allow(
    tiny_models: dict[str, str], spec
) -> None:
    infos = model.catalogue()
    served = [name for name in tiny_models.values() if spec.serves(infos[name])]
    assert served, "every page serves some kind of model"
    for name in served:
        at = page(spec.key, "the dog bit the man", model=name, english="the dog bit the man",
                  w_more_open=True)  # the sidebar's timing: drawn while its expander is open
        assert_ok(at)
        menu = at.selectbox(key="model")
        offered = {option.split(" · ")[0] for option in menu.options}  # "name · what it is"
        assert menu.value == name and set(tiny_models.values()) & offered == set(served)
        if spec.key == "learn":  # it trains a toy model of its own; the menu's is not drawn
            continue
        assert any(f"· {name} ·" in c.value for c in at.sidebar.caption), "it really ran"
        text = figure_text(at)
        if spec.key == "vision":
            assert json.dumps("patch 3,3") in text
            continue
        tokens = ui.cache.load_model(name, "cpu").encode("the dog bit the man").tokens
        assert all(shows_token(text, tok) for tok in tokens[1:4])  # "the dog bit" (man: masked)


# --- the URL --------------------------------------------------------------------------------


def test_a_link_opens_the_same_page_sentence_and_model() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(page="attention", model="clm", sentence="the dog bit the man")
    at.run()
    assert_ok(at)
    assert at.title[0].value == "Attention"
    assert at.text_area(key="sentence").value == "the dog bit the man"
    assert at.selectbox(key="model").value == "clm"
    assert "dog" in figure_text(at)


def test_the_url_follows_the_sentence_model_and_page() -> None:
    """The URL is the widgets' own (bound): a change the app makes is written there; a
    change typed in the browser is written by the browser (tests/e2e/test_pages.py)."""
    at = page("tokens")
    at.selectbox(key="w_example").set_value(PROBES[1]).run()  # set by a callback, not typed
    assert at.query_params["sentence"] == PROBES[1]
    assert at.text_area(key="sentence").value == PROBES[1]
    long = "the cat sat . " * 200  # over MAX_URL_CHARS: the box is not bound, the URL has none
    at.text_area(key="sentence").input(long).run()
    assert_ok(at)
    assert "sentence" not in at.query_params and at.text_area(key="sentence").value == long
    # a page of its own input does not show the shared sentence: its URL does not hold it
    own = next(p.key for p in PAGE_SPECS if p.reads != "sentence")
    assert "sentence" not in page(own, "the dog sat").query_params


def test_an_unknown_model_in_the_url_falls_back_to_mlm() -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "tokens.py"), default_timeout=TIMEOUT)
    at.query_params["model"] = "no-such-model"
    at.run()
    assert_ok(at)
    assert at.session_state["model"] == "mlm"


# --- figures follow the sentence and the pickers ----------------------------------------------


def test_an_example_from_the_menu_becomes_the_sentence() -> None:
    at = page("tokens", "the cat sat")
    at.selectbox(key="w_example").set_value(PROBES[1]).run()
    assert_ok(at)
    assert at.session_state["sentence"] == PROBES[1]
    assert at.text_area(key="sentence").value == PROBES[1]
    assert '"cash"' in figure_text(at)


def test_layer_and_head_pickers_change_the_attention_heatmap() -> None:
    at = page("attention", PROBES[0])
    first = z_of(charts(at)["att_head_map"])
    at.radio(key="att_head").set_value(2).run()
    second = charts(at)["att_head_map"]
    assert "head 3" in second["layout"]["title"]["text"]
    assert z_of(second) != first
    at.radio(key="att_layer").set_value(3).run()
    third = charts(at)["att_head_map"]
    assert "layer 4, head 3" in third["layout"]["title"]["text"]
    assert z_of(third) != z_of(second)


@pytest.mark.parametrize("step", range(5))
def test_every_attention_step_is_drawn_and_matches_the_model(step: int) -> None:
    at = page("attention", "the dog bit the man", att_step=step)
    assert_ok(at)
    assert at.latex, "each step shows its formula"
    assert any("matches the model's own numbers" in c.value for c in at.caption)
    assert any(key.startswith("att_step_") for key in charts(at))


def test_token_picker_changes_the_neighbours_and_the_trajectory() -> None:
    at = page("tokens", PROBES[0], tokens_section="layers")
    assert set(charts(at)) == {"tok_strip", "tok_trajectory"}, "only the open tab is drawn"
    before = charts(at)["tok_trajectory"]["layout"]["title"]["text"]
    at.selectbox(key="tok_token").set_value(5).run()  # "river"
    assert "river" in charts(at)["tok_trajectory"]["layout"]["title"]["text"]
    assert charts(at)["tok_trajectory"]["layout"]["title"]["text"] != before
    at.session_state["tokens_section"] = "neighbours"
    at.run()
    assert at.selectbox(key="tok_token").value == 5, "the token is kept across the tabs"
    assert any("river" in trace.get("name", "") for trace in charts(at)["tok_map"]["data"])
    at.slider(key="tok_k").set_value(12).run()
    at.session_state["tokens_section"] = "matrix"
    at.run()
    assert "tok_map" not in charts(at)
    at.session_state["tokens_section"] = "neighbours"
    at.run()
    assert at.slider(key="tok_k").value == 12, "so is the number of neighbours"


def test_pickers_survive_a_shorter_sentence() -> None:
    at = page("tokens", PROBES[0], tokens_section="neighbours")
    at.selectbox(key="tok_token").set_value(11).run()
    at.text_area(key="sentence").input("the cat").run()
    assert_ok(at)
    assert at.selectbox(key="tok_token").value in (1, 2)
    at = page("attention", " ".join(["the dog bit the man and"] * 12))
    at.slider(key="att_window").set_value((50, 70)).run()
    at.text_area(key="sentence").input("the dog bit the man").run()
    assert_ok(at)
    assert not at.get("slider") or "att_window" not in [s.key for s in at.slider]


def test_long_sentences_get_a_zoom_window() -> None:
    at = page("attention", " ".join(["the dog bit the man and"] * 12))
    assert_ok(at)
    at.slider(key="att_window").set_value((10, 20)).run()
    fig = charts(at)["att_head_map"]
    assert fig["layout"]["xaxis"]["range"] == [9.5, 20.5]
    assert shape_of(z_of(fig)) == (11, 11), "only the window's rows and columns are sent"
    assert fig["data"][0]["x"] == list(range(10, 21)), "cells keep their positions"


# --- masked and causal prediction --------------------------------------------------------------


def test_masked_page_ranks_tokens_for_each_mask() -> None:
    at = page("masked", "the [MASK] bit the man near the [MASK] .", mask_k=7)
    assert_ok(at)
    figs = charts(at)
    bars = [figs[key] for key in ("mask_topk_0", "mask_topk_1")]
    assert "mask_topk_2" not in figs
    for fig in bars:
        probs = fig["data"][0]["x"]
        assert len(probs) == 7
        assert probs == sorted(probs, reverse=True)
        assert all(0 <= p <= 1 for p in probs)
    assert not any(key.startswith("mask_row") for key in figs), "drawn only in its tab"
    at.session_state["masked_section"] = "looked"
    assert {"mask_row_0", "mask_row_1"} <= charts(at.run()).keys(), "each [MASK]'s attention"


def test_masked_page_masks_a_chosen_token() -> None:
    at = page("masked", PROBES[0], w_more_open=True)
    assert_ok(at)
    assert at.multiselect(key="mask_tokens").value == [11], "'bank' is masked by default"
    assert "was “bank”" in charts(at)["mask_topk_0"]["layout"]["title"]["text"]
    at.multiselect(key="mask_tokens").set_value([5, 11]).run()
    assert {"mask_topk_0", "mask_topk_1"} <= charts(at).keys()
    at.multiselect(key="mask_tokens").set_value([]).run()
    assert_ok(at)
    assert any("Choose a token to mask" in i.value for i in at.info)
    # The page returned early: the sidebar's part of the body, written after it, is there.
    assert at.text_area(key="sentence").value == PROBES[0]
    assert [m.label for m in at.metric] == ["Forward pass"]


WRITE = "writing"  # the causal page's tab "The next token, then generation", by its id


def test_causal_page_generates_the_same_text_for_the_same_seed() -> None:
    def write(seed: int) -> tuple[str, AppTest]:
        at = page("causal", "the researcher asked the", gen_seed=seed, causal_section=WRITE)
        for _ in range(3):
            at.button(key="gen_next").click().run()
        assert_ok(at)
        return at.code[0].value, at

    first, at = write(7)
    again, _ = write(7)
    assert first == again
    assert first.startswith("the researcher asked the")
    steps = at.session_state["gen"]["steps"]
    assert len(steps) == 3
    assert {"gen_strip", "gen_row"} <= charts(at).keys()
    at.button(key="gen_more").click().run()
    assert 3 < len(at.session_state["gen"]["steps"]) <= 13
    at.button(key="gen_reset").click().run()
    assert_ok(at)
    assert at.session_state["gen"]["steps"] == []


def test_causal_page_shows_the_mask_and_the_filtered_distribution() -> None:
    at = page("causal", "the dog bit the", causal_topk=3, causal_temp=0.5)
    assert_ok(at)
    figs = charts(at)
    assert "−∞" in json.dumps(figs["causal_mask"], ensure_ascii=False) or "-∞" in json.dumps(
        figs["causal_mask"], ensure_ascii=False
    )
    at.session_state["causal_section"] = WRITE
    figs = charts(at.run())
    assert "causal_mask" not in figs, "only the open tab is drawn"
    probs = figs["causal_next"]["data"][0]["x"]
    assert sum(p > 0 for p in probs) == 3, "top-k 3 leaves three tokens"
    assert abs(sum(probs) - 1) < 1e-6
    at.slider(key="causal_temp").set_value(1.5).run()
    for tab in ("learns", WRITE):  # the settings are kept while another tab is open
        at.session_state["causal_section"] = tab
        assert_ok(at.run())
    assert at.slider(key="causal_temp").value == 1.5 and at.slider(key="causal_topk").value == 3


def test_pages_that_need_another_model_use_it_and_say_so() -> None:
    at = page("causal", "the dog bit the", model="mlm")
    assert_ok(at)
    assert any("clm" in c.value for c in at.caption)
    at = page("masked", "the dog bit the [MASK]", model="clm")
    assert_ok(at)
    assert any("mlm" in c.value for c in at.caption)


# --- bad input -------------------------------------------------------------------------------


def _page_that_fails() -> None:
    """A page whose drawing fails halfway (AppTest.from_function runs this source alone)."""
    import streamlit as st

    from ui.frame import frame

    def draw(view) -> None:
        st.caption(f"{len(view.trace.tokens)} tokens")
        raise ValueError("a bug in the page")

    frame("tokens", draw)


def _trace_that_fails() -> None:
    """A page whose sentence cannot be traced (AppTest.from_function runs this alone)."""
    from ui import cache
    from ui.frame import frame

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the model failed")

    real, cache.get_trace = cache.get_trace, boom
    try:
        frame("tokens", lambda view: None)
    finally:
        cache.get_trace = real


def test_a_failing_trace_keeps_the_sentence_box() -> None:
    at = AppTest.from_function(_trace_that_fails, default_timeout=TIMEOUT)
    at.session_state["sentence"] = "a sentence that is not the shipped one"
    at.run()
    assert len(at.exception) == 1
    assert at.text_area(key="sentence").value == "a sentence that is not the shipped one"


def test_a_failing_page_keeps_the_sentence_box_and_the_timing() -> None:
    at = AppTest.from_function(_page_that_fails, default_timeout=TIMEOUT)
    at.session_state["sentence"] = PROBES[0]
    at.session_state["w_more_open"] = True  # "Device, timing, sharing" open
    at.run()
    assert len(at.exception) == 1, "the error is shown (its message redacted, config.toml)"
    assert at.text_area(key="sentence").value == PROBES[0], "a new sentence can be typed"
    assert [m.label for m in at.metric] == ["Forward pass"]


BAD_UPLOADS = {
    "binary": ("picture.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary file"),
    "latin-1": ("cafe.txt", "un café à Paris".encode("latin-1"), "not UTF-8"),
    "empty": ("empty.md", b"", "empty"),
    "blank": ("blank.txt", b" \n\n  ", "empty"),
    "too big": ("big.txt", b"a " * (MAX_UPLOAD_BYTES // 2 + 1), "limit is 1 MB"),
}


@pytest.mark.parametrize("kind", BAD_UPLOADS)
def test_a_bad_upload_shows_an_error_and_keeps_the_sentence(kind: str) -> None:
    name, data, message = BAD_UPLOADS[kind]
    at = page("tokens", "the cat sat")
    at.file_uploader(key="w_upload").set_value((name, data, "text/plain")).run()
    assert_ok(at)
    errors = [e.value.replace("\\", "") for e in at.error]  # markdown-escaped file names
    assert errors and any(message in e for e in errors), errors
    assert "previous sentence is kept" in errors[0]
    assert at.session_state["sentence"] == "the cat sat"
    assert '"cat"' in figure_text(at)


def test_a_good_upload_becomes_the_sentence() -> None:
    at = page("tokens", "the cat sat")
    data = b"I walked across the road to get cash from the bank.\n"
    at.file_uploader(key="w_upload").set_value(("note.md", data, "text/markdown")).run()
    assert_ok(at)
    assert not at.error
    assert at.session_state["sentence"] == PROBES[1]
    assert '"cash"' in figure_text(at)


def test_a_cuda_failure_falls_back_to_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ui.cache.load_model

    def broken_gpu(name: str, device: str):
        if device != "cpu":
            raise RuntimeError("CUDA error: out of memory")
        return real(name, device)

    monkeypatch.setattr(ui.cache, "cuda_available", lambda: True)
    monkeypatch.setattr(ui.cache, "load_model", broken_gpu)
    at = page("attention", "the dog bit the man", device="cuda", w_more_open=True)
    assert_ok(at)
    assert "cuda" in at.selectbox(key="device").options
    assert any("Running on the CPU instead" in w.value for w in at.warning)
    assert any("cpu" in c.value for c in at.sidebar.caption)


def test_without_a_gpu_cuda_cannot_be_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ui.cache, "cuda_available", lambda: False)
    at = page("tokens", "the cat sat", device="cuda")
    assert_ok(at)
    assert at.selectbox(key="device").options == ["auto", "cpu"]
    assert any("no GPU found" in c.value for c in at.sidebar.caption)
    assert at.session_state["device"] == "auto"


def test_the_sidebar_shows_the_forward_pass_time_and_device_while_it_is_open() -> None:
    at = page("tokens", "the cat sat")
    assert not at.sidebar.metric, "folded: a new sentence sends no timing"
    at.session_state["w_more_open"] = True  # what opening "Device, timing, sharing" sets
    at.run()
    (metric,) = at.sidebar.metric
    assert metric.label == "Forward pass" and metric.value.endswith(" ms")
    assert any("on **cpu**" in c.value or "on **cuda" in c.value for c in at.sidebar.caption)


# --- the translation pages, on the shipped translators -----------------------------------------


@pytest.mark.parametrize("name", ["rnn", "cross_attention"])
def test_a_translation_page_translates_the_lecture_example(name: str) -> None:
    at = page(name)
    assert_ok(at)
    assert at.text_input(key="english").value == "i go to school"
    assert "나는 학교에 간다" in [c.value for c in at.code]
    assert '"school"' in figure_text(at) and at.get("download_button")


@pytest.mark.parametrize("name", ["rnn", "cross_attention"])
def test_unknown_words_are_named_and_the_vocabulary_listed(name: str) -> None:
    at = page(name, english="the zebra <b>bit</b> the man")
    assert_ok(at)
    (error,) = [e.value.replace("\\", "") for e in at.error]
    assert "zebra" in error and "<b>bit</b>" in error
    assert any("school" in c.value.split() for c in at.code), "the vocabulary is listed"
    assert not drawn_charts(at)
    at = page(name, english="   ")
    assert_ok(at)
    assert any("Type an English sentence" in i.value for i in at.info)


def test_300_masks_are_all_predicted_but_six_drawn() -> None:
    """The walk (tests/test_walk.py) bounds the charts of every page for 300 [MASK]s; the
    masked page says how many more it predicted than it draws."""
    at = page("masked", " ".join(["[MASK]"] * 300))
    assert_ok(at)
    keys = [c.key for c in drawn_charts(at)]
    assert sum(k.startswith("mask_topk_") for k in keys) == 6
    assert any("more masks, first guesses" in c.value for c in at.caption)
    at.session_state["masked_section"] = "looked"
    assert_ok(at.run())
    keys = [c.key for c in drawn_charts(at)]
    assert sum(k.startswith("mask_row_") for k in keys) == 6
