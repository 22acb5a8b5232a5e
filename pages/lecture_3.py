"""Lecture mode, step 3 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_3",
)
