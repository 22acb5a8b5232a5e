"""The lab of slide 48: students build the Transformer, checked against the shipped models.

    import lab
    p = lab.params("mlm", layer=0)      # the shipped weights, as plain tensors
    lab.check("attention", attention)    # -> Report: .passed, .message, .figure
    lab.encode("clm", "the dog"), lab.decode("clm", ids), lab.tokens("mlm", ids)

lab/transformer_lab.ipynb is the notebook; lab/solutions.py the reference; lab/mistakes.py
the classic mistakes (also for the app's "Spot the bug", lab/spot.py); `python -m lab
check FILE` checks a .py or .ipynb file. Names load on first use (torch, plotly).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "check": "lab.checks",
    "Report": "lab.checks",
    "EXERCISES": "lab.mistakes",
    "MISTAKES": "lab.mistakes",
    "params": "lab.weights",
    "encode": "lab.weights",
    "decode": "lab.weights",
    "tokens": "lab.weights",
    "spot_the_bug": "lab.spot",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lab' has no attribute {name!r}")
