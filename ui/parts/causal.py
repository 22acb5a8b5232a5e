"""The Causal page's own parts: the sampling controls, click-by-click generation (its state
and view), and how GPT learns from every position at once (slide 45)."""

from __future__ import annotations

import math

import streamlit as st

import analysis
import viz
from analysis.training import shifted_targets
from i18n import N_, _, particle
from model import Sampling, draw
from ui import cache
from ui.figures import chart
from ui.show import download_json, layer_head
from ui.view import View


def sampling_controls() -> tuple[Sampling, int]:
    """Temperature, top-k and top-p sliders (keys causal_temp/topk/topp), and how many bars."""
    c1, c2, c3, c4 = st.columns(4)
    temperature = c1.slider(
        _("Temperature"),
        0.0,
        2.0,
        1.0,
        0.05,
        key="causal_temp",
        help=_("Below 1 sharpens the distribution, above 1 flattens it; 0 always picks the "
               "most likely token (greedy)."),
    )
    top_k = c2.slider(
        _("Top-k (0 = off)"), 0, 100, 0, key="causal_topk",
        help=_("Keep only the k most likely tokens."),
    )
    top_p = c3.slider(
        _("Top-p (1 = off)"),
        0.05,
        1.0,
        1.0,
        0.05,
        key="causal_topp",
        help=_("Keep the fewest most likely tokens whose probabilities add up to p."),
    )
    bars = c4.slider(_("Bars"), 5, 30, 10, key="causal_bars")
    return Sampling.of(temperature, top_k, top_p), bars


def current_settings() -> Sampling:
    """The sampling sliders' values as they are now (also when drawn in another fragment)."""
    state = st.session_state
    return Sampling.of(
        state.get("causal_temp", 1.0), state.get("causal_topk", 0), state.get("causal_topp", 1.0)
    )


def generation_for(prompt: list[int]) -> dict:
    """This session's generation ({"prompt", "steps"}); the page's frame drops it (its reset
    key "gen") when the sentence or the model changes, and a new one starts here."""
    if "gen" not in st.session_state:
        st.session_state["gen"] = {"prompt": list(prompt), "steps": []}
    return st.session_state["gen"]


def all_ids(gen: dict) -> list[int]:
    return gen["prompt"] + [s["id"] for s in gen["steps"]]


def ended(gen: dict, eos_id: int) -> bool:
    return bool(gen["steps"]) and gen["steps"][-1]["id"] == eos_id


def extend(gen: dict, n: int, seed: int, sampling: Sampling, name: str, device: str) -> None:
    """Append up to n sampled tokens (stopping at [EOS]); step i draws with (seed, i), as
    the model's own `generate` does."""
    vocab = cache.vocabulary(name, device)
    eos = cache.special_ids(name, device)["[EOS]"]
    for _step in range(n):
        if ended(gen, eos):
            return
        probs = cache.next_distribution(tuple(all_ids(gen)), name, device, sampling)
        pick = draw(probs, seed, len(gen["steps"]))
        gen["steps"].append(
            {
                "id": pick,
                "token": vocab[pick],
                "probability": float(probs[pick]),
                "temperature": sampling.temperature,
                "top_k": sampling.top_k,
                "top_p": sampling.top_p,
            }
        )


