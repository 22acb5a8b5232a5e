"""Translation 2. Encoder-decoder and cross-attention: the decoder looks back at every word."""

import streamlit as st

import analysis
import viz
from i18n import _
from model import Trace
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts.interventions.pages import KEPT, translation_knockout
from ui.parts.translation import reference, translated, two_banks
from ui.show import download_csv, download_json, keep_state, layer_head, lazy_sections
from ui.view import Opened

INTRO = _(
    "The encoder reads the English sentence with self-attention; the decoder writes Korean "
    "one token at a time, looking only **left** at what it wrote (masked self-attention) "
    "and, through **cross-attention**, at every English word: queries come from the "
    "decoder, keys and values from the encoder. Korean puts the verb last (subject, "
    "object, verb), so watch each Korean word find its English source out of order."
)


def picked(t: Trace) -> tuple[int, int | str, str, str]:
    """The layer and head picker of the attention sections: (layer, head, label, short)."""
    layer, head, label = layer_head("xa", t.n_layers, t.n_heads)
    short = (_("L{layer} mean of heads", layer=layer + 1) if head == "average"
             else f"L{layer + 1} H{head + 1}")  # fmt: skip
    return layer, head, label, short


def cross_attention(t: Trace, where: tuple) -> None:
    """Korean queries × English keys: each Korean step finds its English source."""
    st.subheader(_("Cross-attention: queries from the decoder, keys from the encoder"))
    layer, head, label, short = picked(t)
    matrix = analysis.head_pattern(t.cross_layers[layer].attention, head)
    chart("xa_cross", (where, layer, head), viz.attention_heatmap, matrix, t.tokens,
          title=_("cross-attention: Korean queries × English keys, {label}", label=label),
          key_tokens=t.encoder.tokens, filename="xa_cross")  # fmt: skip
    download_csv(_("Cross-attention, {heads} (CSV)", heads=short), matrix, t.tokens,
                 t.encoder.tokens, "xa_dl_cross", f"cross_attention_L{layer + 1}.csv")  # fmt: skip
    st.caption(_(
        "Rows are queries, columns keys; every row sums to 1. A decoder row is the step that "
        "writes the *next* token: in cross-attention's last layer the step after “나는” reads "
        "“school” and writes 학교에, so the English words are read in Korean order: subject, "
        "object, then the verb."
    ))


def self_attention(t: Trace, where: tuple) -> None:
    """The encoder's self-attention beside the decoder's masked self-attention."""
    st.subheader(_("Self-attention and masked self-attention"))
    layer, head, _label, short = picked(t)
    src = t.encoder
    views = [
        ("xa_encoder", src.layers[min(layer, src.n_layers - 1)], src.tokens,
         _("encoder self-attention, {heads}", heads=short)),
        ("xa_decoder", t.layers[layer], t.tokens,
         _("decoder masked self-attention, {heads}", heads=short)),
    ]  # fmt: skip
    for place, (widget, lay, rows, title) in zip(st.columns(2), views, strict=True):
        weights = analysis.head_pattern(lay.attention, head)
        with place:
            chart(widget, (where, layer, head), viz.attention_heatmap, weights, rows,
                  title=title, filename=widget)  # fmt: skip
    st.caption(_(
        "The encoder's tokens look both ways; the decoder's only left, at what it has "
        "written (zero above the diagonal)."
    ))


def decoding(t: Trace, where: tuple) -> None:
    """One decoder step: what it writes next, and where in the English it reads."""
    st.subheader(_("Decoding, one token at a time"))
    layer, head, label, _short = picked(t)
    src = t.encoder
    step = st.slider(_("Step"), 1, len(t.tokens), 1, key="xa_step",
                     help=_("The decoder has read the target up to this token."))  # fmt: skip
    i = step - 1
    specials = cache.special_ids(where[1], where[2])
    probs = analysis.prediction_probs(
        t.logits[[i]], [v for k, v in specials.items() if k != "[EOS]"]
    )[0]
    vocab = cache.vocabulary(where[1], where[2])
    row = analysis.head_pattern(t.cross_layers[layer].attention, head)[i]
    left, right = st.columns(2)
    with left:
        chart("xa_next", (where, i), viz.distribution_bar, probs, vocab, 8,
              title=_("after “{token}”, it writes…", token=t.tokens[i]),
              filename="next_token")  # fmt: skip
    with right:
        chart("xa_row", (where, layer, head, i), viz.attention_row, row, src.tokens,
              t.tokens[i], title=_("…reading the English ({label})", label=label),
              filename="cross_row")  # fmt: skip


# The sections in tabs: only the open one is computed and drawn, and its pickers rerun
# only this part (a fragment).
@st.fragment
def sections(opened: Opened, t: Trace, where: tuple) -> None:
    keep_state("xa_layer", "xa_head", "xa_step", *KEPT)
    lazy_sections("cross_attention", {
        "cross": (_("Cross-attention"), lambda: cross_attention(t, where)),
        "self": (_("Self-attention"), lambda: self_attention(t, where)),
        "decoding": (_("Decoding, one token at a time"), lambda: decoding(t, where)),
        "banks": (_("Two banks"), lambda: two_banks(where[1], where[2])),
        "knockout": (_("Knock out heads"), lambda: translation_knockout(opened, where[0], t)),
    })  # fmt: skip


def draw(opened: Opened) -> Trace:
    """The page below its header (ui.frame.body): drawn again for each new input."""
    name, device = opened.model_name, opened.device
    text, out, t = translated(opened)
    src = t.encoder
    expected = reference(text)
    st.markdown(
        _("**{model}** translates:", model=name) if expected is None
        else _("**{model}** translates (exact):", model=name) if out.text == expected
        else _("**{model}** translates (wrong):", model=name)
    )  # fmt: skip
    st.code(out.text or _("(nothing)"), language=None, wrap_lines=True)
    if expected and out.text != expected:
        st.caption(_("The grammar's translation: {text}", text=expected))
    where = (text, name, device)
    chart("xa_source", where, viz.token_strip, src.tokens, src.ids, title=_("source (encoder)"),
          filename="source_tokens")  # fmt: skip
    chart("xa_target", where, viz.token_strip, t.tokens, t.ids, title=_("target (decoder input)"),
          filename="target_tokens")  # fmt: skip

    sections(opened, t, where)

    record = {"source": text, "model": name, "translation": out.text, "tokens": out.tokens}
    record |= {"probabilities": out.probs, "source_tokens": src.tokens, "target_tokens": t.tokens}
    record["cross_attention[layer][head][target][source]"] = [c.attention for c in t.cross_layers]
    download_json(_("Translation and cross-attention (JSON)"), record, "xa_dl_json", "cross.json")
    return t  # the frame writes its timing after the page: the first chart leaves first


frame(
    "cross_attention",
    draw,
    INTRO,
)
