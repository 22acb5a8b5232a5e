"""The Vision Transformer page's input: a test digit by class, a misclassified one, a digit
drawn with the mouse (streamlit-drawable-canvas), or an uploaded picture, each converted to
the model's 8x8, 0-16 grey digit."""

from __future__ import annotations

import io

import numpy as np
import streamlit as st

from i18n import N_, _, particle
from model.vit import DigitImageError, to_digit_image
from ui.show import md_escape
from ui.state import MAX_UPLOAD_BYTES

MAX_PIXELS = 4096 * 4096  # larger pictures are refused before they are decoded
SOURCES = {  # id -> its label, shown with _()
    "test": N_("a test image"),
    "wrong": N_("a misclassified one"),
    "draw": N_("draw one"),
    "upload": N_("your own picture"),
}
CANVAS_PX = 224  # the drawing box, in screen pixels; 28 px of it become one of the 8x8 pixels


class ImageError(ValueError):
    """An upload that is not a usable picture; the message says why. It keeps its message
    untranslated (`message`, `values`; a value may itself be such a pair), so the session
    state holds no language: it is drawn in the language of the moment (`said`)."""

    def __init__(self, message: str, **values: object) -> None:
        self.message, self.values = message, values
        super().__init__(str(self))

    def __str__(self) -> str:
        return said(self.message, self.values)


def said(message: str, values: dict) -> str:
    """`message` in the session's language, its values filled in (a value that is a
    (message, values) pair translated the same way)."""
    return _(message, **{k: said(*v) if isinstance(v, tuple) else v for k, v in values.items()})


