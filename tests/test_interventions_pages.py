"""The experiments on the pages (issue 29), with AppTest: each view is drawn only in its tab,
and what it draws is the model's own number (checked against the contract directly):
knock out heads (masked, causal, cross-attention, vision, lecture step 7), every layer's
guess, attention beside attribution, patch A into B in compare mode; a big model's grid a
layer at a time; an experiment's view never shares the clean run's key."""

from __future__ import annotations

import base64

import numpy as np
import pytest
import torch

import analysis
import model
from analysis.interventions import agreement, layer_guesses
from model import CLEAN, RunOptions
from model.examples import MONEY_BANK, PAIRS, RIVER_BANK
from tests.test_app import app_test, assert_ok, charts, page

BANK_MASKED = RIVER_BANK.replace("bank.", "[MASK].")


def unpack_z(fig: dict) -> np.ndarray:
    """A heatmap's z: a nested list, or Plotly 6's typed array {"bdata", "dtype", "shape"}."""
    z = fig["data"][0]["z"]
    if isinstance(z, dict):
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
        return flat.reshape([int(n) for n in str(z["shape"]).split(",")])
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)


def log_softmax(x: np.ndarray) -> np.ndarray:
    return torch.log_softmax(torch.tensor(x, dtype=torch.float64), -1).numpy()


def open_tab(name: str, tab: str, sentence: str | None = RIVER_BANK, **state: object):
    return page(name, sentence, **{f"{name}_section": tab}, **state)


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


@pytest.fixture(scope="module")
def mlm() -> model.Model:
    return model.load("mlm", "cpu")


def test_the_experiments_are_drawn_only_in_their_tabs() -> None:
    for name in ("masked", "causal"):
        at = page(name, RIVER_BANK)
        assert_ok(at)
        assert not {k for k in charts(at) if k.startswith(("ko_", "lens_", "attr_", "patch_"))}


def test_the_knockout_grid_is_each_heads_effect_on_the_guess(mlm) -> None:
    at = open_tab("masked", "knockout")
    assert_ok(at)
    grid = np.array(unpack_z(charts(at)["ko_grid"]), dtype=float)
    assert grid.shape == (4, 4)
    t = mlm.trace(RIVER_BANK)
    bank, at_mask = int(t.ids[11]), 11
    ids = [mlm.special_ids()["[MASK]"] if n == at_mask else int(i) for n, i in enumerate(t.ids)]
    clean = log_softmax(mlm.trace_ids(ids).logits)[at_mask, bank]
    for layer, head in [(0, 0), (3, 1), (2, 3)]:
        out = log_softmax(mlm.trace_ids(ids, ablate=[(layer, head)]).logits)[at_mask, bank]
        assert grid[layer, head] == pytest.approx(out - clean, abs=1e-4)
    said = captions(at)
    worst = np.unravel_index(np.argmin(grid), grid.shape)
    assert f"L{worst[0] + 1}H{worst[1] + 1} {grid[worst]:+.3f}" in said


def test_heads_knocked_out_together_recompute_the_guess_and_the_attention(mlm) -> None:
    at = open_tab("masked", "knockout")
    at.multiselect(key="ko_heads").set_value([("", 3, 1), ("", 2, 3)]).run()
    assert_ok(at)
    figs = charts(at)
    assert {"ko_guesses", "ko_rows_c", "ko_rows_k"} <= figs.keys()
    expected = mlm.fill_mask(BANK_MASKED, k=5, ablate=[(3, 1), (2, 3)])[0]
    assert figs["ko_guesses"]["data"][0]["x"] == pytest.approx([p for _, p in expected], abs=1e-5)
    clean_rows = np.array(unpack_z(figs["ko_rows_c"]), float)
    knocked = np.array(unpack_z(figs["ko_rows_k"]), float)
    np.testing.assert_allclose(clean_rows[:3], knocked[:3], atol=1e-6)  # before layer 4: same
    assert np.abs(clean_rows[3] - knocked[3]).max() > 1e-4  # recomputed after the knockout
    at.toggle(key="ko_keep").set_value(True).run()
    assert "L1H1, L1H2" in captions(at) and "L3H4" not in captions(at).split("Now:")[1][:200]


def test_every_layers_guess_is_the_logit_lens(mlm) -> None:
    at = open_tab("masked", "lens")
    assert_ok(at)
    ids = mlm.encode(BANK_MASKED).ids
    lens = mlm.logit_lens(ids, at=[11])[:, 0]
    g = layer_guesses(lens, mlm.special_ids().values())
    assert charts(at)["lens_rank"]["data"][0]["y"] == [int(r) for r in g.ranks]
    assert mlm.vocabulary()[g.final] == "bank" and g.ranks[-1] == 1
    assert f"climbs from rank {int(g.ranks[0]):,}" in captions(at)
    assert len(at.dataframe[0].value) == len(lens)


