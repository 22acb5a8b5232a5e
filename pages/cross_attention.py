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

INTRO = (
    "The encoder reads the English sentence with self-attention; the decoder writes Korean "
    "one token at a time, looking only **left** at what it wrote (masked self-attention) "
    "and, through **cross-attention**, at every English word: queries come from the "
    "decoder, keys and values from the encoder. Korean puts the verb last (subject, "
    "object, verb), so watch each Korean word find its English source out of order.",
)


def picked(t: Trace) -> tuple[int, int | str, str, str]:
    """The layer and head picker of the attention sections: (layer, head, label, short)."""
    layer, head, label = layer_head("xa", t.n_layers, t.n_heads)
    short = f"L{layer + 1} " + ("mean of heads" if head == "average" else f"H{head + 1}")
    return layer, head, label, short


def cross_attention(t: Trace, where: tuple) -> None:
    """Korean queries × English keys: each Korean step finds its English source."""
    st.subheader("Cross-attention: queries from the decoder, keys from the encoder")
    layer, head, label, short = picked(t)
    matrix = analysis.head_pattern(t.cross_layers[layer].attention, head)
    chart("xa_cross", (where, layer, head), viz.attention_heatmap, matrix, t.tokens,
          title=f"cross-attention: Korean queries × English keys, {label}",
          key_tokens=t.encoder.tokens, filename="xa_cross")  # fmt: skip
    download_csv(f"Cross-attention, {short} (CSV)", matrix, t.tokens, t.encoder.tokens,
                 "xa_dl_cross", f"cross_attention_L{layer + 1}.csv")  # fmt: skip
    st.caption(
        "Rows are queries, columns keys; every row sums to 1. A decoder row is the step that "
        "writes the *next* token: in cross-attention's last layer the step after “나는” reads "
        "“school” and writes 학교에, so the English words are read in Korean order: subject, "
        "object, then the verb."
    )


def self_attention(t: Trace, where: tuple) -> None:
    """The encoder's self-attention beside the decoder's masked self-attention."""
    st.subheader("Self-attention and masked self-attention")
    layer, head, _label, short = picked(t)
    src = t.encoder
    views = [
        ("xa_encoder", src.layers[min(layer, src.n_layers - 1)], src.tokens,
         f"encoder self-attention, {short}"),
        ("xa_decoder", t.layers[layer], t.tokens, f"decoder masked self-attention, {short}"),
    ]  # fmt: skip
    for place, (widget, lay, rows, title) in zip(st.columns(2), views, strict=True):
        weights = analysis.head_pattern(lay.attention, head)
        with place:
            chart(widget, (where, layer, head), viz.attention_heatmap, weights, rows,
                  title=title, filename=widget)  # fmt: skip
    st.caption(
        "The encoder's tokens look both ways; the decoder's only left, at what it has "
        "written (zero above the diagonal)."
    )


def decoding(t: Trace, where: tuple) -> None:
    """One decoder step: what it writes next, and where in the English it reads."""
    st.subheader("Decoding, one token at a time")
    layer, head, label, _short = picked(t)
    src = t.encoder
    step = st.slider("Step", 1, len(t.tokens), 1, key="xa_step",
                     help="The decoder has read the target up to this token.")  # fmt: skip
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
              title=f"after “{t.tokens[i]}”, it writes…", filename="next_token")  # fmt: skip
    with right:
        chart("xa_row", (where, layer, head, i), viz.attention_row, row, src.tokens,
              t.tokens[i], title=f"…reading the English ({label})",
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
    verdict = "" if expected is None else (" (exact)" if out.text == expected else " (wrong)")
    st.markdown(f"**{name}** translates{verdict}:")
    st.code(out.text or "(nothing)", language=None, wrap_lines=True)
    if expected and out.text != expected:
        st.caption(f"The grammar's translation: {expected}")
    where = (text, name, device)
    chart("xa_source", where, viz.token_strip, src.tokens, src.ids, title="source (encoder)",
          filename="source_tokens")  # fmt: skip
    chart("xa_target", where, viz.token_strip, t.tokens, t.ids, title="target (decoder input)",
          filename="target_tokens")  # fmt: skip

    sections(opened, t, where)

    record = {"source": text, "model": name, "translation": out.text, "tokens": out.tokens}
    record |= {"probabilities": out.probs, "source_tokens": src.tokens, "target_tokens": t.tokens}
    record["cross_attention[layer][head][target][source]"] = [c.attention for c in t.cross_layers]
    download_json("Translation and cross-attention (JSON)", record, "xa_dl_json", "cross.json")
    return t  # the frame writes its timing after the page: the first chart leaves first


frame(
    "cross_attention",
    draw,
    INTRO,
)