def decode_image(name: str, data: bytes) -> np.ndarray:
    """The 8x8, 0-16 digit in an uploaded PNG or JPEG, or an ImageError saying what is wrong."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise ImageError(N_("'{name}' is empty."), name=name)
    if len(data) > MAX_UPLOAD_BYTES:
        raise ImageError(N_("'{name}' is {size} MB; the limit is 1 MB."), name=name,
                         size=f"{len(data) / 1024 / 1024:.1f}")  # fmt: skip
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.width * img.height > MAX_PIXELS:
                raise ImageError(N_("'{name}' is {w}x{h} pixels: too large."), name=name,
                                 w=img.width, h=img.height)  # fmt: skip
            img.load()
            pixels = np.asarray(img.convert("RGBA" if "A" in img.getbands() else "L"))
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as err:
        raise ImageError(N_("'{name}' is not a PNG or JPEG picture ({error})."), name=name,
                         error=type(err).__name__) from None  # fmt: skip
    try:
        return to_digit_image(pixels)
    except DigitImageError as err:
        raise ImageError(N_("'{name}': {why}"), name=name, why=(err.message, err.values)) from None
    except ValueError as err:
        raise ImageError(N_("'{name}': {why}"), name=name, why=str(err)) from None


def _on_upload() -> None:
    file = st.session_state.get("vit_upload")
    st.session_state.pop("vit_upload_error", None)
    if file is None:
        return
    try:
        image = decode_image(file.name, file.getvalue())
    except ImageError as err:
        st.session_state["vit_upload_error"] = (err.message, err.values)
        return
    st.session_state["vit_uploaded"] = (file.name, image, file.getvalue())


def drawn_digit(rgba: np.ndarray | None) -> np.ndarray | None:
    """The canvas's RGBA picture as the model's 8x8 digit; None while nothing is drawn."""
    if rgba is None:
        return None
    image = to_digit_image(np.asarray(rgba))
    return image if image.max() > 0 else None


def _draw() -> tuple[np.ndarray, str, None]:
    """A canvas to draw one digit on; stops the page until something is drawn."""
    from streamlit_drawable_canvas import st_canvas

    left, right = st.columns([2, 3])
    with left:
        st.caption(_("Draw in the box below. Its toolbar undoes, redoes and clears."))
        drawn = st_canvas(
            stroke_width=20, stroke_color="#000000", background_color="#ffffff",
            height=CANVAS_PX, width=CANVAS_PX, drawing_mode="freedraw",
            return_image_data=True, key="vit_canvas",
        )  # fmt: skip
    right.caption(_(
        "Draw one digit with the mouse (or a finger), big, filling the box. Your drawing "
        "is turned grey, cropped to the ink, padded to a square and shrunk to 8×8 like the "
        "training digits. The model learned from scanned handwriting, not mouse strokes: "
        "in our tests it reads a drawn 0, 1 and 4 right but takes a drawn 7 for a 3."
    ))
    image = drawn_digit(drawn.image_data)
    if image is None:
        st.info(_("Draw a digit in the white box to see the model read it."), icon="✏️")
        st.stop()
    return image, _("your drawing, converted to 8x8"), None


def source_picker() -> None:
    """Where the image comes from (a test digit, a misclassified one, a drawing, an upload):
    drawn by the page's full run above its body (ui.frame's `controls`), so a new digit
    reruns the body without sending it again; another source reruns the whole page."""
    st.radio(_("Image"), list(SOURCES), format_func=lambda s: _(SOURCES[s]), horizontal=True,
             key="vit_source")  # fmt: skip


def choose_image(
    test_x: np.ndarray, test_y: np.ndarray, wrong: dict[int, tuple[int, int]]
) -> tuple[np.ndarray, str, int | None]:
    """The chosen image [8, 8] (0-16) from the source `source_picker` set, a caption, and
    its test index (None: an upload). `wrong` maps a test index to (true digit, predicted
    digit)."""
    source = st.session_state.get("vit_source", next(iter(SOURCES)))
    if source == "test":
        left = right = st.container(horizontal=True, gap="large")  # one row, one element
        digit = left.selectbox(_("Digit"), range(10), key="vit_digit")
        which = np.flatnonzero(test_y == digit)
        k = right.slider(_("Which of the {n} test images of a {digit}", n=len(which),
                           digit=digit), 1, len(which), 1, key="vit_k")  # fmt: skip
        i = int(which[k - 1])
        return test_x[i], _("test image {i}: a {digit}", i=i, digit=digit), i
    if source == "wrong":
        if not wrong:
            st.info(_("The evaluation report lists no misclassified test image for this "
                      "model."))  # fmt: skip
            st.stop()
        i = st.selectbox(
            _("Misclassified test image"), list(wrong), key="vit_wrong",
            format_func=lambda j: _("#{j}: a {digit} read as {read}", j=j, digit=wrong[j][0],
                                    read=wrong[j][1],
                                    read_by=particle(str(wrong[j][1]), "으로/로")),
        )  # fmt: skip
        return test_x[i], _("test image {i}: a {digit}, read as {read}", i=i,
                            digit=wrong[i][0], read=wrong[i][1],
                            read_by=particle(str(wrong[i][1]), "으로/로")), i  # fmt: skip
    if source == "draw":
        return _draw()
    st.file_uploader(_("A PNG or JPEG of one digit (at most 1 MB)"), type=["png", "jpg", "jpeg"],
                     key="vit_upload", on_change=_on_upload)  # fmt: skip
    if st.session_state.get("vit_upload_error"):
        error = said(*st.session_state["vit_upload_error"])
        if "vit_uploaded" in st.session_state:
            error += " " + _("The previous picture is kept.")
        st.error(md_escape(error), icon="⚠️")
    if "vit_uploaded" not in st.session_state:
        st.info(
            _("Upload a picture of a digit: it is turned grey, cropped to the ink, padded to a "
              "square, shrunk to 8x8 and inverted when dark on light."),
            icon="🖼️",
        )
        st.stop()
    name, image, raw = st.session_state["vit_uploaded"]
    st.image(raw, caption=_("as uploaded"), width=120)
    return image, _("your picture '{name}', converted to 8x8", name=name), None
