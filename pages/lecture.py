"""Lecture mode: the overview of the lecture's steps."""

from ui.lecture import lecture_step

lecture_step(
    "lecture",
)
