"""Watch it learn: a tiny Transformer trained live in the page, and why positions matter."""

import streamlit as st

from ui.frame import frame
from ui.parts import learn
from ui.view import Opened

INTRO = (
    "Every other page shows a finished model. Here the class trains one: a tiny encoder "
    "(the app's own Transformer layers, 1-3 of them) learns a toy task from scratch in "
    "seconds, on sequences of 8 tokens over 10 symbols. Watch the loss fall, the attention "
    "form and the answers turn green; then scrub back through the run. Try *reverse* "
    "with positions and without: attention alone sees a set, so without positions it "
    "cannot tell which token came last, but it can still count (*histogram*)."
)


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
        st.caption("No calibration report yet (python bench/bench_toy.py writes it).")
        return
    reached = (f"reached 95% after {run['seconds_to_95']:.1f} s" if run["seconds_to_95"]
               else "never reached 95%")  # fmt: skip
    st.caption(
        f"Measured with the defaults ({learn.report()['measured']}, one thread): {task} with "
        f"positions {on} {reached}; after {run['seconds']:.0f} s ({run['steps']:,} steps) "
        f"{run['accuracy']:.1%} of the held-out sequences were right, "
        f"{run['token_accuracy']:.1%} of their tokens."
    )


def draw(opened: Opened) -> None:
    # The choices: fixed while a run trains.
    live = learn.current("learn")
    training = live is not None and not live.ended
    learn.choose("learn", disabled=training)
    try:
        setup = learn.setup_of("learn")
    except ValueError as err:
        st.warning(f"{err}: pick another width or number of heads.", icon="⚠️")
        return None
    st.button("Train", key="learn_train", type="primary", icon=":material/play_arrow:",
              disabled=training, on_click=learn.start_page, args=("learn",))  # fmt: skip
    if live is None:
        expected(setup.task, setup.positions)
        st.info("Press **Train**: the curves, the attention and the answers update twice a "
                "second while it learns.", icon="🏋️")  # fmt: skip
        return None
    # The run: redrawn twice a second while it trains, then scrubbed through.
    learn.watch("learn", drawn)
    return None


frame(
    "learn",
    draw,
    INTRO,
)
