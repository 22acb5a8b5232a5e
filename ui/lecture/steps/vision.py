"""The lecture's step on the Vision Transformer."""

from __future__ import annotations

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import N_, _
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict

SLUG = "vision-transformer"  # its address (/lecture-vision-transformer); it never changes
TITLE = N_("The Vision Transformer")
IDEA = N_("An image cut into patches, each patch a token, and the same encoder.")


def draw() -> None:
    name, device = pick("vision")
    test_x, test_y = cache.digits_test_set()
    i = st.slider(_("Test image"), 0, len(test_x) - 1, 3, key="l12_image")
    image = test_x[i]
    t = cache.trace_image(np.asarray(image, dtype=np.float32).tobytes(), name, device)
    grid = int(round((len(t.tokens) - 1) ** 0.5))
    chart("l12_patches", (i, name), viz.image_with_patches, t.image, t.image.shape[0] // grid,
          filename="lecture_patches")  # fmt: skip
    probs = analysis.softmax_rows(t.logits[:1])[0]
    ranked = sorted(((str(d), float(p)) for d, p in enumerate(probs)), key=lambda c: -c[1])
    if predict("l12", _("{n} patches and a [CLS] token: which digit will the model read?",
                        n=len(t.tokens) - 1), [str(d) for d in range(10)], ranked[0][0],
               _("{p:.0%} (the test label is {label}).", p=ranked[0][1],
                 label=int(test_y[i]))):  # fmt: skip
        rollout = analysis.attention_rollout(t.attention_stack())[0, 1:]
        left, right = st.columns(2)
        with left:
            chart("l12_probs", (i, name), viz.topk_bar, ranked[:5], title=_("the digits"),
                  filename="lecture_digits")  # fmt: skip
        with right:
            chart("l12_rollout", (i, name), viz.attention_over_image, t.image,
                  analysis.as_grid(rollout / rollout.sum(), grid),
                  title=_("where [CLS] looked (rollout)"), filename="lecture_rollout")
