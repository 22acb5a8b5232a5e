"""The lecture's step right after positional encoding: train it in front of the class.
Without positions an encoder sees a set: can it still learn to reverse? to count?"""

from __future__ import annotations

import streamlit as st

from i18n import N_, _
from ui.figures import chart
from ui.lecture.kit import predict
from ui.parts import learn
from viz.learning import learning_curve, toy_answer

SLUG = "watch-it-learn"  # its address (/lecture-watch-it-learn); it never changes
TITLE = N_("Watch it learn")
IDEA = N_("Trained live: without positions a tiny encoder can count, but never reverse.")
PAIR = ("reverse", "histogram")  # trained side by side, both without positions
SECONDS = 30  # how long the live run trains them
NAMES = {"reverse": N_("reverse"), "histogram": N_("count (histogram)")}
CHOICES = [N_("both"), N_("reverse only"), N_("count only"), N_("neither")]  # ids, shown by _()


def answer(runs: dict[str, dict]) -> str:
    """The class's choice that the measured runs without positions bear out (≥ 95% exact)."""
    can = [runs[task]["accuracy"] >= 0.95 for task in PAIR]
    return CHOICES[{(True, True): 0, (True, False): 1, (False, True): 2}.get(tuple(can), 3)]


def measured_curves() -> None:
    """The calibration's curves: held-out exact match against seconds of training."""
    series = {}
    for task in PAIR:
        for on in ("on", "off"):
            run = learn.measured(task, on)
            label = (_("{task}, with positions", task=_(NAMES[task])) if on == "on"
                     else _("{task}, without positions", task=_(NAMES[task])))  # fmt: skip
            series[label] = ([p[1] for p in run["curve"]], [p[3] for p in run["curve"]])
    chart("l_learn_measured", learn.report()["measured"], learning_curve, series,
          _("measured: whole sequences right, as training goes on"), _("held-out exact match"),
          x_title=_("seconds of training"), percent=True,
          filename="lecture_learning")  # fmt: skip


def side_by_side(live, training: bool) -> None:
    """The two live runs, each with its accuracy curve and its answer for one sequence."""
    for column, run in zip(st.columns(2), live.runs, strict=True):
        with column:
            st.markdown("**" + _("{task}, without positions", task=_(NAMES[run.setup.task]))
                        + "**")  # fmt: skip
            steps = [p.step for p in run.points]
            chart(f"l_learn_{run.setup.task}", None, learning_curve,
                  {_("whole sequences"): (steps, [p.accuracy for p in run.points]),
                   _("tokens"): (steps, [p.token_accuracy for p in run.points])},
                  _("held-out accuracy"), _("accuracy"), x_title=_("training step"),
                  percent=True, **learn.LIVE)  # fmt: skip
            tokens = [str(int(t)) for t in run.example]
            chart(f"l_learn_{run.setup.task}_answer", None, toy_answer, tokens,
                  [str(int(t)) for t in run.latest.output],
                  [str(int(t)) for t in run.example_answer],
                  _("its answer at step {step:,}", step=run.latest.step),
                  **learn.LIVE)  # fmt: skip
            if not training:
                st.caption(learn.ended_note(run))


def draw() -> None:
    runs = {task: learn.measured(task, "off") for task in PAIR}
    if not all(runs.values()) or not all(learn.measured(t, "on") for t in PAIR):
        st.error(_("The calibration report (assets/toy_report.json) is missing: run "
                   "`python bench/bench_toy.py`."))  # fmt: skip
        return
    said = answer(runs)
    why = _("Measured with the shipped defaults in {seconds:.0f} s on one thread: without "
            "positions {reversed:.1%} of the reversed sequences were right ({tokens:.0%} of "
            "the tokens: what the set alone tells), and {counted:.1%} of the counts. "
            "Reversing needs to know which token came last; counting only needs the set.",
            seconds=runs["reverse"]["seconds"], reversed=runs["reverse"]["accuracy"],
            tokens=runs["reverse"]["token_accuracy"],
            counted=runs["histogram"]["accuracy"])  # fmt: skip
    if not predict("l_learn", _("A tiny encoder is trained from scratch **without positional "
                                "encoding**. Can it learn to *reverse* a sequence of {n} "
                                "tokens? To *count* how often each token occurs in it?", n=8),
                   CHOICES, said, why, label=_):  # fmt: skip
        return
    measured_curves()
    from model.toy import ToySetup  # PyTorch: only once the answer is revealed

    live = learn.current("lecture")
    st.button(_("Train both now, side by side ({seconds} s)", seconds=SECONDS),
              key="l_learn_train", type="primary", icon=":material/play_arrow:",
              disabled=live is not None and not live.ended, on_click=learn.start,
              args=("lecture", [ToySetup(task=t, positions="none") for t in PAIR],
                    SECONDS))  # fmt: skip
    learn.watch("lecture", side_by_side)
