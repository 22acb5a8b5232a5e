"""Lecture mode, step 2 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_2",
)
