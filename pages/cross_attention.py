"""Translation 2. Encoder-decoder and cross-attention: the decoder looks back at every word."""

import streamlit as st

import analysis
import viz
from model import Trace
from ui import cache
from ui.figures import chart
from ui.frame import open_page
from ui.show import download_csv, download_json, layer_head
from ui.translation import BANKS, reference, translated

opened = open_page(
    "cross_attention",
    "The encoder reads the English sentence with self-attention; the decoder writes Korean "
    "one token at a time, looking only **left** at what it wrote (masked self-attention) "
    "and, through **cross-attention**, at every English word: queries come from the "
    "decoder, keys and values from the encoder. Korean puts the verb last (subject, "
    "object, verb), so watch each Korean word find its English source out of order.",
)
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


# Three kinds of attention in one layer and head (the pickers rerun only this part)
@st.fragment
def attention_views(t: Trace, where: tuple) -> None:
    st.subheader("Self-attention, masked self-attention, cross-attention")
    layer, head, label = layer_head("xa", t.n_layers, t.n_heads)
    short = f"L{layer + 1} " + ("mean of heads" if head == "average" else f"H{head + 1}")
    src = t.encoder
    views = [
        ("xa_encoder", src.layers[min(layer, src.n_layers - 1)], src.tokens, None,
         f"encoder self-attention, {short}"),
        ("xa_decoder", t.layers[layer], t.tokens, None,
         f"decoder masked self-attention, {short}"),
        ("xa_cross", t.cross_layers[layer], t.tokens, src.tokens,
         f"cross-attention: Korean queries × English keys, {label}"),
    ]  # fmt: skip
    left, right = st.columns(2)
    places = [left, right, st.container()]
    for place, (widget, lay, rows, keys, title) in zip(places, views, strict=True):
        weights = analysis.head_pattern(lay.attention, head)
        with place:
            chart(widget, (where, layer, head), viz.attention_heatmap, weights, rows,
                  title=title, key_tokens=keys, filename=widget)  # fmt: skip
    cross = places[2]
    with cross:
        matrix = analysis.head_pattern(t.cross_layers[layer].attention, head)
        download_csv(f"Cross-attention, {short} (CSV)", matrix, t.tokens, src.tokens,
                     "xa_dl_cross", f"cross_attention_L{layer + 1}.csv")  # fmt: skip
    st.caption(
        "Rows are queries, columns keys; every row sums to 1. A decoder row is the step that "
        "writes the *next* token: in cross-attention's last layer the step after “나는” reads "
        "“school” and writes 학교에, so the English words are read in Korean order: subject, "
        "object, then the verb."
    )

    st.subheader("Decoding, one token at a time")
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


attention_views(t, where)

# The two banks: 은행 (money) and 강둑 (river), and what each looks at in the English
st.subheader("Two banks")
cols = st.columns(2)
for n, (place, sentence) in enumerate(zip(cols, BANKS, strict=True)):
    bt = cache.get_trace(sentence, name, device)
    hits = [i for i, tok in enumerate(bt.tokens) if "은행" in tok or "강둑" in tok]
    with place:
        st.markdown(f"*{sentence}*")
        if not hits:
            st.caption("The translation has no 은행 or 강둑: " + " ".join(bt.tokens[1:]))
            continue
        i = hits[0]  # the step before it (query i - 1) is the one that writes it
        row = bt.cross_layers[-1].attention.mean(0)[i - 1]
        top = int(row.argmax())
        chart(f"xa_bank_{n}", (sentence, name, device), viz.attention_row,
              row, bt.encoder.tokens, bt.tokens[i - 1], filename="bank_cross_attention",
              title=f"writing “{bt.tokens[i]}”: last layer, average of heads")  # fmt: skip
        st.caption(f"The strongest English key: “{bt.encoder.tokens[top]}” ({row[top]:.0%}).")

record = {"source": text, "model": name, "translation": out.text, "tokens": out.tokens}
record |= {"probabilities": out.probs, "source_tokens": src.tokens, "target_tokens": t.tokens}
record["cross_attention[layer][head][target][source]"] = [c.attention for c in t.cross_layers]
download_json("Translation and cross-attention (JSON)", record, "xa_dl_json", "cross.json")
