"""Checkpoints: a folder with safetensors weights, the JSON config and the tokenizer.

Loading never executes code from the checkpoint: weights come from safetensors, the
config from JSON, the tokenizer from its JSON file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, TypeVar

import torch
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer
from torch import nn

from model.transformer import Config, build

C = TypeVar("C")

WEIGHTS, CONFIG, TOKENIZER, TRAINING = (
    "model.safetensors",
    "config.json",
    "tokenizer.json",
    "training.json",
)


def save_checkpoint(
    model: nn.Module,
    cfg: Any,
    tokenizer: Tokenizer | None,
    directory: str | Path,
    training: dict | None = None,
) -> Path:
    """Write weights, config (a dataclass), the tokenizer (a vision model has none) and the
    training facts, if given, into a folder. Any kind of model: its config says which."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # tied parameters (the shared embedding of an encoder-decoder) are stored once
    state, seen = {}, set()
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            state[name] = tensor.detach().cpu().contiguous()
    save_file(state, str(directory / WEIGHTS))
    (directory / CONFIG).write_text(json.dumps(asdict(cfg), indent=2) + "\n")
    if tokenizer is not None:
        tokenizer.save(str(directory / TOKENIZER))
    if training is not None:
        (directory / TRAINING).write_text(json.dumps(training, indent=2) + "\n")
    return directory


def read_config(directory: str | Path, cls: type[C], **defaults: Any) -> C:
    """The config dataclass `cls` stored in a checkpoint folder: unknown keys are ignored,
    `defaults` fill keys that older checkpoints lack."""
    raw = {**defaults, **json.loads((Path(directory) / CONFIG).read_text())}
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in raw.items() if k in known})


def read_weights(directory: str | Path) -> dict[str, torch.Tensor]:
    """The weights of a checkpoint folder, from safetensors only (no code is executed)."""
    path = Path(directory) / WEIGHTS
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint in {directory} (missing {WEIGHTS})")
    return load_file(str(path))


def load_config(directory: str | Path) -> Config:
    """The Transformer's Config stored in a checkpoint folder (unknown keys are ignored)."""
    return read_config(directory, Config, tie_embeddings=False)  # older ones were untied


def load_checkpoint(
    directory: str | Path, device: torch.device | str = "cpu"
) -> tuple[nn.Module, Config, Tokenizer]:
    """Model (in eval mode, on `device`), its config and its tokenizer."""
    directory = Path(directory)
    state = read_weights(directory)
    cfg = load_config(directory)
    model = build(cfg)
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = {"decoder.embed.weight"} | ({"unembed.weight"} if cfg.tie_embeddings else set())
    if unexpected or set(missing) - tied:
        raise ValueError(f"checkpoint does not match its config: {missing} {unexpected}")
    tokenizer = Tokenizer.from_file(str(directory / TOKENIZER))
    return model.to(device).eval(), cfg, tokenizer
