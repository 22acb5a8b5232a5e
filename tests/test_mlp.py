"""Inside the MLP (issue 57): each layer's hidden neurons (`mlp_post`), its weights
(`Model.mlp_weights`) and its knock-out (`ablate_mlp`), on the shipped mlm and clm, tiny
Hugging Face models (tests/hf_models.py, built here: no downloads) and tiny models of the
other kinds. Every check recomputes: mlp_out from mlp_post and the weights, mlp_post from
the MLP's input, a knock-out against transformers' own modules with a hook of the test's,
the predictions against the trace's logits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import model
from model import RunOptions
from model.examples import MORE
from tests.conftest import save_tiny

SENTENCE = "the dog bit the man near the river bank"
RIVER = MORE[0]  # "I swam across the river to get to the other [MASK]."
PROMPT = "Once upon a"
HF = ("bert", "distilbert", "roberta", "gpt2", "llama")
SHIPPED = ("mlm", "clm")


@pytest.fixture(scope="module")
def shipped() -> dict[str, model.Model]:
    return {name: model.load(name, "cpu") for name in SHIPPED}


@pytest.fixture(scope="module")
def hf(tmp_path_factory) -> dict[str, model.Model]:
    pytest.importorskip("transformers")
    from tests.hf_models import save

    root = tmp_path_factory.mktemp("hf_mlp")
    return {f: model.load(save(root / f, f), device="cpu") for f in HF}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, tiny_tokenizer) -> dict[str, model.Model]:
    root = tmp_path_factory.mktemp("mlp")
    kinds = ("encoder-decoder", "vision", "recurrent")
    return {k: model.load(save_tiny(root / k, tiny_tokenizer, k), device="cpu") for k in kinds}


@pytest.fixture(scope="module")
def models(shipped, hf) -> dict[str, model.Model]:
    return {**shipped, **hf}


ALL = SHIPPED + HF


def text_for(m: model.Model) -> str:
    return RIVER if m.name == "mlm" else PROMPT if m.name == "clm" else SENTENCE


def mlp_input(m: model.Model, layer: model.LayerTrace, i: int) -> np.ndarray:
    """X, what the MLP of layer i reads: the stream after attention (post-norm), or that
    stream through the layer's own norm (pre-norm GPT-2, Llama), recomputed here."""
    x = layer.resid_mid
    norm = {"gpt2": "ln_2", "llama": "post_attention_layernorm"}.get(getattr(m, "model_type", ""))
    if norm is None:
        return x
    with torch.inference_mode():
        return m.stack[i].get_submodule(norm)(torch.from_numpy(x)).numpy()


def activation(m: model.Model, pre: np.ndarray) -> np.ndarray:
    """The MLP's nonlinearity as the model defines it: GELU (GPT-2: its tanh approximation)."""
    tanh = getattr(m, "model_type", "") == "gpt2"
    return F.gelu(torch.from_numpy(pre), approximate="tanh" if tanh else "none").numpy()


def later(t: model.Trace, layer: int) -> list[np.ndarray]:
    """Every activation after layer `layer`'s MLP: its resid_post, all later layers', the
    logits."""
    after = [t.layers[layer].resid_post]
    for rest in t.layers[layer + 1 :]:
        after += [v for v in vars(rest).values() if v is not None]
    return [*after, t.logits]


def log_softmax(x: np.ndarray) -> np.ndarray:
    return torch.log_softmax(torch.tensor(x, dtype=torch.float64), -1).numpy()


# --- the hidden neurons and the weights ------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_mlp_out_is_recomputed_from_mlp_post_and_the_weights(models, name: str) -> None:
    m = models[name]
    t = m.trace(text_for(m))
    for i, layer in enumerate(t.layers):
        w = m.mlp_weights(i)
        d, hidden = layer.mlp_out.shape[1], layer.mlp_post.shape[1]
        assert layer.mlp_post.shape == (len(t.tokens), hidden)
        assert w["w_in"].shape == (d, hidden) and w["b_in"].shape == (hidden,)
        assert w["w_out"].shape == (hidden, d) and w["b_out"].shape == (d,)
        assert all(isinstance(v, np.ndarray) for v in w.values())
        scale = np.abs(layer.mlp_out).max()
        np.testing.assert_allclose(layer.mlp_post @ w["w_out"] + w["b_out"], layer.mlp_out,
                                   atol=1e-5 * max(1.0, scale))  # fmt: skip
        x = mlp_input(m, layer, i)
        pre = x @ w["w_in"] + w["b_in"]
        if "w_gate" in w:  # Llama: SiLU(X W_gate) * (X W_in)
            gate = F.silu(torch.from_numpy(x @ w["w_gate"] + w["b_gate"])).numpy()
            expected = gate * pre
        else:
            expected = activation(m, pre)
        np.testing.assert_allclose(layer.mlp_post, expected, atol=1e-4)


