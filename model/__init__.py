"""Transformer Glassbox's models: what the app loads and runs, each showing its work.

    import model
    m = model.load("mlm")                 # a catalogue name, or any checkpoint folder
    m.name, m.kind, m.capabilities        # "mlm", "encoder", {"trace", "fill_mask"}
    t = m.trace("The cat sat on the mat.")
    m.trace("The cat sat on the mat.", ablate=[(1, 2)])     # an experiment: a Trace too
    m.trace("The cat sat on the mat.", ablate_mlp=[0])      # layer 0's MLP knocked out

Importing this package does not import torch (the catalogue, the Trace and the numpy
encodings are torch-free); `load` imports the implementation a checkpoint needs.
"""

from __future__ import annotations

import importlib
from typing import Any

from model.contract import (
    ATTRIBUTIONS,
    Attribution,
    Candidates,
    Generation,
    Model,
    Sampling,
    Translation,
    Unsupported,
    draw,
)
from model.encoding import additive_mask, binary_encoding, causal_mask, sinusoidal_encoding
from model.kinds import CAPABILITIES, KINDS
from model.options import ABLATIONS, CLEAN, MLP_STACKS, SITES, STACKS, Patch, RunOptions
from model.registry import (
    MODELS_DIR,
    ModelInfo,
    catalogue,
    load,
    pick_device,
    read_info,
    register,
    shipped,
    unregister,
)
from model.tokenizer import Encoded
from model.trace import LayerTrace, Trace

# Names that need torch, imported on first use: model.attention, model.Config, ...
_LAZY = {
    "Config": "model.transformer",
    "attention": "model.transformer",
    "filter_logits": "model.lm",
    "TransformerLM": "model.lm",
    "TransformerSeq2Seq": "model.seq2seq",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'model' has no attribute {name!r}")


__all__ = [
    "ABLATIONS",
    "ATTRIBUTIONS",
    "CAPABILITIES",
    "CLEAN",
    "SITES",
    "STACKS",
    "MLP_STACKS",
    "Attribution",
    "Encoded",
    "Patch",
    "RunOptions",
    "KINDS",
    "MODELS_DIR",
    "Candidates",
    "Config",
    "Generation",
    "LayerTrace",
    "Model",
    "ModelInfo",
    "Sampling",
    "Trace",
    "TransformerLM",
    "TransformerSeq2Seq",
    "Translation",
    "Unsupported",
    "additive_mask",
    "attention",
    "binary_encoding",
    "catalogue",
    "causal_mask",
    "draw",
    "filter_logits",
    "load",
    "pick_device",
    "read_info",
    "register",
    "shipped",
    "sinusoidal_encoding",
    "unregister",
]
