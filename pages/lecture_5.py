"""Lecture mode, step 5 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_5",
)
