"""Inside the MLP on the pages (issue 57), with AppTest: the section shows the chosen layer's
and token's neurons that fire most, what they push (the direct logit effect, recomputed
here from the weights), the MLP's output read alone, each layer's knock-out; a knocked-out
MLP's prediction is the contract's own (`fill_mask` / `next_token` with ablate_mlp); the
lecture's question's answer is the layer the model itself says. Numbers are recomputed
with the model, never restated."""

from __future__ import annotations

import numpy as np
import pytest

import model
from model.examples import MORE, RIVER_BANK
from tests.figures import decoded
from tests.test_app import app_test, assert_ok, charts, page

BANK_MASKED = RIVER_BANK.replace("bank.", "[MASK].")
MASK_AT = 11  # the [MASK]'s position in BANK_MASKED (mlm)


def open_mlp(name: str, sentence: str = RIVER_BANK, **state: object):
    return page(name, sentence, **{f"{name}_section": "mlp"}, **state)


def named(fig: dict) -> dict[int, str]:
    """The neurons a mlp_neurons figure names: index -> its label."""
    bar = decoded(fig["data"][0])
    return {int(x): text for x, text in zip(bar["x"], bar["text"], strict=True) if text}


@pytest.fixture(scope="module")
def mlm() -> model.Model:
    return model.load("mlm", "cpu")


@pytest.fixture(scope="module")
def clm() -> model.Model:
    return model.load("clm", "cpu")


def test_the_section_names_the_top_neurons_of_the_chosen_layer_and_token(mlm) -> None:
    at = open_mlp("masked")
    assert_ok(at)
    ids = mlm.encode(BANK_MASKED).ids
    t = mlm.trace_ids(ids)
    for layer in (3, 1):  # the last layer by default, then another
        if layer != 3:
            at.selectbox(key="mlp_layer").set_value(layer).run()
            assert_ok(at)
        acts = t.layers[layer].mlp_post[MASK_AT]
        top = [int(n) for n in np.argsort(-acts, kind="stable")[:5]]
        assert named(charts(at)["mlp_neurons"]) == {n: f"neuron {n}" for n in top}
        rows = at.dataframe[0].value
        assert list(rows["neuron"]) == [f"neuron {n}" for n in top]
        # the first neuron's first pushed-up token: the largest of w_out[n] @ W_U, recomputed
        w_out, w_u = mlm.mlp_weights(layer)["w_out"], mlm.embedding_matrix().T
        effect = np.einsum("d,dv->v", w_out[top[0]].astype(np.float64), w_u)
        effect[list(mlm.special_ids().values())] = -np.inf
        best = mlm.vocabulary()[int(np.argmax(effect))]
        assert rows["pushes up"][0].startswith(f"{best} (+{effect.max():.2f})")
    # the MLP's output alone, through the output head: mlm is post-norm with tied weights
    row = t.layers[1].mlp_out[MASK_AT].astype(np.float64)
    logits = row @ mlm.embedding_matrix().T.astype(np.float64)
    logits += mlm.module.unembed.bias.detach().numpy()
    logits[list(mlm.special_ids().values())] = -np.inf
    first = mlm.vocabulary()[int(np.argmax(logits))]
    alone = charts(at)["mlp_alone"]
    assert alone["layout"]["yaxis"]["ticktext"][0] == first


def test_knocking_out_an_mlp_shows_fill_masks_own_guess(mlm) -> None:
    at = open_mlp("masked", mlp_layer=1)
    at.toggle(key="mlp_knock").set_value(True).run()
    assert_ok(at)
    figs = charts(at)
    expected = mlm.fill_mask(BANK_MASKED, k=5, ablate_mlp=[1])[0]
    clean = mlm.fill_mask(BANK_MASKED, k=5)[0]
    out = decoded(figs["mlp_guess_out"]["data"][0])["x"]
    assert out == pytest.approx([p for _w, p in expected], abs=1e-5)
    assert figs["mlp_guess_out"]["layout"]["yaxis"]["ticktext"] == [w for w, _p in expected]
    before = decoded(figs["mlp_guess_clean"]["data"][0])["x"]
    assert before == pytest.approx([p for _w, p in clean], abs=1e-5)
    assert out[0] < before[0], "layer 2's MLP out, 'bank' loses probability"
    # each layer's knock-out, as the caption says it: the log-probability of "bank" moved
    said = "\n".join(c.value for c in at.caption)
    for layer in range(4):
        p = dict(mlm.fill_mask(BANK_MASKED, k=50, ablate_mlp=[layer])[0])["bank"]
        moved = np.log(p) - np.log(dict(clean)["bank"])
        assert f"layer {layer + 1} {moved:+.3f}" in said


