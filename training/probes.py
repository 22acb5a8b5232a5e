"""The rule that keeps the lecture's sentences out of every corpus: the probes
(model.examples.PROBES) are what the app shows, so no training sentence may equal or contain
one. Both corpus builders (training/data.py, training/grammar.py) read it from here."""

from __future__ import annotations

import re

from model.examples import PROBES


def normalize(text: str) -> str:
    """Lowercase, punctuation to spaces, whitespace collapsed: the form used to compare."""
    text = re.sub(r"[\W_]+", " ", text.lower())
    return " ".join(text.split())


_NORMALIZED_PROBES = [normalize(p) for p in PROBES]


def contains_probe(text: str) -> bool:
    """Whether the normalized `text` equals or contains the normalized form of any probe."""
    norm = normalize(text)
    return any(p in norm for p in _NORMALIZED_PROBES)