def test_the_shipped_models_mlps_are_gelus_of_width_d_mlp(shipped) -> None:
    for m in shipped.values():
        t = m.trace(text_for(m))
        assert {layer.mlp_post.shape[1] for layer in t.layers} == {m.cfg.d_mlp}
        assert min(layer.mlp_post.min() for layer in t.layers) >= -0.17  # GELU's minimum
        assert m.mlps() == {"": m.cfg.n_layers}


def test_the_other_kinds_record_mlp_post_too(tiny) -> None:
    s2s, vit = tiny["encoder-decoder"], tiny["vision"]
    t = s2s.trace(SENTENCE)
    for layers in (t.layers, t.encoder.layers, t.cross_layers):
        assert all(layer.mlp_post is not None for layer in layers)
    w = s2s.mlp_weights(1)  # the decoder's, as trace.layers
    np.testing.assert_allclose(t.layers[1].mlp_post @ w["w_out"] + w["b_out"], t.layers[1].mlp_out,
                               atol=1e-5)  # fmt: skip
    v = vit.trace(np.eye(8) * 16)
    w = vit.mlp_weights(0)
    np.testing.assert_allclose(v.layers[0].mlp_post @ w["w_out"] + w["b_out"], v.layers[0].mlp_out,
                               atol=1e-5)  # fmt: skip
    assert s2s.mlps() == {"encoder": 2, "decoder": 2} and vit.mlps() == {"": 2}
    assert tiny["recurrent"].mlps() == {}
    with pytest.raises(model.Unsupported, match="cannot show its MLP weights"):
        tiny["recurrent"].mlp_weights(0)


# --- the knock-out ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_a_knocked_out_mlp_adds_zero_and_only_what_follows_changes(models, name: str) -> None:
    m = models[name]
    text = text_for(m)
    clean = m.trace(text)
    n = len(clean.layers)
    knocked = n - 2  # a layer with one after it
    out = m.trace(text, ablate_mlp=[knocked])
    assert out.options == RunOptions(ablate_mlp=[knocked]) and not out.options.clean
    assert (out.layers[knocked].mlp_out == 0).all() and np.abs(clean.layers[knocked].mlp_out).max()
    np.testing.assert_array_equal(out.embeddings, clean.embeddings)
    for before, same in zip(out.layers[:knocked], clean.layers[:knocked], strict=True):
        for field, value in vars(same).items():
            np.testing.assert_array_equal(getattr(before, field), value, err_msg=field)
    own, same = out.layers[knocked], clean.layers[knocked]
    for field in ("resid_pre", "attn_input", "q", "k", "v", "scores", "attention", "z",
                  "attn_out", "resid_mid", "mlp_post"):  # fmt: skip
        np.testing.assert_array_equal(getattr(own, field), getattr(same, field), err_msg=field)
    for changed, was in zip(later(out, knocked), later(clean, knocked), strict=True):
        finite = np.isfinite(was)  # the scores' -inf above the diagonal stay -inf
        assert np.array_equal(finite, np.isfinite(changed))
        assert np.abs(changed[finite] - was[finite]).max() > 1e-7
    # the stream after it is the stream before it, plus nothing (pre-norm) or normed (post)
    if name in ("gpt2", "llama"):
        np.testing.assert_array_equal(own.resid_post, own.resid_mid)


