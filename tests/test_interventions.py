"""Experiments as options of the forward pass (issue 29): heads knocked out, the logit
lens, activation patching and attribution, on tiny models of every text kind, the vision
kind and the Hugging Face adapter (tests/hf_models.py). Each result is checked against a
recomputation by hand or against transformers' own modules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import model
from model import Patch, RunOptions
from tests.conftest import save_tiny

SENTENCE = "the dog bit the man near the river bank"
OTHER = "the cat sat on the mat near the river"  # as many tokens as SENTENCE


def log_softmax(x: np.ndarray) -> np.ndarray:
    return torch.log_softmax(torch.tensor(x, dtype=torch.float64), -1).numpy()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, tiny_tokenizer) -> dict[str, model.Model]:
    root = tmp_path_factory.mktemp("interventions")
    kinds = ("encoder", "decoder", "encoder-decoder", "vision")
    return {k: model.load(save_tiny(root / k, tiny_tokenizer, k), device="cpu") for k in kinds}


@pytest.fixture(scope="module")
def hf(tmp_path_factory) -> dict[str, model.Model]:
    pytest.importorskip("transformers")
    from tests.hf_models import save

    root = tmp_path_factory.mktemp("hf_interventions")
    families = ("bert", "distilbert", "roberta", "gpt2", "llama")
    return {f: model.load(save(root / f, f), device="cpu") for f in families}


# --- ablation recomputed by hand --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_a_knocked_out_head_is_recomputed_by_hand(tiny, kind: str) -> None:
    m = tiny[kind]
    clean, out = m.trace(SENTENCE), m.trace(SENTENCE, ablate=[(1, 2)])
    assert out.options == RunOptions(ablate=[(1, 2)])
    assert (out.layers[1].z[2] == 0).all() and np.abs(clean.layers[1].z[2]).max() > 0
    w = m.attention_weights(1)
    concat = out.layers[1].z.transpose(1, 0, 2).reshape(len(out.tokens), -1)  # [T, H * Dh]
    np.testing.assert_allclose(out.layers[1].attn_out, concat @ w["w_o"] + w["b_o"], atol=1e-5)
    # the layer before it is unchanged, everything after it recomputed
    np.testing.assert_array_equal(out.layers[0].resid_post, clean.layers[0].resid_post)
    np.testing.assert_array_equal(out.layers[1].resid_pre, clean.layers[1].resid_pre)
    assert np.abs(out.logits - clean.logits).max() > 1e-4


def test_every_head_out_adds_the_same_vector_to_every_token(tiny) -> None:
    m = tiny["encoder"]
    t = m.trace(SENTENCE, ablate=[(0, h) for h in range(4)])
    b_o = m.attention_weights(0)["b_o"]
    np.testing.assert_allclose(t.layers[0].attn_out, np.tile(b_o, (len(t.tokens), 1)), atol=1e-6)


def test_mean_ablation_puts_the_heads_mean_over_the_positions(tiny) -> None:
    m = tiny["decoder"]
    clean = m.trace(SENTENCE)
    out = m.trace_with(SENTENCE, RunOptions(ablate=[(0, 1)], ablation="mean"))
    mean = clean.layers[0].z[1].mean(axis=0)
    np.testing.assert_allclose(out.layers[0].z[1], np.tile(mean, (len(out.tokens), 1)), atol=1e-6)


@pytest.mark.parametrize("kind", ["encoder", "decoder", "encoder-decoder", "vision"])
def test_ablating_nothing_is_the_clean_run_exactly(tiny, kind: str) -> None:
    m = tiny[kind]
    inputs = np.eye(8) * 16 if kind == "vision" else SENTENCE
    clean = m.trace(inputs)
    for nothing in (None, [], ()):
        same = m.trace(inputs, ablate=nothing)
        np.testing.assert_array_equal(same.logits, clean.logits)
        for a, b in zip(same.layers, clean.layers, strict=True):
            np.testing.assert_array_equal(a.z, b.z)
            np.testing.assert_array_equal(a.resid_post, b.resid_post)


def test_the_capabilities_take_ablate(tiny) -> None:
    enc, dec, s2s, vit = (tiny[k] for k in ("encoder", "decoder", "encoder-decoder", "vision"))
    heads = [(layer, h) for layer in range(2) for h in range(4)]
    assert enc.fill_mask("the dog bit the [MASK]", ablate=heads) != enc.fill_mask(
        "the dog bit the [MASK]"
    )
    assert dec.next_token("the dog", ablate=heads) != dec.next_token("the dog")
    assert dec.generate("the dog", 3, ablate=[(0, 0)]).text
    assert vit.classify(np.eye(8) * 16, ablate=heads) != vit.classify(np.eye(8) * 16)
    everything = [(s, n, h) for s in model.STACKS for n in range(2) for h in range(4)]
    assert s2s.translate(SENTENCE, ablate=everything).text != s2s.translate(SENTENCE).text or (
        s2s.trace(SENTENCE, ablate=everything).logits != s2s.trace(SENTENCE).logits
    ).any()


def test_an_encoder_decoder_names_the_stack(tiny) -> None:
    m = tiny["encoder-decoder"]
    clean = m.trace(SENTENCE)
    enc = m.trace(SENTENCE, ablate=[("encoder", 1, 0)])
    assert (enc.encoder.layers[1].z[0] == 0).all() and (enc.layers[0].z[0] != 0).any()
    cross = m.trace(SENTENCE, ablate=[("cross", 0, 3)])
    assert (cross.cross_layers[0].z[3] == 0).all()
    np.testing.assert_array_equal(cross.encoder.layers[1].resid_post,
                                  clean.encoder.layers[1].resid_post)  # fmt: skip
    dec = m.trace(SENTENCE, ablate=[("decoder", 1, 1)])
    assert (dec.layers[1].z[1] == 0).all() and (dec.cross_layers[1].z[1] != 0).any()
    with pytest.raises(ValueError, match="name the stack"):
        m.trace(SENTENCE, ablate=[(0, 0)])


def test_batched_runs_equal_one_run_each(tiny) -> None:
    m = tiny["encoder"]
    runs = [RunOptions(), RunOptions(ablate=[(0, 1)]), RunOptions(ablate=[(1, 3), (0, 0)])]
    batched = m.log_probs(SENTENCE, runs, at=[2, 5])
    for n, run in enumerate(runs):
        alone = log_softmax(m.trace_with(SENTENCE, run).logits)[[2, 5]]
        np.testing.assert_allclose(batched[n], alone, atol=1e-4)


# --- the logit lens ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["encoder", "decoder", "encoder-decoder"])
def test_the_lens_last_readout_is_the_logits(tiny, kind: str) -> None:
    m = tiny[kind]
    t = m.trace(SENTENCE)
    pair = (t.encoder.ids, t.ids) if t.encoder is not None else SENTENCE
    lens = m.logit_lens(pair)
    assert lens.shape == (t.n_layers + 1, len(t.tokens), t.logits.shape[1])
    np.testing.assert_allclose(lens[-1], log_softmax(t.logits), atol=1e-4)
    np.testing.assert_allclose(np.exp(lens).sum(-1), 1, atol=1e-4)
    # float32: a readout at one position sums in another order than the whole batch's
    np.testing.assert_allclose(m.logit_lens(pair, at=[1])[:, 0], lens[:, 1], atol=1e-5)


def test_the_lens_first_readout_is_the_input_stream(tiny) -> None:
    m = tiny["decoder"]
    t = m.trace(SENTENCE)
    first = t.layers[0].resid_pre @ m.embedding_matrix().T + m.module.unembed.bias.detach().numpy()
    np.testing.assert_allclose(m.logit_lens(SENTENCE)[0], log_softmax(first), atol=1e-4)


# --- activation patching ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_patching_every_position_at_layer_0_gives_the_source_run(tiny, kind: str) -> None:
    m = tiny[kind]
    source, target = m.trace(OTHER), m.trace(SENTENCE)
    assert len(source.tokens) == len(target.tokens)
    everywhere = [(0, p) for p in range(len(target.tokens))]
    patched = m.patch(OTHER, SENTENCE, at=everywhere)
    np.testing.assert_allclose(patched.logits, source.logits, atol=1e-5)
    assert patched.tokens == target.tokens  # the target's tokens, the source's stream
    for site in model.SITES:
        nothing = m.patch(OTHER, SENTENCE, at=[], site=site)
        np.testing.assert_array_equal(nothing.logits, target.logits)


def test_patching_one_site_writes_the_source_activation_there(tiny) -> None:
    m = tiny["decoder"]
    source = m.trace(OTHER)
    for site in model.SITES:
        patched = m.patch(OTHER, SENTENCE, at=[(1, 3)], site=site)
        np.testing.assert_allclose(getattr(patched.layers[1], site)[3],
                                   getattr(source.layers[1], site)[3], atol=1e-6)  # fmt: skip
        assert patched.options.patch == Patch(OTHER, ((1, 3),), site)


def test_patching_an_encoder_decoder_patches_the_encoder(tiny) -> None:
    m = tiny["encoder-decoder"]
    a, b = m.trace(OTHER), m.trace(SENTENCE)
    everywhere = [(0, p) for p in range(len(b.encoder.tokens))]
    patched = m.patch(OTHER, SENTENCE, at=everywhere)
    np.testing.assert_allclose(patched.logits, a.logits, atol=1e-5)
    np.testing.assert_allclose(patched.encoder.layers[-1].resid_post,
                               a.encoder.layers[-1].resid_post, atol=1e-5)  # fmt: skip


# --- bad input --------------------------------------------------------------------------------


def test_bad_ablations_and_patches_are_clear_errors(tiny) -> None:
    m = tiny["encoder"]
    for bad, said in [
        ([(2, 0)], "layer 2 is out of range: 'encoder' has 2 layers"),
        ([(0, 4)], "head 4 is out of range: 'encoder' has 4 heads"),
        ([(-1, 0)], "out of range"),
        ([(0,)], "not a \\(layer, head\\) pair"),
        ("0,1", "not the text"),
        ([(0.5, 1)], "whole number"),
        ([("encoder", 0, 0)], "one stack"),
    ]:
        with pytest.raises(ValueError, match=said):
            m.trace(SENTENCE, ablate=bad)
    n, short = len(m.trace(SENTENCE).tokens), len(m.trace("the dog bit").tokens)
    with pytest.raises(ValueError, match=f"the source has {short}, the target {n}"):
        m.patch("the dog bit", SENTENCE, at=[(0, 1)])
    with pytest.raises(ValueError, match=f"position {n} is out of range"):
        m.patch(OTHER, SENTENCE, at=[(0, n)])
    with pytest.raises(ValueError, match="site must be one of"):
        m.patch(OTHER, SENTENCE, at=[(0, 1)], site="q")
    with pytest.raises(ValueError, match="'zero' or 'mean'"):
        RunOptions(ablation="half")
    with pytest.raises(ValueError, match="no attention heads"):
        model.load("lstm", "cpu").trace("i go to school", ablate=[(0, 0)])


def test_options_are_frozen_normalized_keys() -> None:
    a = RunOptions(ablate=[(1, 2), (0, 3), (1, 2)])
    assert a.ablate == (("", 0, 3), ("", 1, 2)) and a == RunOptions(ablate=((0, 3), (1, 2)))
    assert hash(a) == hash(RunOptions(ablate=[(0, 3), (1, 2)])) and a != model.CLEAN
    assert a.knocked() == {0: (3,), 1: (2,)} and not a.clean and model.CLEAN.clean
    assert a.describe() == "L1H4, L2H3 knocked out (zero)"
    with pytest.raises(AttributeError):
        a.positions = False  # type: ignore[misc]


# --- attribution ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_integrated_gradients_are_complete(tiny, kind: str) -> None:
    m = tiny[kind]
    t = m.trace(SENTENCE)
    position = len(t.tokens) - 2
    token = int(np.argmax(t.logits[position]))
    got = m.attribute(SENTENCE, position, token)
    assert got.scores.shape == (len(t.tokens),) and got.steps == 64
    assert abs(got.value - log_softmax(t.logits)[position, token]) < 1e-4
    difference = got.value - got.baseline
    assert abs(got.scores.sum() - difference) <= 0.01 * abs(difference)
    gxi = m.attribute(SENTENCE, position, token, method="gradient_x_input")
    assert gxi.scores.shape == (len(t.tokens),) and np.isnan(gxi.baseline)
    with pytest.raises(ValueError, match="method must be one of"):
        m.attribute(SENTENCE, position, token, method="lime")


# --- the Hugging Face adapter -----------------------------------------------------------------

W_O = {  # transformers' own output projection of a layer's attention, written out here
    "bert": lambda m, i: m.module.bert.encoder.layer[i].attention.output.dense,
    "gpt2": lambda m, i: m.module.transformer.h[i].attn.c_proj,
    "llama": lambda m, i: m.module.model.layers[i].self_attn.o_proj,
}


@pytest.mark.parametrize("family", list(W_O))
def test_hf_ablation_equals_a_hook_on_transformers_own_modules(hf, family: str) -> None:
    m = hf[family]
    layer, head, dh = 1, 2, m.d_head

    def zero_the_head(module, args):  # noqa: ANN001, ANN202
        x = args[0].clone()
        x[..., head * dh : (head + 1) * dh] = 0
        return (x,)

    ids = m.encode(SENTENCE).ids
    hook = W_O[family](m, layer).register_forward_pre_hook(zero_the_head)
    try:
        with torch.inference_mode():
            expected = m.module(input_ids=torch.tensor([ids])).logits[0].numpy()
    finally:
        hook.remove()
    t = m.trace(SENTENCE, ablate=[(layer, head)])
    np.testing.assert_allclose(t.logits, expected, atol=1e-5)
    assert (t.layers[layer].z[head] == 0).all()
    assert np.abs(t.logits - m.trace(SENTENCE).logits).max() > 1e-6


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta", "gpt2", "llama"])
def test_hf_lens_patch_and_attribution(hf, family: str) -> None:
    m = hf[family]
    t = m.trace(SENTENCE)
    np.testing.assert_allclose(m.logit_lens(SENTENCE)[-1], log_softmax(t.logits), atol=1e-4)
    source = m.trace(OTHER)
    everywhere = [(0, p) for p in range(len(t.tokens))]
    np.testing.assert_allclose(m.patch(OTHER, SENTENCE, at=everywhere).logits, source.logits,
                               atol=1e-4)  # fmt: skip
    np.testing.assert_array_equal(m.patch(OTHER, SENTENCE, at=[]).logits, t.logits)
    batched = m.log_probs(SENTENCE, [RunOptions(), RunOptions(ablate=[(0, 1)])], at=[3])
    np.testing.assert_allclose(batched[0, 0], log_softmax(t.logits)[3], atol=1e-4)
    ablated = log_softmax(m.trace(SENTENCE, ablate=[(0, 1)]).logits)[3]
    np.testing.assert_allclose(batched[1, 0], ablated, atol=1e-4)
    got = m.attribute(SENTENCE, 3, int(np.argmax(t.logits[3])))
    difference = got.value - got.baseline
    assert abs(got.scores.sum() - difference) <= 0.01 * abs(difference)
    with pytest.raises(ValueError, match="head 9 is out of range"):
        m.trace(SENTENCE, ablate=[(0, 9)])


def test_hf_mean_ablation_and_positions_off_go_through_the_same_hooks(hf) -> None:
    m = hf["gpt2"]
    clean = m.trace(SENTENCE)
    mean = m.trace_with(SENTENCE, RunOptions(ablate=[(0, 3)], ablation="mean"))
    np.testing.assert_allclose(mean.layers[0].z[3], np.tile(clean.layers[0].z[3].mean(0),
                               (len(clean.tokens), 1)), atol=1e-5)  # fmt: skip
    off = m.trace(SENTENCE, positions=False)
    assert not off.positions and not off.positional.any()
    assert m.trace(SENTENCE).positional.any()  # nothing left behind by the run before


def test_a_hf_model_without_a_head_has_no_lens(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from tests.hf_models import save

    m = model.load(save(tmp_path / "bert-base", "bert-base"), device="cpu")
    with pytest.raises(model.Unsupported, match="no output head"):
        m.logit_lens(SENTENCE)
    assert (m.trace(SENTENCE, ablate=[(0, 0)]).layers[0].z[0] == 0).all()
