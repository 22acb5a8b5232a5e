"""The lecture's steps, in the lecture's order (../shared/DESIGN.md): what Lecture mode
walks through. Titles and ideas are in ui/registry.py (LECTURE_STEPS); each step's drawing
lives in ui/lessons_early.py or ui/lessons_late.py."""

from __future__ import annotations

from ui import lessons_early as early
from ui import lessons_late as late
from ui.lecture import LectureStep
from ui.registry import LECTURE_STEPS

DRAW = [early.rnn, early.attention, early.qkv, early.embeddings, early.positions,
        early.softmax, late.heads, late.layer, late.cross, late.bert, late.gpt, late.vision]
STEPS: list[LectureStep] = [
    LectureStep(n, title, idea, draw)
    for n, ((title, idea), draw) in enumerate(zip(LECTURE_STEPS, DRAW, strict=True), 1)
]
