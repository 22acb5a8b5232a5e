"""Inside the MLP (issue 57), a section of the tokens, masked and causal pages: for a layer
and a token, the MLP's hidden neurons after the nonlinearity (mlp_post) with the ones that
fire most named, what each of those pushes up and down through the unembedding (its direct
logit effect), what the MLP's output alone says through the logit lens; then each layer's
MLP knocked out alone, and one knocked out (or some of its named neurons) with the page's
prediction before and after."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

import viz
from analysis import prediction_probs
from analysis.mlp import direct_logit_effect, mlp_effects, most_harmful, pushes, top_neurons
from i18n import _
from model import CLEAN, RunOptions, Trace
from ui import cache
from ui.figures import chart
from ui.parts.interventions.knockout import described
from ui.show import md_escape
from ui.view import View

KEPT = ("mlp_layer", "mlp_knock", "mlp_knock_neurons")  # its widgets, kept while its tab is shut
TOP = 5  # neurons named, and tokens each pushes up and down
Guess = Callable[[RunOptions, str], None]  # draws the page's prediction under options, as key


# The models' own arithmetic, cached for every session on what it depends on (ids and
# floats, no words: the cache rule).
@st.cache_data(show_spinner=False, max_entries=256)
@cache.model_work
def neuron_pushes(name: str, device: str, layer: int, neurons: tuple[int, ...]
                  ) -> list[tuple[list, list]]:  # fmt: skip
    """Each neuron's direct logit effect (w_out[n] @ W_U) read out: the TOP token ids it
    raises most and lowers most, with their logit change per unit of activation."""
    m = cache.load_model(name, device)
    effect = direct_logit_effect(m.mlp_weights(layer)["w_out"], m.unembedding(), neurons)
    never = cache.special_ids(name, device).values()
    return [(p.up, p.down) for p in (pushes(row, TOP, never) for row in effect)]


@st.cache_data(show_spinner=False, max_entries=256)
@cache.model_work
def mlp_alone(name: str, device: str, ids: tuple[int, ...], layer: int, position: int
              ) -> list[tuple[int, float]]:  # fmt: skip
    """The layer's mlp_out at `position` read alone through the final norm and output head:
    its TOP tokens (ids, probabilities), special tokens left out."""
    row = cache.get_trace_ids(ids, name, device).layers[layer].mlp_out[[position]]
    lp = cache.load_model(name, device).read_out(row)[0]
    lp[[i for i in cache.special_ids(name, device).values() if i < lp.shape[0]]] = -np.inf
    order = np.argsort(-lp, kind="stable")[:TOP]
    return [(int(i), float(np.exp(lp[i]))) for i in order]


def has_head(view: View) -> bool:
    """Whether the model reads its stream out as tokens (an output head)."""
    return view.model.can("fill_mask") or view.model.can("next_token")


def inside_mlp(view: View, t: Trace, position: int, guess: Guess | None = None,
               token: int | None = None) -> None:  # fmt: skip
    """The section: `t` the sentence as the page reads it, `position` the token; `guess`
    draws the page's prediction and `token` is the one it follows (its first guess)."""
    st.subheader(_("Inside the MLP"))
    n_layers = view.model.mlps().get("")
    if not n_layers or t.layers[0].mlp_post is None:
        st.info(_("{model} has no MLPs to look inside.", model=view.model_name))
        return
    name, device, ids = view.model_name, view.device, tuple(int(i) for i in t.ids)
    if st.session_state.get("mlp_layer") not in range(n_layers):
        st.session_state["mlp_layer"] = n_layers - 1
    layer = st.selectbox(_("Layer"), range(n_layers), key="mlp_layer",
                         format_func=lambda n: _("layer {n}", n=n + 1))  # fmt: skip
    said = {"n": layer + 1, "token": t.tokens[position], "position": position}
    acts = t.layers[layer].mlp_post[position]
    top = top_neurons(acts, TOP)
    chart("mlp_neurons", (view.key, ids, layer, position), viz.mlp_neurons, acts,
          [n for n, _a in top], _("layer {n}'s hidden neurons at '{token}' (position "
                                  "{position})", **said), filename="mlp_neurons")  # fmt: skip
    st.caption(_("The {m} hidden neurons of layer {n}'s MLP for '{token}' after the "
                 "nonlinearity (mlp_post): the MLP reads each token on its own. The {k} that "
                 "fire most are named.", m=format(acts.shape[0], ","), k=len(top),
                 **{k: md_escape(str(v)) for k, v in said.items()}))  # fmt: skip
    neurons_table(view, layer, top)
    if has_head(view):
        alone = mlp_alone(name, device, ids, layer, position)
        vocab = cache.vocabulary(name, device)
        chart("mlp_alone", (view.key, ids, layer, position), viz.topk_bar,
              [(vocab[i], p) for i, p in alone],
              title=_("layer {n}'s MLP output alone at '{token}'", **said),
              filename="mlp_alone")  # fmt: skip
        st.caption(_("What the MLP's output alone says: its vector for this token read through "
                     "the model's final norm and output head, as the logit lens reads the "
                     "stream, without the rest of the stream."))  # fmt: skip
    if guess is not None and token is not None:
        knock_out(view, ids, position, token, layer, n_layers, guess, [n for n, _a in top])


