"""Watch it learn: a tiny Transformer trained live in the page, and why positions matter;
then a translator trained live, its cross-attention forming."""

import streamlit as st

from i18n import N_, _
from ui.frame import frame
from ui.parts import learn
from ui.show import lazy_sections
from ui.view import Opened


def drawn(live, training: bool) -> None:
    """The run: while it trains, the latest update; after, the snapshot the slider picks."""
    run = live.runs[0]
    snap, mark = run.latest, None
    if not training:
        st.success(learn.ended_note(run), icon="🏁")
        snap = learn.pick_snapshot("learn_snapshot", run)
        mark = snap.step
    learn.curves("learn", run, mark)
    learn.inside("learn", run, snap)


def expected(task: str, positions: str) -> None:
    """Before a run: what the calibration measured for this task (assets/toy_report.json)."""
    on = "off" if positions == "none" else "on"
    run = learn.measured(task, on)
    if run is None:
        st.caption(_("No calibration report yet (python bench/bench_toy.py writes it)."))
        return
    values = {"date": learn.report()["measured"], "task": _(learn.TASK_WORDS[task]),
              "seconds": run["seconds"], "steps": run["steps"], "accuracy": run["accuracy"],
              "tokens": run["token_accuracy"], "to95": run["seconds_to_95"] or 0}  # fmt: skip
    with_positions = on == "on"
    if run["seconds_to_95"] and with_positions:
        text = _("Measured with the defaults ({date}, one thread): {task}, with positions, "
                 "reached 95% after {to95:.1f} s; after {seconds:.0f} s ({steps:,} steps) "
                 "{accuracy:.1%} of the held-out sequences were right, {tokens:.1%} of their "
                 "tokens.", **values)  # fmt: skip
    elif run["seconds_to_95"]:
        text = _("Measured with the defaults ({date}, one thread): {task}, without positions, "
                 "reached 95% after {to95:.1f} s; after {seconds:.0f} s ({steps:,} steps) "
                 "{accuracy:.1%} of the held-out sequences were right, {tokens:.1%} of their "
                 "tokens.", **values)  # fmt: skip
    elif with_positions:
        text = _("Measured with the defaults ({date}, one thread): {task}, with positions, "
                 "never reached 95%; after {seconds:.0f} s ({steps:,} steps) {accuracy:.1%} "
                 "of the held-out sequences were right, {tokens:.1%} of their tokens.",
                 **values)  # fmt: skip
    else:
        text = _("Measured with the defaults ({date}, one thread): {task}, without positions, "
                 "never reached 95%; after {seconds:.0f} s ({steps:,} steps) {accuracy:.1%} "
                 "of the held-out sequences were right, {tokens:.1%} of their tokens.",
                 **values)  # fmt: skip
    st.caption(text)


def toy_tasks() -> None:
    """The toy tasks: the choices (fixed while a run trains), Train, the run."""
    live = learn.current("learn")
    training = live is not None and not live.ended
    learn.choose("learn", disabled=training)
    try:
        setup = learn.setup_of("learn")
    except ValueError as err:
        st.warning(_("{error}: pick another width or number of heads.", error=err), icon="⚠️")
        return
    st.button(_("Train"), key="learn_train", type="primary", icon=":material/play_arrow:",
              disabled=training, on_click=learn.start_page, args=("learn",))  # fmt: skip
    if live is None:
        expected(setup.task, setup.positions)
        st.info(_("Press **Train**: the curves, the attention and the answers update twice a "
                  "second while it learns."), icon="🏋️")  # fmt: skip
        return
    # The run: redrawn twice a second while it trains, then scrubbed through.
    learn.watch("learn", drawn)


def draw(opened: Opened) -> None:
    # Two parts, as tabs (only the open one is drawn): the toy tasks, and a translator's
    # cross-attention forming. One training per session: a new one stops the other.
    lazy_sections("learn", {
        "toys": (N_("Toy tasks"), toy_tasks),
        "cross": (N_("Cross-attention forming"), lambda: learn.cross_part(opened.device)),
    })  # fmt: skip


frame(
    "learn",
    draw,
    _(
        "Every other page shows a finished model. Here the class trains one: a tiny encoder "
        "(the app's own Transformer layers, 1-3 of them) learns a toy task from scratch in "
        "seconds, on sequences of 8 tokens over 10 symbols. Watch the loss fall, the attention "
        "form and the answers turn green; then scrub back through the run. Try *reverse* "
        "with positions and without: attention alone sees a set, so without positions it "
        "cannot tell which token came last, but it can still count (*histogram*). The second "
        "tab trains a translator and watches its cross-attention become an alignment."
    ),
)
