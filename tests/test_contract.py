"""The model contract and the catalogue: load() picks the implementation from a checkpoint's
own config; every model says what it can do and does exactly that; the encoder-decoder runs
end to end through load() and trace(); the residual stream adds up; tied embeddings."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

import model
from model import CAPABILITIES, Unsupported
from model.checkpoint import load_checkpoint
from model.tokenizer import BOS_ID, MASK_ID, PAD_ID, UNK_ID
from tests.conftest import save_tiny

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "the dog bit the man near the river"


@pytest.fixture(scope="module")
def tiny_folders(tmp_path_factory, tiny_tokenizer) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    kinds = ("encoder", "decoder", "encoder-decoder")
    return {kind: save_tiny(root / kind, tiny_tokenizer, kind) for kind in kinds}


@pytest.fixture(scope="module")
def seq2seq(tiny_folders):
    return model.load(tiny_folders["encoder-decoder"], device="cpu")


# --- load() and the catalogue ---------------------------------------------------------------


def test_load_picks_the_implementation_from_the_config(tiny_folders) -> None:
    expected = {
        "encoder": ("TransformerLM", {"trace", "fill_mask"}),
        "decoder": ("TransformerLM", {"trace", "next_token", "generate"}),
        "encoder-decoder": ("TransformerSeq2Seq", {"trace", "translate"}),
    }
    for kind, folder in tiny_folders.items():
        m = model.load(folder, device="cpu")
        cls, capabilities = expected[kind]
        assert type(m).__name__ == cls
        assert m.kind == kind and m.name == folder.name and m.device == "cpu"
        assert m.capabilities == capabilities == model.read_info(folder).capabilities


def test_the_catalogue_lists_the_shipped_models_encoders_first() -> None:
    infos = model.catalogue()
    assert list(infos)[:2] == ["mlm", "clm"]
    assert infos["mlm"].kind == "encoder" and "fill_mask" in infos["mlm"].capabilities
    assert infos["clm"].kind == "decoder" and "generate" in infos["clm"].capabilities
    assert infos["mlm"].description == "mlm · masked, BERT-style (encoder)"


def test_a_registered_folder_is_offered_and_loaded_by_name(tiny_folders) -> None:
    model.register("tiny-seq2seq", tiny_folders["encoder-decoder"])
    try:
        assert model.catalogue()["tiny-seq2seq"].kind == "encoder-decoder"
        m = model.load("tiny-seq2seq", device="cpu")
        assert m.name == "tiny-seq2seq" and m.can("translate")
    finally:
        model.unregister("tiny-seq2seq")
    assert "tiny-seq2seq" not in model.catalogue()


def test_unknown_names_and_foreign_folders_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="known: mlm, clm"):
        model.load("no-such-model")
    (tmp_path / "config.json").write_text(json.dumps({"kind": "spaceship"}))
    with pytest.raises(ValueError, match="known kinds"):
        model.load(tmp_path)
    with pytest.raises(ValueError, match="no config.json"):
        model.read_info(tmp_path / "empty")


def test_importing_model_does_not_import_torch() -> None:
    code = (
        "import sys, model; model.catalogue(); "
        "assert 'torch' not in sys.modules, 'torch'; assert 'streamlit' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# --- every capability: there when declared, a clear refusal when not --------------------------

CALLS = {
    "trace": lambda m: m.trace(SOURCE),
    "fill_mask": lambda m: m.fill_mask("the dog bit the [MASK]"),
    "next_token": lambda m: m.next_token("the dog", k=3),
    "generate": lambda m: m.generate("the dog", max_new_tokens=3),
    "translate": lambda m: m.translate(SOURCE),
    "classify": lambda m: m.classify(np.zeros((8, 8))),
}


@pytest.mark.parametrize("kind", ["encoder", "decoder", "encoder-decoder"])
def test_a_model_does_what_it_declares_and_refuses_the_rest(tiny_folders, kind: str) -> None:
    m = model.load(tiny_folders[kind], device="cpu")
    assert set(CALLS) == set(CAPABILITIES)
    for capability, call in CALLS.items():
        if m.can(capability):
            assert call(m) is not None
        else:
            with pytest.raises(Unsupported, match=f"'{m.name}' \\({kind}\\) cannot"):
                call(m)


# --- the encoder-decoder, end to end ---------------------------------------------------------


def test_the_encoder_decoder_traces_encoder_decoder_and_cross_attention(seq2seq) -> None:
    t = seq2seq.trace(SOURCE)
    source = seq2seq.encode(SOURCE)
    assert t.encoder is not None and t.encoder.tokens == source.tokens
    assert not t.encoder.causal and t.causal
    assert t.tokens[0] == "[BOS]" and len(t.layers) == len(t.cross_layers) == 2
    n_src, n_tgt = len(source.ids), len(t.tokens)
    for layer in t.encoder.layers:
        assert layer.attention.shape == (4, n_src, n_src)
    above = np.triu(np.ones((n_tgt, n_tgt), bool), k=1)
    for self_layer, cross in zip(t.layers, t.cross_layers, strict=True):
        assert (self_layer.attention[:, above] == 0).all()  # the decoder only looks left
        assert cross.attention.shape == (4, n_tgt, n_src)  # [H, T_target, T_source]
        np.testing.assert_allclose(cross.attention.sum(-1), 1.0, atol=1e-5)
        scores = cross.q @ cross.k.transpose(0, 2, 1) / math.sqrt(cross.q.shape[-1])
        e = np.exp(scores - scores.max(-1, keepdims=True))
        np.testing.assert_allclose(e / e.sum(-1, keepdims=True), cross.attention, atol=1e-5)
        np.testing.assert_allclose(cross.resid_pre, self_layer.resid_mid)  # one stream
        np.testing.assert_allclose(cross.resid_post, self_layer.resid_post)
    assert t.logits.shape == (n_tgt, seq2seq.cfg.vocab_size)
    assert t.encoder.logits.shape == (n_src, 0)


def test_the_trace_follows_the_greedy_translation(seq2seq) -> None:
    out = seq2seq.translate(SOURCE)
    t = seq2seq.trace(SOURCE)
    assert t.tokens[1:] == out.tokens
    assert len(out.probs) == len(out.tokens) and all(0 < p <= 1 for p in out.probs)
    # each target token is the most likely one, special tokens but [EOS] aside, at the step
    # before it (the trace runs the decoder on the translation: teacher forcing)
    logits = t.logits.copy()
    logits[:, [PAD_ID, UNK_ID, BOS_ID, MASK_ID]] = -np.inf
    predicted = logits.argmax(-1)[: len(out.tokens)]
    assert [seq2seq.tokenizer.id_to_token(int(i)) for i in predicted] == out.tokens


def test_cross_attention_depends_on_the_source(seq2seq) -> None:
    a = seq2seq.trace_pair(SOURCE, "the cat sat")
    b = seq2seq.trace_pair("a cat sat on the warm mat", "the cat sat")
    assert a.tokens == b.tokens
    assert not np.allclose(a.logits, b.logits)
    assert a.cross_layers[0].attention.shape[-1] != b.cross_layers[0].attention.shape[-1]


# --- the residual stream ----------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_the_residual_stream_adds_up(tiny_folders, tiny_tokenizer, tmp_path, norm) -> None:
    m = model.load(save_tiny(tmp_path / norm, tiny_tokenizer, "encoder", norm=norm), "cpu")
    t = m.trace(SOURCE)
    for i, layer in enumerate(t.layers):
        block = m.module.stack.layers[i]
        if norm == "pre":  # x + sublayer(norm(x))
            np.testing.assert_allclose(layer.resid_mid, layer.resid_pre + layer.attn_out, atol=1e-5)
            np.testing.assert_allclose(layer.resid_post, layer.resid_mid + layer.mlp_out, atol=1e-5)
        else:  # norm(x + sublayer(x))
            ln = block.norm1
            mid = F.layer_norm(torch.tensor(layer.resid_pre + layer.attn_out), (32,),
                               ln.weight, ln.bias)  # fmt: skip
            np.testing.assert_allclose(layer.resid_mid, mid.detach().numpy(), atol=1e-5)
        assert i == 0 or np.array_equal(layer.resid_pre, t.layers[i - 1].resid_post)
    stream = t.residual_stream()
    assert stream.shape == (len(t.layers) + 1, len(t.tokens), 32)
    np.testing.assert_allclose(stream[0], t.embeddings + t.positional, atol=1e-6)


# --- tied embeddings --------------------------------------------------------------------------


def test_tied_embeddings_are_one_table_stored_once(tiny_folders) -> None:
    m = model.load(tiny_folders["decoder"], device="cpu")
    assert m.cfg.tie_embeddings
    assert m.module.unembed.weight is m.module.stack.embed.weight
    stored = load_file(str(tiny_folders["decoder"] / "model.safetensors"))
    assert "stack.embed.weight" in stored and "unembed.weight" not in stored
    t = m.trace(SOURCE)  # the input vectors are the table's rows, scaled by sqrt(D)
    table = m.embedding_matrix()
    np.testing.assert_allclose(t.embeddings, table[t.ids] * math.sqrt(32), atol=1e-5)


def test_a_checkpoint_from_before_tying_loads_untied(tiny_folders, tmp_path) -> None:
    folder = tmp_path / "old"
    save_tiny(folder, model.load(tiny_folders["encoder"]).tokenizer, "encoder",
              tie_embeddings=False)  # fmt: skip
    config = json.loads((folder / "config.json").read_text())
    del config["tie_embeddings"]  # as the checkpoints written before the option
    (folder / "config.json").write_text(json.dumps(config))
    module, cfg, _ = load_checkpoint(folder)
    assert not cfg.tie_embeddings
    assert module.unembed.weight is not module.stack.embed.weight
