"""Follow one query on the Attention page: its row for the chosen head, the heads where a
chosen key stands out for it (against the other tokens' weight on that key), and what an
encoder would guess if the query word were hidden."""

from __future__ import annotations

import streamlit as st

import analysis
import viz
from analysis.query import LINK_MIN_RATIO, LINK_MIN_WEIGHT, HeadLink, default_key, head_links
from i18n import _, particle
from model import Trace
from ui import cache
from ui.figures import chart
from ui.registry import BY_KEY
from ui.show import md_escape, token_labels, when_open
from ui.view import View

SHOWN_HEADS = 6


def _show_head(layer: int, head: int) -> None:
    """Send the page's layer and head pickers to this head."""
    st.session_state["att_layer"], st.session_state["att_head"] = layer, head


def _summary(best: HeadLink, query: str, key: str) -> str:
    said = {"q": md_escape(query), "k": md_escape(key), "layer": best.layer + 1,
            "head": best.head + 1, "weight": format(best.weight, ".2f"),
            "others": format(best.others, ".2f")}  # fmt: skip
    if best.link:
        return _("**{q} → {k}** stands out in layer {layer}, head {head}: weight {weight}, "
                 "while the other words give '{k}' {others} on average. A real link.", **said)
    if best.weight >= LINK_MIN_WEIGHT:
        return _("The strongest {q} → {k} is {weight} in layer {layer}, head {head}, but the "
                 "other words give '{k}' {others} on average: every token looks there, so this "
                 "is no link between '{q}' and '{k}'.", **said)  # fmt: skip
    return _("No head links {q} → {k}: the most it gets is {weight} (layer {layer}, head "
             "{head}, other words {others}). This model spreads that relation over many heads "
             "or does not draw it.", **said)  # fmt: skip


def masked_alternative(view: View, query: int) -> None:
    """The first encoder's guesses with the query word hidden ("he" -> he 67%, she 32%)."""
    encoders = cache.models_for(BY_KEY["masked"])
    t = view.trace
    if not encoders or t.tokens[query] == "[MASK]":
        return
    name = view.model_name if view.model_name in encoders else encoders[0]
    et = t if name == view.model_name else cache.get_trace(view.sentence, name, view.device)
    word, nth = t.tokens[query], t.tokens[: query + 1].count(t.tokens[query])
    same = [n for n, tok in enumerate(et.tokens) if tok == word]
    if len(same) < nth:  # the encoder cuts the sentence differently
        return
    where = same[nth - 1]
    mask = cache.special_ids(name, view.device)["[MASK]"]
    masked = tuple(mask if n == where else int(x) for n, x in enumerate(et.ids))
    hidden = [n for n, x in enumerate(masked) if x == mask]
    ranked = cache.fill_mask_ids(masked, name, view.device, 3)[hidden.index(where)]
    guesses = ", ".join(f"'{md_escape(w)}' {p:.0%}" for w, p in ranked)
    st.caption(_("With '{word}' hidden behind [MASK], the encoder {model} guesses {guesses}.",
                 word=md_escape(t.tokens[query]), model=name,
                 model_topic=particle(name, "은/는"), guesses=guesses))  # fmt: skip


def follow_query_box(view: View, layer: int, head: int, label: str) -> None:
    """`follow_query` in an expander, computed and drawn only while it is open (its ranking,
    chart, table and masked pass were a third of what a new sentence or head cost the
    attention page; README, Benchmarks)."""
    when_open(label, "att_query_open", ":material/manage_search:",
              lambda: follow_query(view, layer, head))  # fmt: skip


def follow_query(view: View, layer: int, head: int) -> None:
    """A query picker (default "bank"), its row in the chosen head, and the ranked heads."""
    t: Trace = view.trace
    words = analysis.word_positions(t.tokens) or list(range(len(t.tokens)))
    labels = token_labels(t.tokens)
    attention = t.attention_stack()
    c1, c2 = st.columns(2)
    start = words.index(analysis.default_token(t.tokens, ("bank", "he")))
    query = c1.selectbox(_("Query token"), words, key="att_query", format_func=labels.__getitem__,
                         index=start)  # fmt: skip
    keys = [i for i in words if i != query] or words
    first = default_key(t.tokens, query, attention)
    key = c2.selectbox(_("Key to look for"), keys, key="att_key", format_func=labels.__getitem__,
                       index=keys.index(first) if first in keys else 0)  # fmt: skip
    row = t.layers[layer].attention[head][query]
    chart("att_query_row", (view.key, layer, head, query), viz.attention_row, row, t.tokens,
          t.tokens[query], query_index=query,
          title=_("'{token}' attends to… (layer {layer}, head {head})", token=t.tokens[query],
                  layer=layer + 1, head=head + 1),
          filename=f"query_{query}")  # fmt: skip
    links = head_links(attention, t.tokens, query, key, t.causal)
    st.markdown(_summary(links[0], t.tokens[query], t.tokens[key]))
    table = [
        {_("layer"): h.layer + 1, _("head"): h.head + 1, f"{t.tokens[query]} → {t.tokens[key]}":
         round(h.weight, 3), _("other words → key (mean)"): round(h.others, 3),
         _("verdict"): _(h.verdict)}
        for h in links[:SHOWN_HEADS]
    ]  # fmt: skip
    st.dataframe(table, hide_index=True)
    best = links[0]
    st.button(_("Show layer {layer}, head {head} above", layer=best.layer + 1,
                head=best.head + 1), key="att_go",
              on_click=_show_head, args=(best.layer, best.head))  # fmt: skip
    limits = {"weight": LINK_MIN_WEIGHT, "ratio": format(LINK_MIN_RATIO, ".0f")}
    st.caption(
        _("Heads ranked by how far the query stands out: its weight on the key minus the mean "
          "weight the other words that can see the key give the same key. A link needs at "
          "least {weight} and {ratio}× the others' mean; a head where every token looks at the "
          "key shows a habit, not a link.", **limits)
        if t.causal
        else _("Heads ranked by how far the query stands out: its weight on the key minus the "
               "mean weight the other words give the same key. A link needs at least {weight} "
               "and {ratio}× the others' mean; a head where every token looks at the key shows "
               "a habit, not a link.", **limits)
    )
    masked_alternative(view, query)
