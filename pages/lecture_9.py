"""Lecture mode, step 9 (ui/lessons.py)."""

from ui.lecture import lecture_step

lecture_step(
    "lecture_9",
)
