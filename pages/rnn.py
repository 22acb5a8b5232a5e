"""Translation 1. From RNNs to attention: an LSTM squeezes the sentence into one vector."""

import streamlit as st

import viz
from i18n import _
from model import Trace
from ui import cache
from ui.figures import chart
from ui.frame import frame
from ui.parts.translation import reference, translated
from ui.registry import BY_KEY
from ui.show import download_csv, download_json
from ui.view import Opened

INTRO = _(
    "A recurrent network reads a sentence **one word at a time**, folding each word into "
    "its hidden state. An encoder-decoder LSTM hands the decoder only the encoder's last "
    "state, **one context vector**, from which it must write the whole translation: the "
    "bottleneck. It cannot look back at the words, and it cannot read them in parallel. "
    "The Transformer's decoder looks back at every source word through cross-attention."
)


def verdict_of(name: str, exact: bool) -> str:
    """ "lstm: exact" or "lstm: wrong", in the session's language."""
    return _("{model}: exact", model=name) if exact else _("{model}: wrong", model=name)


def draw(opened: Opened) -> Trace:
    """The page below its header (ui.frame.body): drawn again for each new input."""
    name, device = opened.model_name, opened.device
    text, out, t = translated(opened)
    src = t.encoder

    # The LSTM's translation beside the Transformer's (and the grammar's, for a preset)
    # (the Transformer's is filled in last: its decoding is the slowest step here, and the
    # charts below need only the LSTM's trace)
    others = cache.models_for(BY_KEY["cross_attention"])
    columns = st.columns(3 if others else 2)
    with columns[0]:
        st.markdown(_("**{model}** (LSTM, one context vector)", model=name))
        st.code(out.text or _("(nothing)"), language=None, wrap_lines=True)
    later = columns[1].container() if others else None
    expected = reference(text)
    with columns[-1]:
        st.markdown(_("**The grammar's translation**"))
        st.code(expected or _("(only known for the lecture's examples)"), language=None,
                wrap_lines=True)  # fmt: skip
    verdict = st.empty()

    # Word by word: the hidden state after each source word, the context vector, the decoder
    st.subheader(_("Reading word by word"))
    where = (text, name, device)
    chart(
        "rnn_encoder", where, viz.matrix_heatmap, src.states, src.tokens,
        title=_("encoder: the hidden state after each word (rows), {n} numbers each",
                n=src.states.shape[1]),
        filename="lstm_encoder_states",
    )  # fmt: skip
    chart(
        "rnn_context", where, viz.matrix_heatmap, t.context[None, :], [_("context")],
        title=_("the context vector: the encoder's last state, all the decoder gets of the "
                "source"),
        filename="lstm_context",
    )  # fmt: skip
    chart(
        "rnn_decoder", where, viz.matrix_heatmap, t.states, t.tokens,
        title=_("decoder: its hidden state after each word it writes (it starts from the "
                "context)"),
        filename="lstm_decoder_states",
    )  # fmt: skip
    st.caption(_(
        "Each row is a vector of hidden-state numbers (red positive, blue negative). The last "
        "encoder row is the context vector; the decoder starts from it and never sees the "
        "source again, so a long sentence must fit in these few numbers."
    ))

    # The bottleneck, measured: exact match by sentence length (from the stored report)
    st.subheader(_("The bottleneck, measured"))
    report = cache.translation_report().get("models", {})
    if report:
        lengths = list(range(1, 9))
        series = {
            model_name: [r["by_clauses"].get(str(n), {}).get("exact_match") for n in lengths]
            for model_name, r in report.items()
        }
        chart("rnn_by_length", "report", viz.accuracy_by_length, lengths, series,
              filename="exact_match_by_clauses")  # fmt: skip
        eight = {m: s[-1] for m, s in series.items() if s[-1] is not None}
        st.caption(_(
            "Exact match on the held-out test sentences, by number of clauses. At eight "
            "clauses: {scores} (assets/models/translation_evaluation.json).",
            scores=", ".join(f"{m} {v:.0%}" for m, v in eight.items()),
        ))
    else:
        st.info(_("No evaluation report yet: run `python -m training.translation evaluate`."))

    dims = [str(j) for j in range(src.states.shape[1])]
    download_csv(
        _("Encoder states (CSV)"), src.states, src.tokens, dims, "rnn_dl_csv", "lstm_states.csv"
    )
    record = {"source": text, "model": name, "translation": out.text, "tokens": out.tokens}
    record |= {
        "probabilities": out.probs,
        "source_tokens": src.tokens,
        "encoder_states": src.states,
    }
    record |= {"context": t.context, "decoder_tokens": t.tokens, "decoder_states": t.states}
    download_json(_("States and translation (JSON)"), record, "rnn_dl_json",
                  "lstm_translation.json")

    other = None
    if later is not None:
        with later:
            other = cache.translation_text(text, others[0], device)  # its words alone
            st.markdown(_("**{model}** (Transformer, cross-attention)", model=others[0]))
            st.code(other or _("(nothing)"), language=None, wrap_lines=True)
    if expected:
        verdicts = [verdict_of(name, out.text == expected)]
        if other is not None:
            verdicts.append(verdict_of(others[0], other == expected))
        verdict.caption(" · ".join(verdicts))
    return t  # the frame writes its timing after the page: the first chart leaves first


frame(
    "rnn",
    draw,
    INTRO,
)
