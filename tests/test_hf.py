"""The Hugging Face adapter (model/hf.py): tiny random-weight BERT, DistilBERT, RoBERTa,
BERT without a head, GPT-2 and Llama (tests/hf_models.py) saved as safetensors with a
tokenizer built there (no downloads). Their traces must agree with transformers' own output, their
predictions behave, the pages render them, and pickled weights are refused. The packaged
models (requirements-extra.txt) are checked only where they are installed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import model
from analysis.tokens import softmax_rows

transformers = pytest.importorskip("transformers")
from tests.charts import specs  # noqa: E402
from tests.hf_models import FAMILIES, build, save  # noqa: E402

SENTENCE = "the dog bit the man near the river bank"


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """A folder per family, and "deep": a Llama of 14 layers (a real model's pickers)."""
    root = tmp_path_factory.mktemp("hf")
    out = {}
    for family, layers in [(f, 2) for f in FAMILIES] + [("deep", 14)]:
        out[family] = save(root / family, family, layers)
    return out


@pytest.fixture(scope="module")
def loaded(folders) -> dict[str, model.Model]:
    return {family: model.load(folders[family], device="cpu") for family in FAMILIES}


def reference(m: model.Model, ids: list[int]):
    """transformers' own forward pass with output_attentions, on the same ids."""
    with torch.inference_mode():
        return m.module(input_ids=torch.tensor([ids]), output_attentions=True)


# --- the catalogue and loading ------------------------------------------------------------


def test_a_transformers_folder_is_an_encoder_or_a_decoder_with_its_heads(folders) -> None:
    expected = {
        "bert": ("encoder", {"trace", "fill_mask"}),
        "distilbert": ("encoder", {"trace", "fill_mask"}),
        "roberta": ("encoder", {"trace", "fill_mask"}),
        "bert-base": ("encoder", {"trace"}),
        "gpt2": ("decoder", {"trace", "next_token", "generate"}),
        "llama": ("decoder", {"trace", "next_token", "generate"}),
    }
    expected["deep"] = expected["llama"]
    for family, (kind, caps) in expected.items():
        info = model.read_info(folders[family])
        assert (info.kind, set(info.capabilities)) == (kind, caps)
        assert info.hf == ("llama" if family == "deep" else family.removesuffix("-base"))
        assert "Hugging Face" in info.description


def test_the_adapter_loads_eager_and_says_what_it_is(loaded) -> None:
    for m in loaded.values():
        assert type(m).__name__ == "HFModel"
        assert m.module.config._attn_implementation == "eager"
        assert m.capabilities == model.read_info(_folder(m)).capabilities


def _folder(m: model.Model) -> Path:
    return Path(m.module.config._name_or_path)


def test_pickled_weights_only_are_refused(tmp_path) -> None:
    folder = tmp_path / "pickled"
    m = build("bert").eval()
    m.config.save_pretrained(folder)
    torch.save(m.state_dict(), folder / "pytorch_model.bin")
    with pytest.raises(ValueError, match="pickled weights, which can run code"):
        model.load(folder, device="cpu")
    with pytest.raises(ValueError, match="safetensors only"):
        model.register("pickled", folder)


def test_a_booby_trapped_pickle_beside_the_safetensors_never_runs(folders, tmp_path) -> None:
    import pickle
    import shutil

    from tests.test_security import _Payload

    folder = shutil.copytree(folders["gpt2"], tmp_path / "trapped")
    marker = tmp_path / "ran"
    for name in ("pytorch_model.bin", "training_args.bin"):
        (folder / name).write_bytes(pickle.dumps(_Payload(marker)))
    model.load(folder, device="cpu").trace(SENTENCE)
    assert not marker.exists()


def test_an_unsupported_model_type_says_which_ones_are(tmp_path) -> None:
    folder = tmp_path / "t5"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "t5"}))
    with pytest.raises(ValueError, match="adapter reads bert"):
        model.read_info(folder)


def test_models_toml_adds_models_and_keeps_folder_typing_off(tmp_path, folders, monkeypatch):
    toml = tmp_path / "models.toml"
    toml.write_text(f'[models]\ntiny-gpt = "{folders["gpt2"]}"\nmissing = "nowhere"\n')
    monkeypatch.setenv("GLASSBOX_MODELS", str(toml))
    infos = model.catalogue()
    assert infos["tiny-gpt"].kind == "decoder" and "missing" not in infos
    assert not model.registry.settings().allow_any_folder
    toml.write_text("allow_any_folder = true\n")
    assert model.registry.settings().allow_any_folder