def test_knocking_out_the_top_neuron_shows_fill_masks_own_guess(mlm) -> None:
    layer = 1
    at = open_mlp("masked", mlp_layer=layer)
    assert_ok(at)
    box = at.multiselect(key="mlp_knock_neurons")
    acts = mlm.trace(BANK_MASKED).layers[layer].mlp_post[MASK_AT]
    top = [int(n) for n in np.argsort(-acts, kind="stable")[:5]]
    assert box.options == [f"neuron {n}" for n in top] and box.value == []
    assert "mlp_guess_out" not in charts(at)  # nothing knocked out: no before and after
    box.set_value([top[0]]).run()
    assert_ok(at)
    figs = charts(at)
    expected = mlm.fill_mask(BANK_MASKED, k=5, ablate_neurons=[(layer, top[0])])[0]
    clean = mlm.fill_mask(BANK_MASKED, k=5)[0]
    assert expected != clean
    out = decoded(figs["mlp_guess_out"]["data"][0])["x"]
    assert out == pytest.approx([p for _w, p in expected], abs=1e-5)
    assert figs["mlp_guess_out"]["layout"]["yaxis"]["ticktext"] == [w for w, _p in expected]
    before = decoded(figs["mlp_guess_clean"]["data"][0])["x"]
    assert before == pytest.approx([p for _w, p in clean], abs=1e-5)
    # every named neuron at once, then another layer (whose neurons are others): no error
    at.multiselect(key="mlp_knock_neurons").set_value(top).run()
    assert_ok(at)
    expected = mlm.fill_mask(BANK_MASKED, k=5, ablate_neurons=[(layer, n) for n in top])[0]
    out = decoded(charts(at)["mlp_guess_out"]["data"][0])["x"]
    assert out == pytest.approx([p for _w, p in expected], abs=1e-5)
    at.selectbox(key="mlp_layer").set_value(3).run()
    assert_ok(at)
    kept = at.multiselect(key="mlp_knock_neurons").value
    assert set(kept) <= set(int(n) for n in np.argsort(-mlm.trace(BANK_MASKED).layers[3]
                                                          .mlp_post[MASK_AT])[:5])  # fmt: skip


def test_the_causal_page_knocks_out_an_mlp_before_the_next_token(clm) -> None:
    prompt = "I swam across the river to get to the other"
    at = open_mlp("causal", RIVER_BANK, mlp_layer=2)
    at.toggle(key="mlp_knock").set_value(True).run()
    assert_ok(at)
    expected = clm.next_token(prompt, k=5, ablate_mlp=[2])
    fig = charts(at)["mlp_guess_out"]
    assert decoded(fig["data"][0])["x"] == pytest.approx([p for _w, p in expected], abs=1e-5)
    ids = clm.encode(RIVER_BANK).ids
    acts = clm.trace_ids(ids).layers[2].mlp_post[len(clm.encode(prompt).ids) - 1]
    top = [int(n) for n in np.argsort(-acts, kind="stable")[:5]]
    assert set(named(charts(at)["mlp_neurons"])) == set(top)


