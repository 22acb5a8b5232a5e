"""Lecture mode, step 1 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_1",
)
