"""Vision. The Vision Transformer: an image cut into patches, each patch a token."""

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import _
from model import Trace
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts.interventions.pages import KEPT, vision_knockout
from ui.parts.vision import choose_image, source_picker
from ui.show import (
    download_csv,
    download_json,
    keep_state,
    layer_head,
    lazy_sections,
    numbers,
)
from ui.view import Opened

INTRO = _(
    "A Vision Transformer reads an image the way a text Transformer reads a sentence: cut "
    "the 8×8 digit into 2×2 **patches**, turn each patch's 4 pixels into a vector (the "
    "patch embedding), add a **position embedding** for where the patch sits, put a "
    "learned **[CLS]** token in front, and run the same encoder layers. The [CLS] token's "
    "final vector decides the digit."
)


def patch_tokens(t: Trace, where: tuple, patch: int) -> None:
    """The image cut into patches, each patch one token."""
    tiles = analysis.patches(t.image, patch)
    chart("vit_tokens", where, viz.patch_tokens, tiles, t.tokens[1:], filename="patch_tokens")
    st.caption(_("Each patch becomes one token, in reading order; [CLS] is added in front."))


def inputs(t: Trace, where: tuple, grid: int) -> None:
    """Patch embedding + position embedding = the input; what the positions learned."""
    st.subheader(_("Patch embeddings + position embeddings = the input"))
    chart("vit_input", where, viz.embedding_plus_position, t.embeddings, t.positional,
          t.tokens, filename="input")  # fmt: skip
    cos = analysis.cosine_matrix(t.positional[1:])
    chart("vit_positions", where[1], viz.position_similarity_grid, cos, grid,
          filename="positions")  # fmt: skip
    near, far = analysis.layout_similarity(cos, grid)
    said = {"near": format(near, ".2f"), "far": format(far, ".2f")}
    st.caption(
        _("Position (r, c)'s map shows its cosine with every position. Learned, not given: "
          "neighbouring positions average {near}, positions three or more steps apart {far}, "
          "so the model has learned some of the image's 2-D layout.", **said)
        if near > far + 0.1
        else _("Position (r, c)'s map shows its cosine with every position. Learned, not "
               "given: neighbouring positions average {near}, positions three or more steps "
               "apart {far}, so the model has not learned the image's 2-D layout.", **said)
    )


def cls_attention(t: Trace, where: tuple, grid: int) -> None:
    """[CLS] attention to each patch, per layer and head, and rolled out through the layers."""
    st.subheader(_("Where [CLS] looks"))
    layer, head, label = layer_head("vis", t.n_layers, t.n_heads)
    row = analysis.head_weights(t, layer, head)[0, 1:]
    rollout = analysis.attention_rollout(t.attention_stack())[0, 1:]
    left, right = st.columns(2)
    with left:
        chart("vit_cls", (where, layer, head), viz.attention_over_image, t.image,
              analysis.as_grid(row, grid), title=_("[CLS] → patches, {label}", label=label),
              filename="cls_attention")  # fmt: skip
    with right:
        chart("vit_rollout", where, viz.attention_over_image, t.image,
              analysis.as_grid(rollout / rollout.sum(), grid),
              title=_("rollout: all layers, heads averaged"), filename="rollout")  # fmt: skip
    st.caption(_(
        "Left: one head's weights from [CLS] to the {n} patches ([CLS]'s weight on itself "
        "left out). Right: attention rollout multiplies the layers' head-averaged attention "
        "(plus the residual path), an estimate of which patches reach [CLS] in the end.",
        n=len(row),
    ))


# The sections in tabs: only the open one is computed and drawn, and its pickers rerun
# only this part (a fragment).
@st.fragment
def sections(opened: Opened, t: Trace, where: tuple, grid: int, patch: int) -> None:
    keep_state("vis_layer", "vis_head", *KEPT)
    lazy_sections("vision", {
        "patches": (_("Patches as tokens"), lambda: patch_tokens(t, where, patch)),
        "input": (_("Patch + position = input"), lambda: inputs(t, where, grid)),
        "cls": (_("Where [CLS] looks"), lambda: cls_attention(t, where, grid)),
        "knockout": (_("Knock out heads"), lambda: vision_knockout(opened, where[0], t)),
    })  # fmt: skip


def draw(opened: Opened) -> Trace:
    """The page below its header (ui.frame.body): drawn again for each new input."""
    name, device = opened.model_name, opened.device
    test_x, test_y = cache.digits_test_set()
    report = cache.vit_report().get("models", {}).get(name, {})
    wrong = report.get("misclassified", {"index": [], "true": [], "predicted": []})
    wrong = dict(
        zip(wrong["index"], zip(wrong["true"], wrong["predicted"], strict=True), strict=True)
    )
    image, caption, _index = choose_image(test_x, test_y, wrong)
    pixels = np.asarray(image, dtype=np.float32).tobytes()
    t = cache.trace_image(pixels, name, device)
    where = (pixels, name, device)
    grid = int(round((len(t.tokens) - 1) ** 0.5))
    patch = t.image.shape[0] // grid

    # The image, its patches, and the patches as tokens
    st.caption(caption)
    left, right = st.columns([2, 3])
    with left:
        chart("vit_image", where, viz.image_with_patches, t.image, patch, filename="image_patches")
    with right:
        probs = analysis.softmax_rows(t.logits[:1])[0]  # the [CLS] row decides
        ranked = sorted(enumerate(probs), key=lambda p: -p[1])
        chart("vit_classes", where, viz.topk_bar, [(str(d), float(p)) for d, p in ranked],
              title=_("the digits, most likely first"), filename="prediction")  # fmt: skip

    sections(opened, t, where, grid, patch)

    numbers("vision", lambda: downloads(t, caption, name, ranked))
    return t  # the frame writes its timing after the page: the first chart leaves first


def downloads(t: Trace, caption: str, name: str, ranked: list) -> None:
    """The image, the prediction and every head's attention, to download."""
    c1, c2 = st.columns(2)
    with c1:
        download_csv(_("Image (CSV)"), t.image, [str(r) for r in range(len(t.image))], None,
                     "vit_dl_image", "image.csv")  # fmt: skip
    with c2:
        record = {"image": t.image, "source": caption, "model": name, "tokens": t.tokens}
        record |= {"probabilities": dict(ranked), "attention[layer][head][query][key]":
                   t.attention_stack()}  # fmt: skip
        download_json(_("Prediction and attention (JSON)"), record, "vit_dl_json", "vit.json")


frame(
    "vision",
    draw,
    INTRO,
    controls=source_picker,
)
