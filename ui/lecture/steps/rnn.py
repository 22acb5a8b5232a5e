"""The lecture's step on rNNs and their bottleneck."""

from __future__ import annotations

import streamlit as st

import viz
from i18n import N_, _
from model.examples import TRANSLATION_EXAMPLES
from ui import cache
from ui.figures import chart
from ui.lecture.kit import pick, predict, try_your_own
from ui.show import md_escape

SLUG = "rnn-bottleneck"  # its address (/lecture-rnn-bottleneck); it never changes
TITLE = N_("RNNs and their bottleneck")
IDEA = N_(
    "An LSTM reads one word at a time and hands the decoder one context vector: long "
    "sentences do not fit."
)
BUCKETS = [N_("more than 80%"), N_("between 20% and 80%"), N_("less than 20%")]


def draw() -> None:
    report = cache.translation_report().get("models", {})
    name, device = pick("rnn")
    eight = list(TRANSLATION_EXAMPLES)[-1]
    st.markdown(_("The LSTM translates *i go to school*: **{korean}**.",
                  korean=cache.translate("i go to school", name, device).text))  # fmt: skip
    rate = report.get(name, {}).get("by_clauses", {}).get("8", {}).get("exact_match")
    if rate is None:
        st.info(_("No translation evaluation report is shipped: run training.translation "
                  "evaluate."))  # fmt: skip
        return
    answer = BUCKETS[0] if rate > 0.8 else BUCKETS[1] if rate >= 0.2 else BUCKETS[2]
    if predict("l1", _("A sentence of eight clauses must fit in the same one context vector. "
                       "How often does the LSTM translate such a sentence exactly right?"),
               BUCKETS, answer, _("Measured on held-out sentences: {rate:.1%} at eight "
                                  "clauses.", rate=rate), label=_):  # fmt: skip
        lengths = list(range(1, 9))
        series = {m: [r["by_clauses"].get(str(n), {}).get("exact_match") for n in lengths]
                  for m, r in report.items()}  # fmt: skip
        chart("l1_length", "report", viz.accuracy_by_length, lengths, series,
              filename="lecture_bottleneck")  # fmt: skip
        out = cache.translate(eight, name, device).text
        st.caption(_("Eight clauses, the LSTM writes: {korean}", korean=out))
    with st.expander(_("Try your own sentence"), expanded=False):
        text = try_your_own("l1_own", _("English (the toy grammar's words)"), "i go to school")
        out = cache.translate(text.lower(), name, device) if text else None
        if out and out.unknown:
            st.warning(_("Not in the toy grammar's vocabulary: {words}",
                         words=", ".join(md_escape(w) for w in out.unknown)))  # fmt: skip
        elif out:
            st.code(out.text or _("(nothing)"), language=None)
