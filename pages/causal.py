"""5. Causal prediction (GPT-style): look only left, predict the next token, repeat."""

import streamlit as st

import analysis
import model
import viz
from ui import cache, generate, training
from ui.figures import chart
from ui.frame import View, frame
from ui.show import download_csv, download_json, layer_head, window_picker

view = frame(
    "causal",
    "A decoder such as GPT may only look **left**: a mask puts −∞ above the diagonal of the "
    "scores, so after the softmax no token sees the future. Trained to predict each next "
    "token, it writes text one token at a time: predict a distribution, pick a token, append "
    "it, repeat. Temperature, top-k and top-p change how adventurous the pick is.",
    reset={"causal_window": None, "gen": None},
)
t, key = view.trace, view.key

# The causal mask, and what it does to the attention
st.subheader("The causal mask")
window = window_picker(len(t.tokens), "causal_window")
n = len(t.tokens)
left, right = st.columns(2)
with left:
    mask = model.additive_mask(model.causal_mask(n))
    chart("causal_mask", key, viz.causal_mask_figure, mask, t.tokens, window=window,
          filename="causal_mask")  # fmt: skip
with right:
    chart(
        "causal_attention", key, viz.attention_heatmap, t.layers[0].attention.mean(axis=0),
        t.tokens, title="layer 1, average of the heads: zero above the diagonal",
        window=window, filename="causal_attention",
    )  # fmt: skip
st.caption(
    "Query i (row) may look at keys 0..i only: softmax(scores + mask) gives exactly 0 "
    "weight to every later token."
)

training.gpt_targets(view)


# The next token (its controls rerun only this part)
@st.fragment
def next_token(view: View) -> None:
    t, name, device = view.trace, view.model_name, view.device
    st.subheader("The next token")
    st.latex(r"p_i = \frac{\exp(z_i / T)}{\sum_j \exp(z_j / T)}")
    sampling, bars = generate.sampling_controls()
    probs = cache.next_distribution(tuple(int(i) for i in t.ids), name, device, sampling)
    vocab = cache.vocabulary(name, device)
    chart(
        "causal_next", (view.key, sampling, bars), viz.distribution_bar, probs, vocab, bars,
        title=f"after “{t.tokens[-1]}”, the next token", filename="next_token",
    )  # fmt: skip
    st.caption(f"{int((probs > 0).sum()):,} of {len(vocab):,} tokens can still be picked.")
    top = probs.argsort()[::-1][:50]
    download_csv(
        "Top 50 next tokens (CSV)", probs[top][:, None], [vocab[i] for i in top],
        ["probability"], "causal_dl_next", "next_token.csv",
    )  # fmt: skip


next_token(view)


# Step-by-step generation (buttons and pickers rerun only this part)
@st.fragment
def generation(view: View) -> None:
    name, device = view.model_name, view.device
    st.subheader("Generate, one token at a time")
    gen = generate.generation_for([int(i) for i in view.trace.ids])
    eos = cache.special_ids(name, device)["[EOS]"]
    c1, c2, c3, c4 = st.columns(4, vertical_alignment="bottom")
    seed = c1.number_input(
        "Seed", 0, 2**31 - 1, 0, key="gen_seed",
        help="The same seed and the same settings always write the same text.",
    )  # fmt: skip
    done = generate.ended(gen, eos)
    add = 1 if c2.button("Next token", key="gen_next", type="primary", disabled=done) else 0
    add = 10 if c3.button("+10 tokens", key="gen_more", disabled=done) else add
    if c4.button("Start over", key="gen_reset"):
        gen["steps"] = []
    generate.extend(gen, add, int(seed), generate.current_settings(), name, device)
    if not gen["steps"]:
        st.info("Press **Next token** to let the model write.", icon="▶️")
        return

    ids = generate.all_ids(gen)
    text = view.model.decode(ids)
    st.code(text, language=None, wrap_lines=True)
    gt = cache.get_trace_ids(tuple(ids), name, device)
    where = (name, device, tuple(ids), len(gen["steps"]))
    new = list(range(max(0, len(gt.tokens) - len(gen["steps"])), len(gt.tokens)))
    chart(
        "gen_strip", where, viz.token_strip, gt.tokens, gt.ids,
        title="prompt + generated (orange)", highlight=new, filename="generated_tokens",
    )  # fmt: skip
    if generate.ended(gen, eos):
        st.caption("The model wrote [EOS]: it considers the text finished.")

    layer, head, label = layer_head("gen", gt.n_layers, gt.n_heads)
    row = analysis.head_weights(gt, layer, head)[-1]
    last = len(gt.tokens) - 1
    chart(
        "gen_row", (where, layer, head), viz.attention_row, row, gt.tokens, gt.tokens[-1],
        query_index=last, title=f"the new token “{gt.tokens[-1]}” attends to… ({label})",
        filename="new_token_attention",
    )  # fmt: skip
    st.dataframe(
        [
            {"step": i + 1, "token": s["token"], "probability": round(s["probability"], 4)}
            for i, s in enumerate(gen["steps"])
        ],
        hide_index=True,
        height=220,
    )
    record = {"prompt": view.sentence, "model": name, "seed": int(seed)}
    record |= {"steps": gen["steps"], "text": text}
    download_json("Generation (JSON)", record, "gen_dl_json", "generation.json")


generation(view)