# --- the trace against transformers' own output ---------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_the_trace_matches_transformers(loaded, family: str) -> None:
    m = loaded[family]
    t = m.trace(SENTENCE)
    ref = reference(m, [int(i) for i in t.ids])
    assert t.n_layers == 2 and t.n_heads == 4 and t.tokens[t.tokens.index("dog") - 1] == "the"
    n = len(t.tokens)
    for i, layer in enumerate(t.layers):
        own = ref.attentions[i][0].numpy()
        assert np.abs(layer.attention - own).max() < 1e-5
        # softmax(scores + mask) is the model's own attention (scores hold -inf where masked)
        assert np.abs(softmax_rows(layer.scores) - own).max() < 1e-5
        assert layer.q.shape == layer.k.shape == layer.v.shape == layer.z.shape
        assert np.allclose(layer.attention.sum(-1), 1, atol=1e-5)
        if m.causal:
            above = np.triu(np.ones((n, n), dtype=bool), 1)
            assert (layer.attention[:, above] == 0).all()
            assert np.isneginf(layer.scores[:, above]).all()
        # the heads' outputs are attention @ V; the scores are Q Kᵀ / √Dh of the Q and K shown
        assert np.abs(layer.attention @ layer.v - layer.z).max() < 1e-4
        qk = layer.q @ layer.k.transpose(0, 2, 1) / np.sqrt(layer.q.shape[-1])
        finite = np.isfinite(layer.scores)
        assert np.abs(qk[finite] - layer.scores[finite]).max() < 1e-4
    assert np.allclose(t.layers[1].resid_pre, t.layers[0].resid_post)
    if family != "bert-base":
        assert np.abs(t.logits - ref.logits[0].numpy()).max() < 1e-4
    else:
        assert t.logits.shape == (n, 0)
        assert np.allclose(t.layers[-1].resid_post, ref.last_hidden_state[0].numpy(), atol=1e-5)


def test_sessions_tracing_at_once_do_not_mix(loaded) -> None:
    """The hooks write into the tracing thread's recorder only: a trace taken while other
    threads trace and predict with the same model equals one taken alone."""
    from concurrent.futures import ThreadPoolExecutor

    m = loaded["llama"]
    alone = m.trace(SENTENCE)
    with ThreadPoolExecutor(4) as pool:
        others = [pool.submit(m.trace, "the cat sat on the mat") for _ in range(3)]
        others += [pool.submit(m.next_token, "a boy walked to") for _ in range(3)]
        mine = [pool.submit(m.trace, SENTENCE) for _ in range(3)]
        [f.result() for f in others]
    for f in mine:
        t = f.result()
        assert all(np.allclose(a.q, b.q, atol=1e-6) and np.allclose(a.z, b.z, atol=1e-6)
                   for a, b in zip(t.layers, alone.layers, strict=True))  # fmt: skip


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_the_scores_kept_equal_the_scores_recomputed(loaded, family, monkeypatch):
    """Long inputs keep the model's own scores (each softmax's input); short ones, or a
    model without one softmax per layer, recompute Q Kᵀ / √Dh from the hooked Q and K."""
    import model.hf

    m = loaded[family]
    short = m.trace(SENTENCE)  # fewer than KEEP_SCORES_FROM tokens: recomputed
    monkeypatch.setattr(model.hf, "KEEP_SCORES_FROM", 0)
    kept = m.trace(SENTENCE)
    monkeypatch.setattr(model.hf, "SOFTMAX", ())  # no softmax seen: recomputed
    fallback = m.trace(SENTENCE)
    for a, b, c in zip(short.layers, kept.layers, fallback.layers, strict=True):
        assert np.allclose(a.scores, b.scores, atol=1e-5)  # -inf in the same places too
        assert np.array_equal(a.scores, c.scores)
        assert np.abs(softmax_rows(b.scores) - b.attention).max() < 1e-5


def test_pre_norm_residual_stream_adds_up(loaded) -> None:
    for family in ("gpt2", "llama"):
        for layer in loaded[family].trace(SENTENCE).layers:
            assert np.allclose(layer.resid_mid, layer.resid_pre + layer.attn_out, atol=1e-5)
            assert np.allclose(layer.resid_post, layer.resid_mid + layer.mlp_out, atol=1e-5)


def test_positions_learned_or_rotary(loaded) -> None:
    bert, llama = loaded["bert"].trace(SENTENCE), loaded["llama"].trace(SENTENCE)
    assert np.abs(bert.positional).max() > 0 and loaded["bert"].positional == "learned"
    assert not llama.positional.any() and loaded["llama"].positional == "rotary"
    assert any("Rotary" in note for note in loaded["llama"].notes)
    off = loaded["gpt2"].trace(SENTENCE, positions=False)
    assert not off.positional.any() and not off.positions


def test_attention_weights_recompute_q_k_v(loaded) -> None:
    """x @ W_Q + b_Q gives the traced Q (rotary aside: Llama's V still matches)."""
    for family in ("bert", "gpt2", "llama"):
        t, m = loaded[family].trace(SENTENCE), loaded[family]
        w = m.attention_weights(0)
        x = t.layers[0].attn_input
        names = ("v",) if family == "llama" else ("q", "k", "v")
        for name in names:
            got = np.einsum("td,hde->hte", x, w[f"w_{name}"]) + w[f"b_{name}"][:, None]
            assert np.abs(got - getattr(t.layers[0], name)).max() < 1e-4
        assert w["w_o"].shape == (32, 32)


