"""Lecture mode, step 7 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_7",
)
