"""Lecture mode, step 6 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_6",
)
