"""The Vision Transformer (model/vit.py): patches as tokens, the trace, classify, the image
conversion, the contract, the training helpers and, when shipped, the trained digits model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import model
from model import CAPABILITIES, Unsupported
from model.vit import (
    VisionConfig,
    VisionModel,
    VisionTransformer,
    patchify,
    save_vit,
    to_digit_image,
)
from training.vit import load_digits_split, scores, shift, train

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "assets" / "models" / "vit"
REPORT = ROOT / "assets" / "models" / "vit_evaluation.json"
TINY = VisionConfig(d_model=16, n_heads=2, n_layers=2, d_mlp=32, dropout=0.0)
TOKENS = ["[CLS]"] + [f"patch {r},{c}" for r in range(4) for c in range(4)]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def a_digit(seed: int = 0) -> np.ndarray:
    """A random 8x8 image on the 0-16 scale, dark border (the model is untrained: any image
    will do; the border keeps to_digit_image from reading it as dark ink on light paper)."""
    image = np.zeros((8, 8))
    image[1:-1, 1:-1] = np.random.default_rng(seed).integers(0, 17, (6, 6))
    return image


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    return save_vit(VisionTransformer(TINY).eval(), tmp_path_factory.mktemp("vit") / "tiny-vit")


@pytest.fixture(scope="module")
def vit(folder) -> VisionModel:
    return model.load(folder, device="cpu")


# --- the model and its trace -------------------------------------------------------------------


def test_load_gives_a_vision_model_that_knows_its_capabilities(vit, folder) -> None:
    assert isinstance(vit, VisionModel)
    assert vit.kind == "vision" and vit.name == "tiny-vit" and vit.device == "cpu"
    assert vit.capabilities == {"trace", "classify"} == model.read_info(folder).capabilities
    assert vit.max_len == 17 and vit.positional == "learned"
    assert json.loads((folder / "config.json").read_text())["kind"] == "vision"


def test_the_trace_has_cls_and_sixteen_patches(vit) -> None:
    image = a_digit()
    t = vit.trace(image)
    d, h = TINY.d_model, TINY.n_heads
    assert t.tokens == TOKENS
    np.testing.assert_array_equal(t.ids, np.arange(17))
    assert t.embeddings.shape == t.positional.shape == (17, d)
    assert t.logits.shape == (17, 10)
    assert not t.causal and not t.truncated and t.n_input_tokens == 17
    np.testing.assert_array_equal(t.image, image)
    assert len(t.layers) == TINY.n_layers and t.n_heads == h
    for layer in t.layers:
        assert layer.q.shape == layer.k.shape == layer.v.shape == layer.z.shape == (h, 17, d // h)
        assert layer.scores.shape == layer.attention.shape == (h, 17, 17)
        for name in ("resid_pre", "attn_input", "attn_out", "resid_mid", "mlp_out", "resid_post"):
            assert getattr(layer, name).shape == (17, d), name
    assert t.residual_stream().shape == (TINY.n_layers + 1, 17, d)


def test_the_embeddings_are_the_cls_vector_and_the_patches(vit) -> None:
    image = a_digit(1)
    t = vit.trace(image)
    module = vit.module
    np.testing.assert_allclose(t.embeddings[0], module.cls.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(t.positional, module.pos_embed.detach().numpy(), atol=1e-6)
    w, b = module.patch_embed.weight.detach().numpy(), module.patch_embed.bias.detach().numpy()
    top_left = image[:2, :2].reshape(4) / 16  # "patch 0,0": rows 0-1, columns 0-1
    right = image[:2, 6:].reshape(4) / 16  # "patch 0,3": the top row's last patch
    bottom_right = image[6:, 6:].reshape(4) / 16  # "patch 3,3"
    np.testing.assert_allclose(t.embeddings[1], w @ top_left + b, atol=1e-5)
    np.testing.assert_allclose(t.embeddings[4], w @ right + b, atol=1e-5)
    np.testing.assert_allclose(t.embeddings[16], w @ bottom_right + b, atol=1e-5)
    np.testing.assert_allclose(t.residual_stream()[0], t.embeddings + t.positional, atol=1e-6)


def test_patchify_reads_row_by_row() -> None:
    image = torch.arange(64.0).reshape(1, 8, 8)
    patches = patchify(image, 2)  # (1, 16, 4)
    assert patches.shape == (1, 16, 4)
    assert patches[0, 0].tolist() == [0, 1, 8, 9]
    assert patches[0, 1].tolist() == [2, 3, 10, 11]  # patch 0,1: the next one to the right
    assert patches[0, 4].tolist() == [16, 17, 24, 25]  # patch 1,0: the next row


def test_attention_rows_sum_to_one_and_follow_from_q_and_k(vit) -> None:
    t = vit.trace(a_digit(2))
    for layer in t.layers:
        scores = layer.q @ layer.k.transpose(0, 2, 1) / math.sqrt(layer.q.shape[-1])
        np.testing.assert_allclose(layer.scores, scores, atol=1e-5)
        np.testing.assert_allclose(softmax(scores), layer.attention, atol=1e-5)
        np.testing.assert_allclose(layer.attention.sum(-1), 1.0, atol=1e-5)
        np.testing.assert_allclose(layer.z, layer.attention @ layer.v, atol=1e-5)
        assert (layer.attention > 0).all()  # no mask: every patch sees every patch


def test_classify_ranks_the_ten_digits(vit) -> None:
    ranked = vit.classify(a_digit(3))
    labels, probs = zip(*ranked, strict=True)
    assert sorted(labels) == [str(d) for d in range(10)]
    assert math.isclose(sum(probs), 1.0, abs_tol=1e-5)
    assert list(probs) == sorted(probs, reverse=True)


def test_the_traced_cls_logits_are_the_fast_path(vit) -> None:
    images = np.stack([a_digit(s) for s in range(4)])
    fast = vit.probabilities(images)  # [4, 10]
    for image, probs in zip(images, fast, strict=True):
        traced = softmax(vit.trace(image).logits[0])
        np.testing.assert_allclose(traced, probs, atol=1e-5)
        ranked = dict(vit.classify(image))
        np.testing.assert_allclose([ranked[str(d)] for d in range(10)], probs, atol=1e-6)


def test_positions_off_show_zeros_and_change_the_pass(vit) -> None:
    image = a_digit(4)
    off = vit.trace(image, positions=False)
    assert not off.positions and not off.positional.any()
    assert not np.allclose(off.logits, vit.trace(image).logits)


def test_the_model_does_what_it_declares_and_refuses_the_rest(vit) -> None:
    calls = {
        "trace": lambda m: m.trace(np.zeros((8, 8))),
        "fill_mask": lambda m: m.fill_mask("the dog bit the [MASK]"),
        "next_token": lambda m: m.next_token("the dog", k=3),
        "generate": lambda m: m.generate("the dog", max_new_tokens=3),
        "translate": lambda m: m.translate("the dog"),
        "classify": lambda m: m.classify(np.zeros((8, 8))),
    }
    assert set(calls) == set(CAPABILITIES)
    for capability, call in calls.items():
        if vit.can(capability):
            assert call(vit) is not None
        else:
            with pytest.raises(Unsupported, match="'tiny-vit' \\(vision\\) cannot"):
                call(vit)
    for helper in (vit.vocabulary, vit.embedding_matrix, lambda: vit.trace_ids([1, 2])):
        with pytest.raises(Unsupported):
            helper()


def test_a_registered_vision_folder_is_in_the_catalogue(folder) -> None:
    model.register("tiny-vit-registered", folder)
    try:
        info = model.catalogue()["tiny-vit-registered"]
        assert info.kind == "vision" and info.capabilities == {"trace", "classify"}
        assert info.description == "tiny-vit-registered · Vision Transformer (digits)"
    finally:
        model.unregister("tiny-vit-registered")


def test_a_checkpoint_round_trips_and_refuses_a_mismatch(vit, tmp_path) -> None:
    again = VisionModel.from_folder(save_vit(vit.module, tmp_path / "copy"), "copy", "cpu")
    image = a_digit(5)
    np.testing.assert_array_equal(again.trace(image).logits, vit.trace(image).logits)
    config = json.loads((tmp_path / "copy" / "config.json").read_text())
    (tmp_path / "copy" / "config.json").write_text(json.dumps({**config, "d_model": 32}))
    with pytest.raises(RuntimeError, match="size mismatch"):
        VisionModel.from_folder(tmp_path / "copy", "copy", "cpu")
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        VisionModel.from_folder(tmp_path, "empty", "cpu")


# --- to_digit_image ------------------------------------------------------------------------------


def dark_one_on_white(size: int = 16) -> np.ndarray:
    """A 0-255 uint8 picture: a black vertical bar (a "1") on white paper."""
    image = np.full((size, size), 255, np.uint8)
    image[2:-2, size // 2 - 1 : size // 2 + 1] = 0
    return image


def test_a_dark_digit_on_light_paper_becomes_light_on_dark_8x8() -> None:
    out = to_digit_image(dark_one_on_white())
    assert out.shape == (8, 8) and out.dtype == np.float64
    assert out.max() == pytest.approx(16.0) and out.min() == 0.0
    assert out[:, 0].sum() == 0 and out[:, -1].sum() == 0  # the border is background
    assert (out.sum(axis=0).argmax()) in (3, 4)  # the bar, centred
    assert (out.sum(axis=1) > 0).all()  # cropped to the ink: it spans every row


def test_an_rgba_drawing_on_a_transparent_canvas_reads_like_grey() -> None:
    grey = dark_one_on_white(32)
    rgba = np.zeros((32, 32, 4), np.uint8)  # transparent black everywhere ...
    rgba[grey == 0, 3] = 255  # ... but the stroke: opaque black
    np.testing.assert_allclose(to_digit_image(rgba), to_digit_image(grey), atol=1e-9)
    rgb = np.repeat(grey[..., None], 3, axis=2)
    np.testing.assert_allclose(to_digit_image(rgb), to_digit_image(grey), atol=1e-9)


def test_scales_and_sizes() -> None:
    digit = load_digits_split().test_x[0].astype(float)
    np.testing.assert_array_equal(to_digit_image(digit), digit)  # the model's own input
    np.testing.assert_allclose(to_digit_image(digit / 16), digit, atol=1e-9)  # 0-1 scale
    big = np.kron(digit, np.ones((4, 4))) * 255 / 16  # 32x32, 0-255 as floats
    assert to_digit_image(big).shape == (8, 8)
    tiny = np.array([[0, 1, 0], [0, 1, 0], [0, 1, 0]], float)  # smaller than 8x8
    out = to_digit_image(tiny)
    assert out.shape == (8, 8) and out.max() == pytest.approx(16.0)
    assert not to_digit_image(np.zeros((20, 20))).any()  # blank in, blank out


def test_a_pil_image_is_read_when_pillow_is_there() -> None:
    image_module = pytest.importorskip("PIL.Image")
    picture = image_module.fromarray(dark_one_on_white(24)).convert("RGB")
    np.testing.assert_allclose(to_digit_image(picture), to_digit_image(dark_one_on_white(24)))


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (np.zeros((0, 0)), "empty"),
        (np.zeros((1, 1)), "too small"),
        (np.zeros((1, 30)), "too small"),
        (np.zeros((10, 10, 4)), "fully transparent"),
        (np.zeros(64), "not an image"),
        (np.zeros((2, 8, 8, 3)), "not an image"),
        (np.zeros((8, 8, 5)), "not an image"),
        ("a seven", "not an image"),
        (None, "not an image"),
        (np.full((8, 8), np.nan), "finite"),
        (-np.ones((8, 8)), "negative"),
    ],
    ids=["empty", "1x1", "1-row", "transparent", "1-D", "4-D", "5-channels", "str", "None",
         "nan", "negative"],  # fmt: skip
)
def test_bad_images_are_clear_errors(vit, bad, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_digit_image(bad)
    with pytest.raises(ValueError, match=message):
        vit.classify(bad)


# --- training and evaluation helpers -------------------------------------------------------------


def test_the_split_is_the_fixed_one() -> None:
    data = load_digits_split()
    assert len(data.test_x) == 360 and data.test_x.shape[1:] == (8, 8)
    assert len(data.train_x) + len(data.valid_x) == 1797 - 360
    assert np.bincount(data.test_y).min() >= 35  # stratified: every digit about 36 times
    again = load_digits_split()
    np.testing.assert_array_equal(again.valid_y, data.valid_y)


def test_shift_moves_an_image_by_at_most_one_pixel() -> None:
    images = torch.zeros(64, 8, 8)
    images[:, 3, 4] = 1.0
    moved = shift(images, torch.Generator().manual_seed(0))
    assert moved.shape == images.shape and (moved.sum((1, 2)) == 1).all()
    rows, cols = moved.nonzero()[:, 1], moved.nonzero()[:, 2]
    assert set(rows.tolist()) == {2, 3, 4} and set(cols.tolist()) == {3, 4, 5}


def test_a_short_training_run_writes_a_loadable_checkpoint(tmp_path) -> None:
    data = load_digits_split()
    small = type(data)(data.train_x[:256], data.train_y[:256], data.valid_x[:64],
                       data.valid_y[:64], data.test_x, data.test_y)  # fmt: skip
    _, facts = train(TINY, epochs=3, data=small, out=tmp_path / "run", device="cpu", progress=False)
    assert facts["epochs"] == 3 and 1 <= facts["best_epoch"] <= 3 and facts["steps"] == 12
    history = [h["train_loss"] for h in facts["history"]]
    assert history[-1] < history[0]
    stored = json.loads((tmp_path / "run" / "training.json").read_text())
    assert stored["best_epoch"] == facts["best_epoch"] and stored["device"] == "cpu"
    assert model.load(tmp_path / "run", "cpu").classify(data.test_x[0])[0][1] > 0


def test_scores_count_and_place_the_errors() -> None:
    truth, predicted = np.array([1, 2, 3, 3]), np.array([1, 2, 3, 8])
    s = scores(predicted, truth)
    assert s["accuracy"] == 0.75 and s["errors"] == 1
    assert s["confusion"][3][8] == 1 and sum(map(sum, s["confusion"])) == 4
    assert s["misclassified"] == {"index": [3], "true": [3], "predicted": [8]}


# --- the shipped model ---------------------------------------------------------------------------


@pytest.mark.skipif(not (SHIPPED / "config.json").is_file(), reason="no shipped ViT")
def test_the_shipped_vit_agrees_with_its_evaluation_report() -> None:
    report = json.loads(REPORT.read_text())["models"]
    vit = model.load("vit", device="cpu")
    assert vit.kind == "vision" and report["vit"]["accuracy"] >= 0.98
    assert report["vit"]["accuracy"] >= max(m["accuracy"] for m in report.values())
    data = load_digits_split()
    errors = report["vit"]["misclassified"]
    wrong = dict(zip(errors["index"], errors["predicted"], strict=True))
    few = sorted(set(range(0, 360, 9)) | set(wrong))  # 40 test images and every error
    predicted = vit.probabilities(data.test_x[few]).argmax(-1)
    for i, p in zip(few, predicted, strict=True):
        assert p == wrong.get(i, data.test_y[i]), i
    assert vit.classify(data.test_x[few[0]])[0][0] == str(predicted[0])
