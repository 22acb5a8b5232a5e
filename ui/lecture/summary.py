"""What a class got right: its summary for the teacher, at the close and on demand.

One row per step that had a poll, in the lecture's order: the votes, the share that picked
the model's answer (the votes lock at the reveal, so this is the class before the answer
was shown) and the commonest other answer; as a chart on the projector, and the same data
as CSV (`python -m classroom results CODE --csv`'s contract) to download.
"""

from __future__ import annotations

import streamlit as st

import classroom
import viz
from i18n import _, ngettext
from ui.figures import chart
from ui.show import md_escape
from viz._common import update_axes

Steps = dict[str, str]  # a step's slug -> "2. Attention", in the lecture's order


def step_of(poll: str, steps: Steps) -> str:
    """A poll's place in the lecture, as a person reads it: "2. Attention" (its step's
    number and title), with the question's own name after a slash ("8. ... / bank")."""
    slug, _sep, name = poll.partition("/")
    title = steps.get(slug, slug)
    return f"{title} / {name}" if name else title


def ordered(polls: list[classroom.PollSummary], steps: Steps) -> list[classroom.PollSummary]:
    """The polls in the lecture's order (the store keeps them by name)."""
    order = {slug: n for n, slug in enumerate(steps)}
    return sorted(polls, key=lambda p: (order.get(p.poll.partition("/")[0], len(order)), p.poll))


def right_bars(polls: list[classroom.PollSummary], steps: Steps) -> viz.Figure:
    """One bar per revealed poll: the share of the class that picked the model's answer."""
    shares = [(step_of(p.poll, steps), p.right) for p in polls if p.right is not None]
    fig = viz.topk_bar(shares, title=_("picked the model's answer, before the reveal"))
    update_axes(fig["layout"], "x", title={"text": _("share of the class")}, range=[0, 1.15],
                autorange=False, tickvals=[0, 0.25, 0.5, 0.75, 1],
                ticktext=["0%", "25%", "50%", "75%", "100%"])  # fmt: skip
    return fig


def show(code: str, steps: Steps) -> None:
    """The class's summary: a chart, a line per step, and the CSV to download."""
    try:
        s = classroom.Store()
        polls, results = ordered(s.summary(code), steps), s.results(code)
    except classroom.ClassError:
        st.warning(_("The class's results cannot be read right now."), icon=":material/cloud_off:")
        return
    st.markdown(ngettext("**{n}** student joined the class.", "**{n}** students joined the class.",
                         results["students"]))  # fmt: skip
    asked = [p for p in polls if p.votes]
    if not asked:
        st.info(_("No step had a vote: there is nothing to sum up yet."), icon=":material/info:")
        return
    if any(p.right is not None for p in asked):
        key = tuple((p.poll, p.votes, p.right) for p in asked)
        chart(f"class_summary_{code}", (code, key), right_bars, asked, steps,
              filename="class_summary")  # fmt: skip
    lines = []
    for p in asked:
        right = "–" if p.right is None else f"{p.right:.0%}"
        other = md_escape(p.other) if p.other is not None else "–"
        step = md_escape(step_of(p.poll, steps))
        lines.append(ngettext("- **{step}**: {n} vote; {right} picked the model's answer; the "
                              "commonest other answer: {other}",
                              "- **{step}**: {n} votes; {right} picked the model's answer; the "
                              "commonest other answer: {other}", p.votes, step=step,
                              right=right, other=other))  # fmt: skip
    st.markdown("\n".join(lines))
    st.download_button(_("Download the results (CSV)"), classroom.results_csv(results),
                       file_name=f"class-{code}.csv", mime="text/csv", key=f"class_csv_{code}",
                       icon=":material/download:")  # fmt: skip
