"""Lecture mode, step 4 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_4",
)
