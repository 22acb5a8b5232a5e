"""Lecture mode, step 12 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_12",
)