def test_the_tokens_page_looks_inside_the_mlp_at_the_followed_token(mlm) -> None:
    at = open_mlp("tokens")
    assert_ok(at)
    pos = at.session_state["tok_token"]
    acts = mlm.trace(RIVER_BANK).layers[3].mlp_post[pos]
    top = [int(n) for n in np.argsort(-acts, kind="stable")[:5]]
    assert set(named(charts(at)["mlp_neurons"])) == set(top)
    at.toggle(key="mlp_knock").set_value(True).run()
    assert_ok(at)
    logits = mlm.trace(RIVER_BANK, ablate_mlp=[3]).logits[pos].astype(np.float64)
    logits[list(mlm.special_ids().values())] = -np.inf
    first = mlm.vocabulary()[int(np.argmax(logits))]
    assert charts(at)["mlp_guess_out"]["layout"]["yaxis"]["ticktext"][0] == first


def test_the_lecture_asks_which_layers_mlp_matters_for_bank(mlm) -> None:
    at = app_test("lecture-transformer-layer").run()
    assert_ok(at)
    assert "l8_mlp_grid" not in charts(at), "computed only once opened"
    at.session_state["l8_knock"] = True
    at.run()
    at.button(key="l8_mlp_reveal").click().run()
    assert_ok(at)
    clean = dict(mlm.fill_mask(MORE[0], k=50)[0])["bank"]
    drops = [np.log(dict(mlm.fill_mask(MORE[0], k=50, ablate_mlp=[n])[0])["bank"]) - np.log(clean)
             for n in range(4)]  # fmt: skip
    worst = int(np.argmin(drops))
    assert any(f"**layer {worst + 1}**" in i.value for i in at.info)
    grid = decoded(charts(at)["l8_mlp_grid"]["data"][0])["z"]
    np.testing.assert_allclose(np.array(grid, float)[0], drops, atol=1e-4)


def test_the_mlp_question_is_a_poll_of_the_step() -> None:
    from ui.lecture.classroom import poll_id

    assert poll_id("transformer-layer", "l8_mlp") == "transformer-layer/mlp"
    assert poll_id("transformer-layer", "l8") == "transformer-layer"


# --- Hugging Face models (tiny ones, built here: tests/hf_models.py) -----------------------

HF_SENTENCE = "the dog bit the man near the river bank"


@pytest.fixture(scope="module")
def hf_names(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.hf_models import save

    root = tmp_path_factory.mktemp("hf_mlp_pages")
    names = {f: model.register(f"hf-mlp-{f}", save(root / f, f)).name
             for f in ("bert", "gpt2", "llama", "bert-base")}  # fmt: skip
    yield names
    for name in names.values():
        model.unregister(name)


@pytest.mark.parametrize(("name", "family"), [("masked", "bert"), ("causal", "gpt2"),
                                              ("tokens", "llama"), ("tokens", "bert-base")])
def test_hugging_face_models_look_inside_their_mlps(hf_names, name: str, family: str) -> None:
    at = open_mlp(name, HF_SENTENCE, model=hf_names[family], mlp_layer=0)
    assert_ok(at)
    m = model.load(hf_names[family], "cpu")
    assert "mlp_neurons" in charts(at)
    headless = not (m.can("fill_mask") or m.can("next_token"))
    assert ("mlp_alone" in charts(at)) != headless and bool(at.dataframe) != headless
    if headless:
        return
    at.toggle(key="mlp_knock").set_value(True).run()
    assert_ok(at)
    got = decoded(charts(at)["mlp_guess_out"]["data"][0])["x"]
    if name == "masked":
        masked = at.multiselect(key="mask_tokens").value[0]
        ids = [m.special_ids()["[MASK]"] if i == masked else t
               for i, t in enumerate(m.encode(HF_SENTENCE).ids)]  # fmt: skip
        probs = m.fill_mask_ids(ids, 5, model.RunOptions(ablate_mlp=[0]))[0]
        assert got == pytest.approx([p for _w, p in probs], abs=1e-5)
    elif name == "causal":
        at_pos = at.session_state["exp_position"]
        ids = m.encode(HF_SENTENCE).ids[: at_pos + 1]
        probs = m.next_distribution(ids, None, model.RunOptions(ablate_mlp=[0]))
        assert got == pytest.approx(sorted(probs, reverse=True)[:5], abs=1e-5)