def generation(view: View) -> None:
    """Step-by-step generation from the sentence: Next token, +10, Start over; the text, its
    tokens (the new ones in orange), the new token's attention and each step's probability."""
    name, device = view.model_name, view.device
    st.subheader(_("Generate, one token at a time"))
    gen = generation_for([int(i) for i in view.trace.ids])
    eos = cache.special_ids(name, device)["[EOS]"]
    c1, c2, c3, c4 = st.columns(4, vertical_alignment="bottom")
    seed = c1.number_input(
        _("Seed"), 0, 2**31 - 1, 0, key="gen_seed",
        help=_("The same seed and the same settings always write the same text."),
    )  # fmt: skip
    done = ended(gen, eos)
    add = 1 if c2.button(_("Next token"), key="gen_next", type="primary", disabled=done) else 0
    add = 10 if c3.button(_("+10 tokens"), key="gen_more", disabled=done) else add
    if c4.button(_("Start over"), key="gen_reset"):
        gen["steps"] = []
    extend(gen, add, int(seed), current_settings(), name, device)
    if not gen["steps"]:
        st.info(_("Press **Next token** to let the model write."), icon="▶️")
        return

    ids = all_ids(gen)
    text = view.model.decode(ids)
    st.code(text, language=None, wrap_lines=True)
    gt = cache.get_trace_ids(tuple(ids), name, device)
    where = (name, device, tuple(ids), len(gen["steps"]))
    new = list(range(max(0, len(gt.tokens) - len(gen["steps"])), len(gt.tokens)))
    chart(
        "gen_strip", where, viz.token_strip, gt.tokens, gt.ids,
        title=_("prompt + generated (orange)"), highlight=new, filename="generated_tokens",
    )  # fmt: skip
    if ended(gen, eos):
        wrote = cache.vocabulary(name, device)[eos]
        st.caption(_("The model wrote `{token}`, its end token: it considers the text finished.",
                     token=wrote, token_obj=particle(f"`{wrote}`", "을/를")))  # fmt: skip

    layer, head, label = layer_head("gen", gt.n_layers, gt.n_heads)
    row = analysis.head_weights(gt, layer, head)[-1]
    last = len(gt.tokens) - 1
    chart(
        "gen_row", (where, layer, head), viz.attention_row, row, gt.tokens, gt.tokens[-1],
        query_index=last, title=_("the new token “{token}” attends to… ({label})",
                                  token=gt.tokens[-1], label=label),
        filename="new_token_attention",
    )  # fmt: skip
    rows = [
        {"step": i + 1, "token": s["token"], "probability": round(s["probability"], 4)}
        for i, s in enumerate(gen["steps"])
    ]
    parts = gt.fragment_of[len(gt.tokens) - len(new) :]  # a byte's character, per new token
    if any(parts):
        for row, part in zip(rows[-len(parts) :], parts, strict=True):
            row["part of"] = part
    shown = [{_(COLUMNS[k]): v for k, v in row.items()} for row in rows]
    st.dataframe(shown, hide_index=True, height=220)
    record = {"prompt": view.sentence, "model": name, "seed": int(seed)}
    record |= {"steps": gen["steps"], "text": text}
    record |= {"tokens": gt.tokens, "raw_tokens": gt.raw_tokens}
    download_json(_("Generation (JSON)"), record, "gen_dl_json", "generation.json")


# --- How GPT learns: every position predicts the next token at once (slide 45) ---------

MAX_COLUMNS = 40  # positions drawn in the shifted-targets figure (the rest are summed up)
COLUMNS = {"step": N_("step"), "token": N_("token"), "probability": N_("probability"),
           "part of": N_("part of")}  # the generation table's columns, by id


def gpt_targets(view: View) -> None:
    """Inputs and targets shifted by one, the model's first guess and p(target) at each."""
    t, name, device = view.trace, view.model_name, view.device
    st.subheader(_("How a decoder learns from this sentence"))
    if len(t.tokens) < 2:
        st.info(_("The sentence needs at least two tokens to have a next one."))
        return
    s = shifted_targets(t.tokens, t.logits, cache.vocabulary(name, device),
                        cache.special_ids(name, device).values())  # fmt: skip
    n = min(len(s.inputs), MAX_COLUMNS)
    chart("causal_targets", view.key, viz.shifted_targets, s.inputs[:n], s.targets[:n],
          s.predicted[:n], s.p_target[:n], title=_("targets = inputs shifted by one"),
          filename="shifted_targets")  # fmt: skip
    said = {"lessons": len(s.inputs), "drawn": n, "hits": s.hits, "loss": format(s.loss, ".2f"),
            "perplexity": format(math.exp(min(s.loss, 50)), ",.1f")}  # fmt: skip
    rest = _(
        "at every position the model reads the tokens up to there (the causal mask hides the "
        "rest) and is scored on the next one. Here its first guess is right at {hits} of "
        "{lessons} positions; the training loss, the mean of −log p(target), is {loss} "
        "(perplexity {perplexity}). Training lowers it for every position in one backward pass.",
        **said,
    )
    st.caption(
        _("One sentence, {lessons} lessons at once (the first {drawn} are drawn): {rest}",
          rest=rest, **said)
        if n < len(s.inputs)
        else _("One sentence, {lessons} lessons at once: {rest}", rest=rest, **said)
    )
