"""Lecture mode, step 8 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_8",
)
