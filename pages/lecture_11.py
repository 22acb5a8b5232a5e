"""Lecture mode, step 11 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_11",
)
