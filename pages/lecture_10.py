"""Lecture mode, step 10 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_10",
)
