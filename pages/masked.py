"""4. Masked prediction (BERT-style): hide tokens, let the encoder guess them from both sides."""

import streamlit as st

import analysis
import viz
from i18n import _
from model import Trace
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts import compare
from ui.parts.interventions.pages import (
    KEPT,
    RESET,
    text_attribution,
    text_knockout,
    text_lens,
    text_mlp,
)
from ui.parts.masked import MAX_DRAWN, bert_masking, guesses, mask_attention
from ui.show import download_json, keep_state, lazy_sections, numbers, token_labels
from ui.view import View


def typed_masks(t: Trace) -> list[int]:
    """Positions of the [MASK] tokens typed in the sentence itself."""
    return [i for i, tok in enumerate(t.tokens) if tok == "[MASK]"]


def default_masks(t: Trace) -> list[int]:
    """What to hide at first: nothing more when the sentence has a [MASK], else one word."""
    return [] if typed_masks(t) else [analysis.default_token(t.tokens)]


def draw(view: View) -> None:
    """The page below its header (ui.frame.body): drawn again for each new sentence."""
    t, name, device = view.trace, view.model_name, view.device
    labels = token_labels(t.tokens)
    specials = cache.special_ids(name, device)
    typed = typed_masks(t)

    # Which tokens to hide: chosen here, plus any [MASK] typed in the sentence
    c1, c2 = st.columns([4, 1])
    chosen = c1.multiselect(
        _("Tokens to mask"),
        analysis.word_positions(t.tokens),
        key="mask_tokens",
        format_func=labels.__getitem__,
        help=_("Each chosen token becomes [MASK] before the model reads it; so does a typed "
               "[MASK]."),
    )
    k = c2.slider(_("Guesses to show"), 1, 20, 5, key="mask_k")
    other = compare.second_sentence(view)
    if other is not None:  # compare mode: one shared word hidden in both sentences
        compare.guesses_side_by_side(view, other, k)
        st.divider()
    masked = sorted(set(chosen) | set(typed))
    if not masked:
        st.info(_("Choose a token to mask above, or type [MASK] in the sentence."), icon="🎭")
        return

    ids = tuple(specials["[MASK]"] if i in masked else int(x) for i, x in enumerate(t.ids))
    mt = cache.get_trace_ids(ids, name, device)
    where = (view.key, ids)
    chart("mask_strip", where, viz.token_strip, mt.tokens, mt.ids, title=_("what the model reads"),
          highlight=masked, filename="masked_tokens")  # fmt: skip

    ranked = cache.fill_mask_ids(ids, name, device, k)  # every mask is predicted (one pass)
    drawn = masked[:MAX_DRAWN]  # a few are drawn

    # The sections in tabs: only the open one is computed and drawn.
    keep_state("mask_layer", "mask_head", "mask_window", "patch_site", "cmp_patch_word", *KEPT)
    first = drawn[0]
    original = None if first in typed else int(t.ids[first])
    lazy_sections("masked", {
        "guesses": (_("The guesses"), lambda: guesses(view, mt, masked, typed, ranked, where, k)),
        "looked": (_("Where the [MASK] looked"), lambda: mask_attention(mt, drawn, where)),
        "learns": (_("How BERT learns"), lambda: bert_masking(view)),
        "knockout": (_("Knock out heads"), lambda: text_knockout(view, mt, first, original)),
        "lens": (_("Every layer's guess"), lambda: text_lens(view, mt, first)),
        "attribution": (_("Attention beside attribution"),
                        lambda: text_attribution(view, mt, first)),
        "mlp": (_("Inside the MLP"), lambda: text_mlp(view, mt, first)),
        "patch": (_("Patch A into B"), lambda: compare.patch_into(view, other)),
    })  # fmt: skip

    numbers("masked", lambda: downloads(view, t, mt, masked, ranked))


def downloads(view: View, t, mt, masked: list[int], ranked) -> None:
    """The masked sentence's guesses, to download."""
    name = view.model_name
    predictions = [
        {"position": p, "original": t.tokens[p],
         "candidates": [{"token": w, "probability": q} for w, q in c]}
        for p, c in zip(masked, ranked, strict=True)
    ]  # fmt: skip
    record = {"sentence": view.sentence, "model": name, "tokens": mt.tokens, "masked": masked}
    record |= {"raw_tokens": mt.raw_tokens, "predictions": predictions}
    download_json(_("Masked predictions (JSON)"), record, "mask_dl_json", "masked_predictions.json")


frame(
    "masked",
    draw,
    _("An encoder such as BERT is trained by hiding about 15% of the tokens behind "
      "**[MASK]** and guessing them from the words on *both* sides. Mask a token (or type "
      "[MASK] in the sentence) and read the model's ranked guesses. Try *I swam across the "
      "river to get to the other bank.* with *bank* masked, then the sentence with the cash."),
    reset={"mask_window": None, "mask_tokens": default_masks, "cmp_mask_word": None,
           "cmp_patch_word": None, **RESET},
    controls=compare.controls,
)