def test_attention_beside_attribution_states_their_correlation(mlm) -> None:
    at = open_tab("masked", "attribution")
    assert_ok(at)
    fig = charts(at)["attr_bars"]
    assert [trace["name"] for trace in fig["data"]] == ["attention", "integrated gradients"]
    ids = mlm.encode(BANK_MASKED).ids
    bank = mlm.vocabulary().index("bank")
    got = mlm.attribute(ids, 11, bank)
    t = mlm.trace_ids(ids)
    words = [i for i in analysis.word_positions(t.tokens) if i != 11]
    rho = agreement(t.layers[3].attention.mean(0)[11], got.scores, words)
    assert f"over the {len(words)} other words: {rho:.2f}" in captions(at)
    assert "attention is not explanation" in captions(at)


def test_patch_a_into_b_with_the_lecture_pair(mlm) -> None:
    at = open_tab("masked", "patch")
    assert any("Compare with a second sentence" in i.value for i in at.info)
    at = open_tab("masked", "patch", compare_on=True, compare=MONEY_BANK)
    assert_ok(at)
    share = np.array(unpack_z(charts(at)["patch_grid"]), float)
    n = len(mlm.encode(RIVER_BANK).ids)
    assert share.shape == (4, n)
    np.testing.assert_allclose(share[0, 11], 0, atol=1e-6)  # A's [MASK] is B's [MASK]
    assert "'shore' (A) and 'atm' (B)" in captions(at) or "A guesses" in captions(at)


def test_patching_sentences_of_different_lengths_is_a_message() -> None:
    at = open_tab("masked", "patch", compare_on=True, compare="the dog bit")
    assert_ok(at)
    said = " ".join(i.value for i in at.info)
    assert "A has 14, B 5" in said and PAIRS[0][0][:20] in said


def test_the_causal_page_reads_the_guess_before_the_last_word() -> None:
    for tab in ("knockout", "lens", "attribution"):
        at = open_tab("causal", tab)
        assert_ok(at)
        assert at.selectbox(key="exp_position").value == 10, "the guess after 'other': bank"
    assert "The final guess is 'bank'" in captions(open_tab("causal", "lens"))


def test_the_cross_attention_page_knocks_out_its_three_stacks() -> None:
    at = app_test("cross_attention")
    at.session_state["cross_attention_section"] = "knockout"
    at.run()
    assert_ok(at)
    assert np.array(unpack_z(charts(at)["ko_grid"]), float).shape == (9, 4)
    cross = [("cross", 2, h) for h in range(4)]
    at.multiselect(key="ko_heads").set_value(cross).run()
    m = model.load("translate", "cpu")
    text = at.session_state["english"]
    assert at.code[-1].value == m.translate(text, ablate=cross).text


def test_the_vision_page_knocks_out_heads() -> None:
    at = app_test("vision")
    at.session_state["vision_section"] = "knockout"
    at.run()
    assert_ok(at)
    assert np.array(unpack_z(charts(at)["ko_grid"]), float).shape == (4, 4)
    at.multiselect(key="ko_heads").set_value([("", 0, 0)]).run()
    assert "ko_digits" in charts(at)


def test_a_big_models_grid_comes_a_layer_at_a_time(monkeypatch) -> None:
    import ui.parts.interventions.knockout as knockout

    monkeypatch.setattr(knockout, "AT_ONCE", {False: 4, True: 4})
    monkeypatch.setattr(knockout, "BUDGET_S", 0.0)  # one layer a click
    at = open_tab("masked", "knockout")
    assert_ok(at)
    assert "ko_grid" not in charts(at) and "0 of 4 layers" in captions(at)
    at.button(key="ko_more").click().run()
    grid = np.array(unpack_z(charts(at)["ko_grid"]), float)
    assert grid.shape == (4, 4) and "1 of 4 layers" in captions(at)
    assert np.isfinite(grid[0]).all() and np.isnan(grid[1:]).all(), "layer 1 only, so far"


def test_the_lecture_asks_which_head_matters_for_bank(mlm) -> None:
    at = app_test("lecture-multi-head-attention").run()
    assert_ok(at)
    assert "l7_bank_grid" not in charts(at), "computed only once opened"
    at.session_state["l7_knock"] = True
    at.run()
    at.button(key="l7_bank_reveal").click().run()
    assert_ok(at)
    grid = np.array(unpack_z(charts(at)["l7_bank_grid"]), float)
    layer, head = np.unravel_index(np.argmin(grid), grid.shape)
    assert any(f"**L{layer + 1}H{head + 1}**" in i.value for i in at.info)


def test_an_experiments_view_has_its_own_key() -> None:
    from ui.registry import BY_KEY
    from ui.view import View

    t = model.load("mlm", "cpu").trace(RIVER_BANK)
    clean = View(BY_KEY["masked"], RIVER_BANK, "mlm", "cpu", t)
    knocked = clean.with_options(RunOptions(ablate=[(0, 1)]))
    assert clean.key != knocked.key and clean.options == CLEAN
    assert knocked.trace.options == knocked.options and (knocked.trace.layers[0].z[1] == 0).all()
