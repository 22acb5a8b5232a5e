"""The lecture's step on attention: "bank" in two sentences."""

from __future__ import annotations

import streamlit as st

import analysis
import model
import viz
from analysis.query import head_links
from i18n import N_, _
from model.examples import PAIRS
from ui import cache
from ui.figures import chart
from ui.lecture.kit import predict, try_your_own, words
from ui.registry import BY_KEY
from ui.state import read_tab

SLUG = "attention"  # its address (/lecture-attention); it never changes
TITLE = N_("Attention")
IDEA = N_(
    "Each word looks at every other word, with weights that depend on the sentence: “bank” by"
    " the river and “bank” with the cash."
)
RIVER, CASH = PAIRS[0]


def both_links(name: str, device: str) -> tuple[float, int, int]:
    """(lift, layer, head): the head of model `name` where "bank" singles out "river" in the
    river sentence and "cash" in the cash sentence best (the smaller of the two lifts over
    the other words' weight on the same key, analysis.query.head_links)."""
    lifts = []
    for text, key in ((RIVER, "river"), (CASH, "cash")):
        t = cache.get_trace(text, name, device)
        if "bank" not in t.tokens or key not in t.tokens:
            return (-1.0, 0, 0)
        links = head_links(t.attention_stack(), t.tokens, t.tokens.index("bank"),
                           t.tokens.index(key), t.causal)
        lifts.append({(h.layer, h.head): h.lift for h in links})
    best = max(lifts[0], key=lambda lh: min(lifts[0][lh], lifts[1][lh]))
    return (min(lifts[0][best], lifts[1][best]), *best)


def draw() -> None:
    device = model.pick_device(read_tab().device)
    offered = cache.models_for(BY_KEY["attention"])
    shipped = [n for n in offered if n in model.shipped()] or offered[:1]
    found = {name: both_links(name, device) for name in shipped}
    name = max(found, key=lambda n: found[n][0])
    layer, head = found[name][1:]
    t = cache.get_trace(RIVER, name, device)
    if "bank" not in t.tokens:
        st.info(_("No model here splits the river sentence into a token “bank”."))
        return
    row = t.layers[layer].attention[head][t.tokens.index("bank")]
    keys = [i for i in analysis.word_positions(t.tokens) if t.tokens[i] not in ("bank", ".")]
    key = max(keys, key=lambda i: row[i])
    q = t.tokens.index("bank")
    where = _("layer {layer}, head {head} of {model}", layer=layer + 1, head=head + 1,
              model=name)  # fmt: skip
    if predict("l2", _("In *{sentence}*, which word does “bank” attend to most? (We look at "
                       "the head that best singles out “river” here and “cash” in the cash "
                       "sentence.)", sentence=RIVER),
               [w for w in words(t) if w != "bank"], t.tokens[key],
               _("In {where}, with weight {weight:.2f}.", where=where,
                 weight=t.layers[layer].attention[head][q, key])):  # fmt: skip
        for n, text in enumerate((RIVER, CASH)):
            tt = cache.get_trace(text, name, device)
            i = tt.tokens.index("bank")
            chart(f"l2_row_{n}", (text, name, layer, head), viz.attention_row,
                  tt.layers[layer].attention[head][i], tt.tokens, "bank", query_index=i,
                  title=_("“bank” attends to… ({where})", where=where),
                  filename="lecture_bank")  # fmt: skip
        st.caption(_("The same word, two sentences, two different rows: the weights depend "
                     "on the input itself. The Attention page follows any query."))
    with st.expander(_("Try your own sentence"), expanded=False):
        text = try_your_own("l2_own", _("A sentence"), "I sat on the bank of the river.")
        if text:
            tt = cache.get_trace(text, name, device)
            i = analysis.default_token(tt.tokens)
            chart("l2_own_row", (text, name, layer, head), viz.attention_row,
                  tt.layers[layer].attention[head][i], tt.tokens, tt.tokens[i], query_index=i,
                  title=_("“{token}” attends to… ({where})", token=tt.tokens[i], where=where),
                  filename="lecture_own")  # fmt: skip