# --- predictions ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta"])
def test_fill_mask_ranks_tokens_for_each_mask(loaded, family: str) -> None:
    """[MASK] typed in the text is the tokenizer's own mask token (RoBERTa's <mask>), and
    is shown as [MASK]."""
    m = loaded[family]
    ranked = m.fill_mask("the dog [MASK] the man near the [MASK] bank", k=3)
    assert len(ranked) == 2 and all(len(r) == 3 for r in ranked)
    never = {*m.tokenizer.all_special_tokens, "[MASK]"}  # special tokens are not guessed
    assert not never & {tok for r in ranked for tok, _ in r}
    t = m.trace("the [MASK] sat")
    assert t.tokens[2] == "[MASK]" and t.ids[2] == m.special_ids()["[MASK]"]
    with pytest.raises(model.Unsupported):
        loaded["bert-base"].fill_mask("the [MASK] sat")


def test_next_token_and_seeded_generate(loaded) -> None:
    for family in ("gpt2", "llama"):
        m = loaded[family]
        top = m.next_token("the dog", k=5)
        assert len(top) == 5 and top[0][1] >= top[-1][1]
        assert m.next_token("the dog", k=3, temperature=0)[0][1] == 1.0
        a, b = (m.generate("the dog", max_new_tokens=4, seed=3) for _ in range(2))
        assert a.ids == b.ids and 1 <= len(a.ids) <= 4 and a.text.startswith("the dog")
        probs = m.next_distribution(m.encode("the dog").ids)
        assert probs.shape == (len(m.vocabulary()),) and abs(probs.sum() - 1) < 1e-9
    with pytest.raises(model.Unsupported):
        loaded["bert"].next_token("the dog")


def test_long_text_is_cut_to_the_context(loaded) -> None:
    t = loaded["gpt2"].trace(" ".join(["the dog"] * 50))
    assert t.truncated and len(t.tokens) == loaded["gpt2"].max_len == 64


# --- pages ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registered(folders):
    names = {fam: model.register(f"hf-{fam}", folder).name for fam, folder in folders.items()}
    yield names
    for name in names.values():
        model.unregister(name)


@pytest.mark.parametrize(
    ("page", "family"),
    [("tokens", "bert-base"), ("attention", "llama"), ("masked", "bert"), ("causal", "gpt2"),
     ("positional", "llama"), ("attention", "deep"), ("masked", "roberta")],
)  # fmt: skip
def test_pages_render_hf_models(registered, page: str, family: str) -> None:
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "pages" / f"{page}.py"), default_timeout=60)
    at.session_state["sentence"] = SENTENCE
    at.session_state["model"] = registered[family]
    at.session_state["att_grid_open"] = True  # the attention page's grid, drawn when open
    at.session_state["positional_section"] = "sum"  # Embedding + position: a tab with the tokens
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="model").value == registered[family]
    text = specs(at)
    assert '"river"' in text
    if family == "deep" and page == "attention":  # 14 layers: a slider, the grid 6 at a time
        assert at.select_slider(key="att_layer").value == 0
        assert at.selectbox(key="att_summary").value == "spread"
        assert '"L13 H1"' not in text and '"L1 H1"' in text
        at.segmented_control(key="att_grid_layers").set_value(2).run()  # layers 13-14
        assert not at.exception
        text = specs(at)
        assert '"L13 H1"' in text and '"L1 H1"' not in text
    if page == "masked":  # it starts on a word, never on [CLS], [SEP], <s> or </s>
        assert at.multiselect(key="mask_tokens").value == [9]  # "bank"
    if family == "llama":
        assert any("Rotary" in c.value for c in at.caption), "the page says so"


def test_the_folder_box_appears_only_where_models_toml_allows_it(folders, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parent.parent
    toml = tmp_path / "models.toml"
    toml.write_text("allow_any_folder = false\n")
    monkeypatch.setenv("GLASSBOX_MODELS", str(toml))
    at = AppTest.from_file(str(root / "pages" / "tokens.py"), default_timeout=60).run()
    assert not at.exception and not at.text_input
    toml.write_text("allow_any_folder = true\n")
    at = AppTest.from_file(str(root / "pages" / "tokens.py"), default_timeout=60).run()
    at.text_input(key="w_folder").input(str(tmp_path / "nothing")).run()
    assert "not a model folder" in at.error[0].value
    at.text_input(key="w_folder").input(str(folders["bert-base"])).run()
    assert not at.exception and at.session_state["model"] == "bert-base"
    model.unregister("bert-base")


# --- the packaged models, where installed ---------------------------------------------------


def test_packaged_models_are_offered_when_installed() -> None:
    found = model.registry.packaged()
    infos = model.catalogue()
    for name in found:
        assert infos[name].hf
    if "minilm" in found:
        assert infos["minilm"].capabilities == {"trace"}
    if "smollm2" in found:
        assert infos["smollm2"].kind == "decoder" and infos["smollm2"].hf == "gguf"