def neurons_table(view: View, layer: int, top: list[tuple[int, float]]) -> None:
    """Each named neuron's activation and the tokens it pushes up and down when it fires."""
    if not has_head(view):
        return
    name, device = view.model_name, view.device
    vocab = cache.vocabulary(name, device)
    found = neuron_pushes(name, device, layer, tuple(n for n, _a in top))

    def listed(ranked: list) -> str:
        return ", ".join(f"{vocab[i]} ({x:+.2f})" for i, x in ranked)

    st.dataframe([{_("neuron"): _("neuron {n}", n=n), _("activation"): round(a, 3),
                   _("pushes up"): listed(up), _("pushes down"): listed(down)}
                  for (n, a), (up, down) in zip(top, found, strict=True)],
                 hide_index=True)  # fmt: skip
    st.caption(_("What a neuron pushes when it fires: its row of W_out through the "
                 "unembedding W_U (w_out[n] @ W_U, its direct logit effect), the logit change "
                 "per unit of activation. This direct reading ignores the norms in between (a "
                 "post-norm model such as mlm puts a LayerNorm after every sublayer) and every "
                 "later layer."))  # fmt: skip


def knock_out(view: View, ids: tuple[int, ...], position: int, token: int, layer: int,
              n_layers: int, guess: Guess, named: list[int]) -> None:  # fmt: skip
    """Each layer's MLP knocked out alone (one batched pass), then this layer's MLP, or some
    of its `named` neurons, knocked out with the page's prediction before and after."""
    name, device = view.model_name, view.device
    runs = (CLEAN, *(RunOptions(ablate_mlp=[n]) for n in range(n_layers)))
    moved, clean = mlp_effects(cache.log_probs(ids, name, device, runs, (position,)), (token,))
    worst = most_harmful(moved)
    each = "; ".join(_("layer {n}", n=n + 1) + f" {e:+.3f}" for n, e in enumerate(moved))
    vocab = cache.vocabulary(name, device)
    st.caption(_("Each layer's MLP knocked out alone (its mlp_out set to 0, everything after "
                 "it recomputed), the change in log p({token}): {each}. Layer {n}'s matters "
                 "most: p {before} → {after}.", token=md_escape(vocab[token]), each=each,
                 n=worst + 1, before=format(np.exp(clean), ".2f"),
                 after=format(np.exp(clean + moved[worst]), ".2f")))  # fmt: skip
    ss = st.session_state  # neurons named for another layer or token are not offered here
    ss["mlp_knock_neurons"] = [n for n in ss.get("mlp_knock_neurons") or [] if n in named]
    left, right = st.columns([1, 2])
    whole = left.toggle(_("Knock out layer {n}'s MLP", n=layer + 1), key="mlp_knock")
    picked = right.multiselect(_("Neurons of layer {n} to knock out", n=layer + 1), named,
                               key="mlp_knock_neurons", format_func=lambda n: _("neuron {n}", n=n),
                               placeholder=_("Pick neurons…"))  # fmt: skip
    if not whole and not picked:
        return
    options = RunOptions(ablate_mlp=[layer] if whole else (),
                         ablate_neurons=[(layer, n) for n in picked])  # fmt: skip
    if picked and not whole:
        st.caption(_("A knocked-out neuron's activation (mlp_post) is set to 0 before the "
                     "MLP's output projection W_out; everything after it is "
                     "recomputed."))  # fmt: skip
    before, after = st.columns(2)
    with before:
        guess(CLEAN, "mlp_guess_clean")
    with after:
        guess(options, "mlp_guess_out")


def token_guess(view: View, t: Trace, position: int) -> tuple[Guess, int] | None:
    """For a page without a prediction of its own (tokens): the model's output at the token
    (an encoder's guess there, a decoder's next token), and its first guess; None without
    an output head."""
    if not has_head(view):
        return None
    name, device, ids = view.model_name, view.device, tuple(int(i) for i in t.ids)
    specials = list(cache.special_ids(name, device).values())
    vocab = cache.vocabulary(name, device)

    def probs(options: RunOptions) -> np.ndarray:
        logits = cache.get_trace_ids(ids, name, device, options).logits[[position]]
        return prediction_probs(logits, specials)[0]

    def draw(options: RunOptions, key: str) -> None:
        p = probs(options)
        ranked = [(vocab[i], float(p[i])) for i in np.argsort(-p, kind="stable")[:TOP]]
        how = {"token": t.tokens[position], "options": described(options)}
        chart(key, (view.key, ids, position, options), viz.topk_bar, ranked,
              title=_("the output at '{token}', {options}", **how), filename=key)  # fmt: skip

    return draw, int(np.argmax(probs(CLEAN)))



def token_mlp(view: View, position: int) -> None:
    """The tokens page's section: the shared sentence's token at `position`, the model's
    output there before and after a knock-out."""
    guess, token = token_guess(view, view.trace, position) or (None, None)
    inside_mlp(view, view.trace, position, guess, token)
