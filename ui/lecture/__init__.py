"""Lecture mode: the lecture's steps in order, each one idea on the real models, with a
question for the class before the model's answer, and a presenter mode for a projector.

    syllabus.py   STEPS, the ordered list of step modules; OLD_NUMBERS (/lecture_5 links)
    steps/        one module per step: SLUG, TITLE, IDEA, draw()
    kit.py        what steps share: pick a model, predict then reveal, the step's text box
    frame.py      a step's page (header, previous / next, presenter mode), the overview and
                  the st.Page of each (app.py navigates to them; no file in pages/)
    classroom.py  a class together (?class=CODE): the join code, following the teacher,
                  every predict() a live poll (the store: classroom/, docs/CLASSROOM.md)

Every sentence is an i18n `_()` message (a step's TITLE and IDEA, its choices: `N_()`
constants, shown with `_()`, kept and compared as themselves); the Korean is in
locale/ko/drafts/lecture.po (python -m i18n.catalogue merges and compiles it).
"""
