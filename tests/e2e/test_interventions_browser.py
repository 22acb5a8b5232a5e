"""The experiments (issue 29) in a real browser: each view's tab draws its chart, heads
picked in the menu are knocked out and the page redraws the recomputed guess, compare mode
patches A into B, the lecture's question reveals its grid. Screenshots:
artifacts/screenshots/knockout.png, patch.png."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from model import MODELS_DIR
from model.examples import MONEY_BANK, RIVER_BANK
from tests.e2e import harness
from tests.e2e.test_pages import assert_clean, url

pytestmark = pytest.mark.e2e
wait_for_title = harness.wait_for_chart_title  # a drawn chart whose title holds a text
REPORT = json.loads((MODELS_DIR / "interventions.json").read_text(encoding="utf-8"))


def test_knock_out_heads_on_the_masked_page(app_server, page, screenshot_dir) -> None:
    harness.open_app(page, url(app_server, "masked", sentence=RIVER_BANK), charts=True)
    harness.open_tab(page, "Knock out heads")
    wait_for_title(page, "change in log p(bank) at the [MASK], each head knocked out alone")
    # Typed into the menu itself, not wherever the focus is (on a loaded machine the tab's
    # body may still be drawing when the click lands): the list is drawn a screenful at a
    # time, so filter it
    heads = page.locator(".st-key-ko_heads input")
    heads.click()
    heads.press_sequentially("L4H2")
    option = page.get_by_role("option", name="L4H2", exact=True)
    harness.after_rerun(page, option.click)
    heads.press("Escape")  # close the menu
    wait_for_title(page, "L4H2 knocked out (zero)")
    wait_for_title(page, "knocked out: '[MASK]' attends to…")
    assert_clean(page)
    page.screenshot(path=str(screenshot_dir / "knockout.png"))
    for tab, title in [("Every layer's guess", "rank of 'bank' in each layer's readout"),
                       ("Attention beside attribution", "attention (layer 4, average")]:
        harness.open_tab(page, tab)
        wait_for_title(page, title)
    harness.wait_for_chart_text(page, "integrated gradients", exact=False)
    assert page.get_by_text("attention is not explanation", exact=False).count()
    assert_clean(page)


def test_patch_a_into_b_in_compare_mode(app_server, page, screenshot_dir) -> None:
    link = url(app_server, "masked", sentence=RIVER_BANK, compare_on="true", compare=MONEY_BANK)
    harness.open_app(page, link, charts=True)
    harness.open_tab(page, "Patch A into B")
    patch = REPORT["mlm"]["patch_river_into_cash"]["resid_pre"]  # python -m training.interventions
    wait_for_title(page, f"share restored of log p({patch['guess_a']}) − log p({patch['guess_b']})")
    harness.wait_for_chart_text(page, "road ← river")  # B's token ← A's
    assert_clean(page)
    page.screenshot(path=str(screenshot_dir / "patch.png"))


@pytest.mark.parametrize("key, tab, title", [
    ("causal", "Knock out heads", "change in log p(bank) after 'other'"),
    ("causal", "Every layer's guess", "rank of 'bank' in each layer's readout"),
    ("cross_attention", "Knock out heads", "change in log p(the translation)"),
    ("vision", "Knock out heads", "each head knocked out alone"),
])  # fmt: skip
def test_each_pages_experiment_tab_draws(app_server, page, key: str, tab: str, title: str) -> None:
    harness.open_app(page, url(app_server, key, sentence=RIVER_BANK), charts=True)
    harness.open_tab(page, tab)
    wait_for_title(page, title)
    assert_clean(page)


def test_the_lecture_asks_which_head_matters_for_bank(app_server, page) -> None:
    harness.open_app(page, f"{app_server.url}/lecture-multi-head-attention", charts=True)
    expander = page.get_by_text("Knock heads out: which one matters for “bank”?")
    harness.after_rerun(page, expander.click)
    # The expander's question is drawn after the run (the body's fragment): wait for its
    # button before clicking it (clicked early, the step's own button took the click once)
    reveal = page.get_by_role("button", name="Reveal the model's answer")
    expect(reveal).to_have_count(2, timeout=30000)
    # ... and for that fragment's run to end: a click while it runs can be lost (no run
    # follows it)
    harness.wait_idle(page, harness.runs(page))
    harness.click_button(page, reveal.last)
    wait_for_title(page, "change in log p(bank), each head knocked out alone")
    best = REPORT["mlm"]["river"]["heads"]["top"][0]["head"]  # python -m training.interventions
    assert page.get_by_text(f"The model's answer: {best}", exact=False).count()
    assert_clean(page)
