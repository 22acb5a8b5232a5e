"""Reading the MLP (issue 57): `Model.unembedding()` and `Model.read_out()` on the shipped
mlm and clm and tiny Hugging Face models (built here), and analysis/mlp.py's arithmetic,
each recomputed another way: the logits from the last stream and W_U, the direct logit
effect as a loop of dot products, the knock-out effects from fill_mask itself."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import model
from analysis.mlp import direct_logit_effect, mlp_effects, most_harmful, pushes, top_neurons
from model import RunOptions
from model.examples import MORE

RIVER = MORE[0]  # "I swam across the river to get to the other [MASK]."
HF = ("bert", "distilbert", "roberta", "gpt2", "llama")
# where each family keeps its last output matrix, as transformers names it
HEAD = {"bert": "cls.predictions.decoder", "distilbert": "vocab_projector",
        "roberta": "lm_head.decoder", "gpt2": "lm_head", "llama": "lm_head"}  # fmt: skip


@pytest.fixture(scope="module")
def shipped() -> dict[str, model.Model]:
    return {name: model.load(name, "cpu") for name in ("mlm", "clm")}


@pytest.fixture(scope="module")
def hf(tmp_path_factory) -> dict[str, model.Model]:
    pytest.importorskip("transformers")
    from tests.hf_models import save

    root = tmp_path_factory.mktemp("hf_reading")
    return {f: model.load(save(root / f, f), device="cpu") for f in HF}


def log_softmax(x: np.ndarray) -> np.ndarray:
    return torch.log_softmax(torch.tensor(x, dtype=torch.float64), -1).numpy()


def test_our_unembedding_gives_the_logits_from_the_last_stream(shipped) -> None:
    for m in shipped.values():  # post-norm: the last resid_post is what W_U reads
        t = m.trace(RIVER)
        w_u = m.unembedding()
        assert w_u.shape == (m.cfg.d_model, m.cfg.vocab_size)
        bias = m.module.unembed.bias.detach().numpy()
        np.testing.assert_allclose(t.layers[-1].resid_post @ w_u + bias, t.logits, atol=1e-4)
        tied = m.embedding_matrix().T  # tie_embeddings: the same table
        np.testing.assert_array_equal(w_u, tied)


def test_read_out_of_the_last_stream_is_the_models_own_output(shipped, hf) -> None:
    for m in [*shipped.values(), *hf.values()]:
        t = m.trace(RIVER)
        got = m.read_out(t.layers[-1].resid_post)
        np.testing.assert_allclose(got, log_softmax(t.logits), atol=2e-4)
        lens = m.logit_lens(RIVER)  # the lens's readout of a middle layer, the same way
        np.testing.assert_allclose(m.read_out(t.layers[0].resid_post), lens[1], atol=2e-4)


def test_an_mlps_output_read_alone_is_its_row_through_w_u(shipped) -> None:
    m = shipped["mlm"]  # post-norm: no final norm between mlp_out and W_U
    t = m.trace(RIVER)
    row = t.layers[2].mlp_out[[t.tokens.index("[MASK]")]]
    bias = m.module.unembed.bias.detach().numpy()
    np.testing.assert_allclose(m.read_out(row), log_softmax(row @ m.unembedding() + bias),
                               atol=1e-4)  # fmt: skip


def test_the_hf_unembedding_is_transformers_output_matrix(hf) -> None:
    for family, m in hf.items():
        w = m.module.get_submodule(HEAD[family]).weight.detach().numpy()
        np.testing.assert_array_equal(m.unembedding(), w.T)
        assert m.unembedding().shape[0] == m.trace(RIVER).layers[0].mlp_out.shape[1]


def test_the_direct_logit_effect_is_w_out_rows_times_w_u(shipped) -> None:
    m = shipped["mlm"]
    w_out, w_u = m.mlp_weights(3)["w_out"], m.unembedding()
    t = m.trace(RIVER)
    top = top_neurons(t.layers[3].mlp_post[t.tokens.index("[MASK]")], 3)
    neurons = [n for n, _a in top]
    effect = direct_logit_effect(w_out, w_u, neurons)
    for row, n in enumerate(neurons):  # a loop of dot products, token by token
        for token in (0, 17, m.vocabulary().index("bank"), w_u.shape[1] - 1):
            expected = sum(float(w_out[n, d]) * float(w_u[d, token]) for d in range(w_u.shape[0]))
            assert effect[row, token] == pytest.approx(expected, rel=1e-6, abs=1e-9)
    # the top neurons are the highest activations, highest first
    acts = t.layers[3].mlp_post[t.tokens.index("[MASK]")]
    assert [a for _n, a in top] == sorted(acts, reverse=True)[:3]


def test_pushes_ranks_and_leaves_specials_out() -> None:
    effect = np.array([5.0, -1.0, 3.0, -4.0, 0.5, 9.0])
    got = pushes(effect, k=2, never=[5])
    assert got.up == [(0, 5.0), (2, 3.0)] and got.down == [(3, -4.0), (1, -1.0)]


def test_the_mlp_knockout_effects_are_fill_masks_own(shipped) -> None:
    m = shipped["mlm"]
    ids = m.encode(RIVER).ids
    at, bank = ids.index(m.special_ids()["[MASK]"]), m.vocabulary().index("bank")
    runs = [RunOptions(), *(RunOptions(ablate_mlp=[layer]) for layer in range(4))]
    moved, clean = mlp_effects(m.log_probs(ids, runs, [at]), (bank,))

    def p_bank(layers: list[int]) -> float:  # fill_mask's probability of "bank"
        return dict(m.fill_mask(RIVER, k=8000, ablate_mlp=layers)[0]).get("bank", 0.0)

    assert np.exp(clean) == pytest.approx(p_bank([]), rel=1e-4)
    direct = [np.log(p_bank([layer])) - np.log(p_bank([])) for layer in range(4)]
    np.testing.assert_allclose(moved, direct, atol=1e-4)
    assert most_harmful(moved) == int(np.argmin(direct))
