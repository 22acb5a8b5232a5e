"""Transformer Glassbox's model: a Transformer from scratch that shows its work.

import model
bundle = model.load("mlm")          # "mlm" | "clm" | a checkpoint folder
trace = bundle.trace("The cat sat on the mat.")
"""

from model.bundle import Bundle, Generation, filter_logits, load, pick_device
from model.trace import LayerTrace, Trace
from model.transformer import Config, attention, binary_encoding, causal_mask, sinusoidal_encoding

__all__ = [
    "Bundle",
    "Config",
    "Generation",
    "LayerTrace",
    "Trace",
    "attention",
    "binary_encoding",
    "causal_mask",
    "filter_logits",
    "load",
    "pick_device",
    "sinusoidal_encoding",
]
