"""The Vision Transformer page and its input: test digits, misclassified ones, uploads good
and bad (AppTest, with the shipped vit), and the numbers and figures it draws."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

import analysis
import viz
from tests.charts import charts
from tests.charts import figures as drawn_figures
from tests.figures import plotly_figure
from ui.parts.vision import CANVAS_PX, ImageError, decode_image, drawn_digit

ROOT = Path(__file__).resolve().parent.parent


def png(array: np.ndarray, mode: str = "L") -> bytes:
    out = io.BytesIO()
    Image.fromarray(array.astype(np.uint8), mode).save(out, format="PNG")
    return out.getvalue()


def seven(size: int = 64) -> np.ndarray:
    """A dark 7 on white paper."""
    img = np.full((size, size), 255, np.uint8)
    img[8:14, 10:54] = 0  # the bar
    for r in range(14, 58):
        c = 54 - (r - 14) // 2
        img[r, c - 4 : c + 2] = 0  # the stroke
    return img


# --- decoding uploads ---------------------------------------------------------------------------


def test_a_picture_becomes_an_8x8_digit_on_the_0_16_scale() -> None:
    image = decode_image("seven.png", png(seven()))
    assert image.shape == (8, 8) and image.min() >= 0 and image.max() == pytest.approx(16)
    assert image[0].sum() > image[-1, :3].sum(), "the bar is at the top, inverted to ink"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"GIF89a not really", "not a PNG or JPEG"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "not a PNG or JPEG"),
        (png(np.zeros((1, 1))), "seven.png"),
        (png(np.zeros((16, 16, 4)), "RGBA"), "seven.png"),  # fully transparent
    ],
    ids=["empty", "not-an-image", "broken-png", "1x1", "transparent"],
)
def test_a_bad_upload_is_refused_with_a_reason(data: bytes, message: str) -> None:
    with pytest.raises(ImageError, match=message):
        decode_image("seven.png", data)


# --- numbers and figures --------------------------------------------------------------------------


def test_rollout_rows_sum_to_one_and_one_layer_of_identity_is_identity() -> None:
    rng = np.random.default_rng(0)
    stack = rng.random((3, 2, 5, 5))
    stack /= stack.sum(-1, keepdims=True)
    np.testing.assert_allclose(analysis.attention_rollout(stack).sum(-1), 1.0)
    np.testing.assert_allclose(analysis.attention_rollout(np.eye(5)[None, None]), np.eye(5))


def test_patches_and_layout_similarity() -> None:
    image = np.arange(64.0).reshape(8, 8)
    tiles = analysis.patches(image, 2)
    assert tiles.shape == (16, 2, 2) and tiles[1].tolist() == [[2, 3], [10, 11]]
    rows, cols = np.divmod(np.arange(16), 4)
    steps = np.abs(rows[:, None] - rows) + np.abs(cols[:, None] - cols)
    near, far = analysis.layout_similarity(1.0 - steps / 6, 4)
    assert near > far


def test_vision_figures_serialise() -> None:
    image = np.arange(64.0).reshape(8, 8) / 4
    for spec in [
        viz.image_with_patches(image, 2),
        viz.patch_tokens(analysis.patches(image, 2), [f"patch {i}" for i in range(16)]),
        viz.position_similarity_grid(np.eye(16), 4),
        viz.attention_over_image(image, np.full((4, 4), 1 / 16)),
    ]:
        plotly_figure(spec)  # valid by Plotly's schema
        json.loads(viz.to_json(spec))
    with pytest.raises(ValueError):
        viz.position_similarity_grid(np.eye(9), 4)


# --- the page ----------------------------------------------------------------------------


def figures(at: AppTest) -> dict[str, dict]:
    return drawn_figures(at)


def vit_page(**state: object) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "vision.py"), default_timeout=180)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def test_the_page_shows_a_test_digit_its_patches_and_the_prediction() -> None:
    at = vit_page(vit_digit=3)
    assert not at.exception, [e.message for e in at.exception]
    charts = figures(at)
    assert set(charts) == {"vit_image", "vit_classes", "vit_tokens"}, "the first tab only"
    bars = charts["vit_classes"]["data"][0]
    assert abs(sum(bars["x"]) - 1) < 1e-6 and len(bars["x"]) == 10
    assert any("a 3" in c.value for c in at.caption)
    tabs = {"input": {"vit_input", "vit_positions"},  # "Patch + position = input"
            "cls": {"vit_cls", "vit_rollout"}}  # "Where [CLS] looks"; fmt: skip
    for label, keys in tabs.items():
        at.session_state["vision_section"] = label
        assert not at.run().exception
        assert keys <= figures(at).keys() and "vit_tokens" not in figures(at), label
    at.radio(key="vis_layer").set_value(2).run()
    assert "layer 3" in figures(at)["vit_cls"]["layout"]["title"]["text"]


def test_misclassified_images_come_from_the_report() -> None:
    at = vit_page(vit_source="wrong")
    assert not at.exception
    assert (
        "read as" in at.selectbox(key="vit_wrong").value_formatted
        if hasattr(at.selectbox(key="vit_wrong"), "value_formatted")
        else at.selectbox(key="vit_wrong").value is not None
    )


def test_an_upload_is_converted_and_a_bad_one_keeps_the_previous_picture() -> None:
    at = vit_page(vit_source="upload")
    assert not at.exception and any("Upload a picture" in i.value for i in at.info)
    at.file_uploader(key="vit_upload").set_value(("seven.png", png(seven()), "image/png")).run()
    assert not at.exception and not at.error
    assert any("converted to 8x8" in c.value for c in at.caption)
    at.file_uploader(key="vit_upload").set_value(("x.png", b"not a picture", "image/png")).run()
    assert not at.exception
    assert any("not a PNG or JPEG" in e.value and "previous picture is kept" in e.value
               for e in at.error)  # fmt: skip
    assert charts(at), "the previous picture is still drawn"


# --- drawing on the canvas --------------------------------------------------------------------


def canvas(strokes: list[list[tuple[float, float]]], width: int = 20) -> np.ndarray:
    """What the drawing canvas sends back: black strokes on an opaque white RGBA square."""
    from PIL import ImageDraw

    img = Image.new("RGBA", (CANVAS_PX, CANVAS_PX), (255, 255, 255, 255))
    for stroke in strokes:
        ImageDraw.Draw(img).line(stroke, fill=(0, 0, 0, 255), width=width, joint="curve")
    return np.asarray(img)


def ring(cx: float, cy: float, rx: float, ry: float) -> list[tuple[float, float]]:
    return [(cx + rx * np.sin(a), cy - ry * np.cos(a)) for a in np.linspace(0, 2 * np.pi, 40)]


DRAWN = {  # mouse-like strokes the shipped vit reads right (a drawn 7 it reads as a 3)
    "1": [[(112, 30), (112, 194)]],
    "0": [ring(112, 112, 55, 85)],
    "4": [[(140, 30), (50, 140), (180, 140)], [(140, 30), (140, 195)]],
}


def test_an_empty_canvas_is_no_digit_and_a_drawing_becomes_one() -> None:
    assert drawn_digit(None) is None
    assert drawn_digit(canvas([])) is None, "a blank canvas is not a digit"
    one = drawn_digit(canvas(DRAWN["1"]))
    assert one is not None and one.shape == (8, 8) and one.max() == pytest.approx(16)


@pytest.mark.parametrize("digit", list(DRAWN))
def test_the_shipped_vit_reads_drawn_digits(digit: str) -> None:
    import model

    vit = model.load("vit")
    assert vit.classify(drawn_digit(canvas(DRAWN[digit])))[0][0] == digit


def test_the_draw_source_waits_for_a_drawing() -> None:
    at = vit_page(vit_source="draw")
    assert not at.exception, [e.message for e in at.exception]
    assert any("Draw a digit" in i.value for i in at.info)