def test_mean_ablation_puts_the_mlps_mean_over_the_positions(shipped) -> None:
    m = shipped["clm"]
    clean = m.trace(PROMPT)
    out = m.trace_with(PROMPT, RunOptions(ablate_mlp=[1], ablation="mean"))
    mean = clean.layers[1].mlp_out.mean(axis=0)
    np.testing.assert_allclose(out.layers[1].mlp_out, np.tile(mean, (len(out.tokens), 1)),
                               atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("name", ["mlm", "gpt2"])
def test_heads_and_mlps_are_knocked_out_together(models, name: str) -> None:
    m = models[name]
    text = text_for(m)
    both = m.trace(text, ablate=[(1, 2)], ablate_mlp=[0, 1])
    assert both.options == RunOptions(ablate=[(1, 2)], ablate_mlp=[1, 0])
    assert (both.layers[1].z[2] == 0).all()
    assert (both.layers[0].mlp_out == 0).all() and (both.layers[1].mlp_out == 0).all()
    heads, mlps = m.trace(text, ablate=[(1, 2)]), m.trace(text, ablate_mlp=[0, 1])
    assert np.abs(both.logits - heads.logits).max() > 1e-6
    assert np.abs(both.logits - mlps.logits).max() > 1e-6
    # one batched pass, one experiment a row, equals one pass each
    runs = [RunOptions(), RunOptions(ablate=[(1, 2)]), RunOptions(ablate_mlp=[1]),
            RunOptions(ablate=[(1, 2)], ablate_mlp=[0, 1])]  # fmt: skip
    batched = m.log_probs(text, runs, at=[1, 3])
    for row, run in enumerate(runs):
        alone = log_softmax(m.trace_with(text, run).logits)[[1, 3]]
        np.testing.assert_allclose(batched[row], alone, atol=1e-4)


def test_the_other_kinds_knock_their_mlps_out(tiny) -> None:
    s2s, vit = tiny["encoder-decoder"], tiny["vision"]
    clean = s2s.trace_pair(SENTENCE, "the dog")
    dec = s2s.trace_pair(SENTENCE, "the dog", options=RunOptions(ablate_mlp=[("decoder", 1)]))
    assert (dec.layers[1].mlp_out == 0).all() and (dec.layers[0].mlp_out != 0).any()
    np.testing.assert_array_equal(dec.encoder.layers[1].resid_post,
                                  clean.encoder.layers[1].resid_post)  # fmt: skip
    enc = s2s.trace_pair(SENTENCE, "the dog", options=RunOptions(ablate_mlp=[("encoder", 0)]))
    assert (enc.encoder.layers[0].mlp_out == 0).all() and (enc.layers[0].mlp_out != 0).any()
    assert s2s.translate(SENTENCE, ablate_mlp=[("encoder", 0), ("encoder", 1)]).text is not None
    with pytest.raises(ValueError, match="name the stack"):
        s2s.trace(SENTENCE, ablate_mlp=[0])
    image = np.eye(8) * 16
    assert (vit.trace(image, ablate_mlp=[1]).layers[1].mlp_out == 0).all()
    assert vit.classify(image, ablate_mlp=[0, 1]) != vit.classify(image)
    with pytest.raises(ValueError, match="has no MLPs to knock out"):
        tiny["recurrent"].trace(SENTENCE, ablate_mlp=[0])


# --- against transformers' own modules ------------------------------------------------------

MLP_OUT = {  # the module whose output is what the MLP adds, as transformers names it
    "bert": lambda m, i: m.module.bert.encoder.layer[i].output.dense,
    "distilbert": lambda m, i: m.module.distilbert.transformer.layer[i].ffn,
    "gpt2": lambda m, i: m.module.transformer.h[i].mlp,
    "llama": lambda m, i: m.module.model.layers[i].mlp,
}


@pytest.mark.parametrize("family", list(MLP_OUT))
def test_hf_knock_out_equals_a_hook_that_zeros_transformers_own_mlp(hf, family: str) -> None:
    m = hf[family]
    ids = m.encode(SENTENCE).ids
    for layer in range(len(m.stack)):
        hook = MLP_OUT[family](m, layer).register_forward_hook(
            lambda module, args, out: torch.zeros_like(out)
        )
        try:
            with torch.inference_mode():
                expected = m.module(input_ids=torch.tensor([ids])).logits[0].numpy()
        finally:
            hook.remove()
        t = m.trace(SENTENCE, ablate_mlp=[layer])
        np.testing.assert_allclose(t.logits, expected, atol=1e-5)
        assert np.abs(t.logits - m.trace(SENTENCE).logits).max() > 1e-6
        assert (t.layers[layer].mlp_out == 0).all()
    np.testing.assert_array_equal(m.trace(SENTENCE).logits, m._logits(ids).numpy())  # no leftovers


def test_llama_gives_its_gate_beside_w_in(hf) -> None:
    w = hf["llama"].mlp_weights(0)
    assert set(w) == {"w_in", "b_in", "w_gate", "b_gate", "w_out", "b_out"}
    assert set(hf["gpt2"].mlp_weights(0)) == {"w_in", "b_in", "w_out", "b_out"}


# --- the predictions --------------------------------------------------------------------------


def masked_top(m: model.Model, t: model.Trace, k: int) -> list[tuple[str, float]]:
    """fill_mask's answer recomputed from a trace: the [MASK] row's softmax without the
    special tokens (and the rows a tokenizer does not name)."""
    mask = m.special_ids()["[MASK]"]
    row = t.logits[list(t.ids).index(mask)].astype(np.float64)
    never = [i for i in m.special_ids().values() if i < len(row)]
    row[never] = -np.inf
    row[len(m.vocabulary()) :] = -np.inf
    p = np.exp(row - row.max())
    p /= p.sum()
    top = np.argsort(-p, kind="stable")[:k]
    return list(zip(m.tokens_of([int(i) for i in top]), p[top], strict=True))


@pytest.mark.parametrize("name", ["mlm", "bert", "roberta"])
def test_fill_mask_with_ablate_mlp_is_the_knocked_out_trace(models, name: str) -> None:
    m = models[name]
    text = RIVER if name == "mlm" else "the dog bit the [MASK]"
    if name == "roberta":
        text = text.replace("[MASK]", "<mask>")
    for ablate_mlp in ([], [0], [0, 1]):
        (got,) = m.fill_mask(text, k=5, ablate_mlp=ablate_mlp)
        want = masked_top(m, m.trace(text, ablate_mlp=ablate_mlp), 5)
        assert [t for t, _ in got] == [t for t, _ in want]
        np.testing.assert_allclose([p for _, p in got], [p for _, p in want], atol=1e-5)
    assert m.fill_mask(text, ablate_mlp=[0, 1]) != m.fill_mask(text)


@pytest.mark.parametrize("name", ["clm", "gpt2", "llama"])
def test_next_token_with_ablate_mlp_is_the_knocked_out_trace(models, name: str) -> None:
    m = models[name]
    text = PROMPT if name == "clm" else "the dog bit"
    ids = m.encode(text).ids
    for ablate_mlp in ([1], [0, 1]):
        got = m.next_token(text, k=5, ablate_mlp=ablate_mlp)
        row = m.trace(text, ablate_mlp=ablate_mlp).logits[-1]
        probs = m.next_distribution(ids, options=RunOptions(ablate_mlp=ablate_mlp))
        assert got[0][0] == m.tokens_of([int(np.argmax(probs))])[0]
        np.testing.assert_allclose(got[0][1], probs.max(), atol=1e-6)
        kept = probs > 0  # the tokens it may predict: the trace's softmax over them
        p = np.exp(row[kept] - row[kept].max())
        np.testing.assert_allclose(probs[kept], p / p.sum(), atol=1e-5)
        assert got != m.next_token(text, k=5)
    greedy = m.generate(text, max_new_tokens=2, temperature=0, ablate_mlp=[0])
    first = m.next_distribution(ids, options=RunOptions(ablate_mlp=[0]))
    assert greedy.ids[0] == int(np.argmax(first))


# --- the options: validated, hashable, old behaviour by default --------------------------------


def test_ablate_mlp_is_normalized_hashable_and_off_by_default() -> None:
    a = RunOptions(ablate_mlp=[2, 0, np.int64(2)])
    assert a.ablate_mlp == (("", 0), ("", 2)) and a == RunOptions(ablate_mlp=(0, 2))
    assert hash(a) == hash(RunOptions(ablate_mlp=[0, 2])) and a != model.CLEAN
    assert RunOptions(ablate_mlp=None) == RunOptions(ablate_mlp=[]) == model.CLEAN
    assert model.CLEAN.clean and not a.clean and a.knocked_mlps() == (0, 2)
    assert RunOptions(ablate_mlp=[("decoder", 1)]).knocked_mlps("decoder") == (1,)
    assert a.describe() == "L1 MLP, L3 MLP knocked out (zero)"
    import ui.cache

    assert ui.cache.key_text(a) != ui.cache.key_text(model.CLEAN)
    assert ui.cache.key_text(a) == ui.cache.key_text(RunOptions(ablate_mlp=[0, 2]))


def test_bad_mlp_knock_outs_are_clear_errors(shipped) -> None:
    m = shipped["mlm"]
    with pytest.raises(ValueError, match="layer 4 is out of range: 'mlm' has 4 layers"):
        m.trace(SENTENCE, ablate_mlp=[4])
    with pytest.raises(ValueError, match="out of range: layers, heads and positions count from 0"):
        RunOptions(ablate_mlp=[-1])
    with pytest.raises(ValueError, match="not the text"):
        RunOptions(ablate_mlp="0")
    with pytest.raises(ValueError, match="not one number"):
        RunOptions(ablate_mlp=1)
    with pytest.raises(ValueError, match="must be a whole number"):
        RunOptions(ablate_mlp=[True])
    with pytest.raises(ValueError, match="not a layer nor a"):
        RunOptions(ablate_mlp=[("cross", 0)])
    with pytest.raises(ValueError, match="has one stack"):
        m.trace(SENTENCE, ablate_mlp=[("encoder", 0)])
    with pytest.raises(ValueError, match="one batched pass needs the same"):
        m.log_probs(SENTENCE, [RunOptions(ablate_mlp=[0]),
                               RunOptions(ablate_mlp=[1], ablation="mean")])  # fmt: skip


def test_a_saved_trace_keeps_mlp_post(shipped, tmp_path: Path) -> None:
    from model.trace import load_npz, save_npz

    t = shipped["clm"].trace(PROMPT)
    save_npz(t, tmp_path / "t.npz")
    back, _ = load_npz(tmp_path / "t.npz")
    for a, b in zip(back.layers, t.layers, strict=True):
        np.testing.assert_array_equal(a.mlp_post, b.mlp_post)


# --- single neurons ---------------------------------------------------------------------------


def top_neuron(t: model.Trace, layer: int) -> int:
    """The neuron of `layer` that fires hardest anywhere in the sentence."""
    return int(np.abs(t.layers[layer].mlp_post).max(axis=0).argmax())


@pytest.mark.parametrize("name", ALL)
def test_a_knocked_out_neuron_is_zero_before_w_out_and_only_what_follows_changes(
    models, name: str
) -> None:
    m = models[name]
    text = text_for(m)
    clean = m.trace(text)
    layer = len(clean.layers) - 2  # a layer with one after it
    n = top_neuron(clean, layer)
    out = m.trace(text, ablate_neurons=[(layer, n)])
    assert out.options == RunOptions(ablate_neurons=[(layer, n)]) and not out.options.clean
    own, same = out.layers[layer], clean.layers[layer]
    assert (own.mlp_post[:, n] == 0).all() and np.abs(same.mlp_post[:, n]).max() > 0
    rest = np.arange(own.mlp_post.shape[1]) != n
    np.testing.assert_array_equal(own.mlp_post[:, rest], same.mlp_post[:, rest])
    w = m.mlp_weights(layer)
    scale = max(1.0, np.abs(own.mlp_out).max())
    np.testing.assert_allclose(own.mlp_out, own.mlp_post @ w["w_out"] + w["b_out"],
                               atol=1e-5 * scale)  # fmt: skip
    # the neuron's own share is gone: the clean mlp_out less its row of w_out
    share = np.outer(same.mlp_post[:, n], w["w_out"][n])
    np.testing.assert_allclose(own.mlp_out, same.mlp_out - share, atol=1e-4 * scale)
    np.testing.assert_array_equal(out.embeddings, clean.embeddings)
    for before, was in zip(out.layers[:layer], clean.layers[:layer], strict=True):
        for field, value in vars(was).items():
            np.testing.assert_array_equal(getattr(before, field), value, err_msg=field)
    for changed, was in zip(later(out, layer), later(clean, layer), strict=True):
        finite = np.isfinite(was)
        assert np.array_equal(finite, np.isfinite(changed))
        assert np.abs(changed[finite] - was[finite]).max() > 1e-7


@pytest.mark.parametrize("name", ["mlm", "clm", "bert", "gpt2", "llama"])
def test_every_neuron_of_a_layer_knocked_out_leaves_b_out(models, name: str) -> None:
    m = models[name]
    text = text_for(m)
    width = m.trace(text).layers[0].mlp_post.shape[1]
    out = m.trace(text, ablate_neurons=[(0, n) for n in range(width)])
    assert (out.layers[0].mlp_post == 0).all()
    b_out = m.mlp_weights(0)["b_out"]
    np.testing.assert_allclose(out.layers[0].mlp_out, np.tile(b_out, (len(out.tokens), 1)),
                               atol=1e-6)  # fmt: skip


def test_mean_ablation_puts_the_neurons_mean_over_the_positions(shipped) -> None:
    m = shipped["clm"]
    clean = m.trace(PROMPT)
    n = top_neuron(clean, 1)
    out = m.trace_with(PROMPT, RunOptions(ablate_neurons=[(1, n)], ablation="mean"))
    np.testing.assert_allclose(out.layers[1].mlp_post[:, n], clean.layers[1].mlp_post[:, n].mean(),
                               atol=1e-6)  # fmt: skip


# the module whose input is mlp_post, as transformers names it (Llama: down_proj)
MLP_DOWN = {
    "bert": lambda m, i: m.module.bert.encoder.layer[i].output.dense,
    "distilbert": lambda m, i: m.module.distilbert.transformer.layer[i].ffn.lin2,
    "gpt2": lambda m, i: m.module.transformer.h[i].mlp.c_proj,
    "llama": lambda m, i: m.module.model.layers[i].mlp.down_proj,
}


@pytest.mark.parametrize("family", list(MLP_DOWN))
def test_hf_neuron_knock_out_equals_a_hook_on_transformers_own_down_projection(
    hf, family: str
) -> None:
    m = hf[family]
    ids = m.encode(SENTENCE).ids
    clean = m.trace(SENTENCE)
    for layer in range(len(m.stack)):
        chosen = [top_neuron(clean, layer), 0]

        def zero(module, args, chosen=chosen):
            x = args[0].clone()
            x[..., chosen] = 0
            return (x, *args[1:])

        hook = MLP_DOWN[family](m, layer).register_forward_pre_hook(zero)
        try:
            with torch.inference_mode():
                expected = m.module(input_ids=torch.tensor([ids])).logits[0].numpy()
        finally:
            hook.remove()
        t = m.trace(SENTENCE, ablate_neurons=[(layer, n) for n in chosen])
        np.testing.assert_allclose(t.logits, expected, atol=1e-5)
        assert np.abs(t.logits - clean.logits).max() > 1e-6
        assert (t.layers[layer].mlp_post[:, chosen] == 0).all()
    np.testing.assert_array_equal(m.trace(SENTENCE).logits, m._logits(ids).numpy())  # no leftovers


@pytest.mark.parametrize("name", ["mlm", "bert"])
def test_fill_mask_with_ablate_neurons_is_the_knocked_out_trace(models, name: str) -> None:
    m = models[name]
    text = RIVER if name == "mlm" else "the dog bit the [MASK]"
    mask = list(m.trace(text).ids).index(m.special_ids()["[MASK]"])
    knocked = [(1, int(np.argsort(-m.trace(text).layers[1].mlp_post[mask])[i])) for i in range(3)]
    (got,) = m.fill_mask(text, k=5, ablate_neurons=knocked)
    want = masked_top(m, m.trace(text, ablate_neurons=knocked), 5)
    assert [t for t, _ in got] == [t for t, _ in want]
    np.testing.assert_allclose([p for _, p in got], [p for _, p in want], atol=1e-5)
    assert got != m.fill_mask(text)[0]


@pytest.mark.parametrize("name", ["clm", "gpt2"])
def test_next_token_and_generate_take_ablate_neurons(models, name: str) -> None:
    m = models[name]
    text = PROMPT if name == "clm" else "the dog bit"
    ids = m.encode(text).ids
    knocked = [(0, n) for n in np.argsort(-m.trace(text).layers[0].mlp_post[-1])[:8]]
    options = RunOptions(ablate_neurons=knocked)
    probs = m.next_distribution(ids, options=options)
    got = m.next_token(text, k=5, ablate_neurons=knocked)
    assert got[0][0] == m.tokens_of([int(np.argmax(probs))])[0]
    np.testing.assert_allclose(got[0][1], probs.max(), atol=1e-6)
    assert got != m.next_token(text, k=5)
    greedy = m.generate(text, max_new_tokens=1, temperature=0, ablate_neurons=knocked)
    assert greedy.ids[0] == int(np.argmax(probs))


def test_neurons_heads_and_mlps_batch_together(shipped) -> None:
    m = shipped["mlm"]
    runs = [RunOptions(), RunOptions(ablate_neurons=[(1, 5)]),
            RunOptions(ablate_neurons=[(0, 3), (1, 7)], ablate=[(1, 2)]),
            RunOptions(ablate_mlp=[0], ablate_neurons=[(2, 9)])]  # fmt: skip
    batched = m.log_probs(RIVER, runs, at=[1, 3])
    for row, run in enumerate(runs):
        alone = log_softmax(m.trace_with(RIVER, run).logits)[[1, 3]]
        np.testing.assert_allclose(batched[row], alone, atol=1e-4)


def test_the_vision_model_knocks_neurons_out_and_the_others_say_they_cannot(tiny) -> None:
    vit, image = tiny["vision"], np.eye(8) * 16
    t = vit.trace(image, ablate_neurons=[(1, 0), (1, 3)])
    assert (t.layers[1].mlp_post[:, [0, 3]] == 0).all()
    with pytest.raises(ValueError, match="cannot knock out single neurons"):
        tiny["encoder-decoder"].trace(SENTENCE, ablate_neurons=[(0, 0)])
    with pytest.raises(ValueError, match="cannot knock out single neurons"):
        tiny["recurrent"].trace(SENTENCE, ablate_neurons=[(0, 0)])


def test_ablate_neurons_is_normalized_hashable_and_off_by_default() -> None:
    a = RunOptions(ablate_neurons=[(2, 5), [0, np.int64(7)], (2, 5)])
    assert a.ablate_neurons == ((0, 7), (2, 5)) and a == RunOptions(ablate_neurons=((0, 7), (2, 5)))
    assert hash(a) == hash(RunOptions(ablate_neurons=[(0, 7), (2, 5)])) and a != model.CLEAN
    assert RunOptions(ablate_neurons=None) == RunOptions(ablate_neurons=[]) == model.CLEAN
    assert model.CLEAN.ablate_neurons == () and not a.clean and a.knocks
    assert a.knocked_neurons() == {0: (7,), 2: (5,)}
    assert a.describe() == "L1 N7, L3 N5 knocked out (zero)"
    import ui.cache

    assert ui.cache.key_text(a) != ui.cache.key_text(model.CLEAN)


def test_bad_neuron_knock_outs_are_clear_errors(shipped, hf) -> None:
    m = shipped["mlm"]
    d_mlp = m.cfg.d_mlp
    with pytest.raises(ValueError, match="layer 4 is out of range: 'mlm' has 4 layers"):
        m.trace(SENTENCE, ablate_neurons=[(4, 0)])
    with pytest.raises(ValueError, match=f"neuron {d_mlp} is out of range: 'mlm' has {d_mlp} "
                                         f"neurons a layer's MLP \\(0-{d_mlp - 1}\\)"):  # fmt: skip
        m.fill_mask(RIVER, ablate_neurons=[(0, d_mlp)])
    gpt2 = hf["gpt2"]
    width = gpt2.mlp_weights(0)["w_out"].shape[0]
    assert gpt2.d_mlp == width
    with pytest.raises(ValueError, match=f"neuron {width} is out of range"):
        gpt2.next_token("the dog", ablate_neurons=[(0, width)])
    with pytest.raises(ValueError, match="count from 0"):
        RunOptions(ablate_neurons=[(0, -1)])
    with pytest.raises(ValueError, match="is not a \\(layer, neuron\\) pair"):
        RunOptions(ablate_neurons=[3])
    with pytest.raises(ValueError, match="must be \\(layer, neuron\\) pairs"):
        RunOptions(ablate_neurons="0")
    with pytest.raises(ValueError, match="must be \\(layer, neuron\\) pairs"):
        RunOptions(ablate_neurons=5)
    with pytest.raises(ValueError, match="must be a whole number"):
        RunOptions(ablate_neurons=[(0, 1.5)])
