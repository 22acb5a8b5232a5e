"""Which models exist, what each can do, and `load`.

A model is a checkpoint folder whose `config.json` says its `kind`. The shipped ones are the
folders of assets/models/ (their folder name is the model's name); `register` adds any other
folder under a name (tests, a teacher's own checkpoint). The kind picks the implementation
class, imported only when a model of that kind is loaded, and the capabilities, known
without loading anything: the sidebar offers each page exactly the models that can serve it.

Adding a model of an existing kind is a checkpoint folder. Adding a kind is one
implementation file (a `Model` subclass with `from_folder`) and one entry in KIND_TABLE.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from model.contract import KINDS

if TYPE_CHECKING:
    from model.contract import Model

MODELS_DIR = Path(__file__).resolve().parent.parent / "assets" / "models"
CONFIG = "config.json"


@dataclass(frozen=True)
class KindInfo:
    """How a kind of checkpoint is loaded and what it can do."""

    implementation: str  # "module:Class", a subclass of model.contract.Model
    capabilities: frozenset[str]
    label: str  # a few words for menus


KIND_TABLE: dict[str, KindInfo] = {
    "encoder": KindInfo(
        "model.lm:TransformerLM", frozenset({"trace", "fill_mask"}), "masked, BERT-style (encoder)"
    ),
    "decoder": KindInfo(
        "model.lm:TransformerLM",
        frozenset({"trace", "next_token", "generate"}),
        "causal, GPT-style (decoder)",
    ),
    "encoder-decoder": KindInfo(
        "model.seq2seq:TransformerSeq2Seq",
        frozenset({"trace", "translate"}),
        "translation (encoder-decoder)",
    ),
    "recurrent": KindInfo(
        "model.lstm:RecurrentTranslator",
        frozenset({"trace", "translate"}),
        "LSTM encoder-decoder (recurrent)",
    ),
    "vision": KindInfo(
        "model.vit:VisionModel", frozenset({"trace", "classify"}), "Vision Transformer (digits)"
    ),
}


def capabilities_of(kind: str) -> frozenset[str]:
    """What a model of this kind can do (empty for an unknown kind)."""
    entry = KIND_TABLE.get(kind)
    return entry.capabilities if entry else frozenset()


@dataclass(frozen=True)
class ModelInfo:
    """A model in the catalogue, read from its config without loading the weights."""

    name: str
    folder: Path
    kind: str
    capabilities: frozenset[str]

    @property
    def description(self) -> str:
        """ "mlm · masked, BERT-style (encoder)": for menus."""
        entry = KIND_TABLE.get(self.kind)
        return f"{self.name} · {entry.label if entry else self.kind}"


_registered: dict[str, Path] = {}  # name -> folder, beside the shipped models


def register(name: str, folder: str | Path) -> ModelInfo:
    """Offer the checkpoint in `folder` under `name` (until `unregister`)."""
    info = read_info(folder, name)
    _registered[name] = info.folder
    return info


def unregister(name: str) -> None:
    _registered.pop(name, None)


def read_info(folder: str | Path, name: str | None = None) -> ModelInfo:
    """The catalogue entry of a checkpoint folder; ValueError if it is not one."""
    folder = Path(folder)
    path = folder / CONFIG
    if not path.is_file():
        raise ValueError(f"{folder} is not a model folder: it has no {CONFIG}")
    kind = json.loads(path.read_text()).get("kind")
    if kind not in KIND_TABLE:
        raise ValueError(f"{path} has kind {kind!r}; known kinds: {', '.join(KIND_TABLE)}")
    return ModelInfo(name or folder.name, folder, kind, capabilities_of(kind))


def shipped() -> list[str]:
    """The names of the folders in assets/models that hold a model."""
    return sorted(p.parent.name for p in MODELS_DIR.glob(f"*/{CONFIG}"))


def catalogue() -> dict[str, ModelInfo]:
    """Every model the app can offer, by name: the shipped ones by kind (encoders first, in
    the order of KINDS), then by name; then the registered ones."""
    infos = [read_info(MODELS_DIR / name) for name in shipped()]
    infos.sort(key=lambda i: (KINDS.index(i.kind) if i.kind in KINDS else len(KINDS), i.name))
    out = {info.name: info for info in infos}
    out.update({name: read_info(folder, name) for name, folder in _registered.items()})
    return out


def pick_device(device: str | None = None) -> str:
    """None or "auto": "cuda" when PyTorch sees a GPU, else "cpu". "cuda" without a GPU: an
    error that says so. The one place the app decides where a model runs."""
    import torch

    if device is None or str(device) == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    device = str(torch.device(device))
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError("CUDA was asked for, but no CUDA GPU is available here; use 'cpu'.")
    return device


def load(name_or_folder: str | Path = "mlm", device: str | None = None) -> Model:
    """A model by catalogue name ("mlm", "clm", a registered name) or checkpoint folder, on
    `device` (None or "auto": the GPU when there is one)."""
    text = str(name_or_folder)
    if text in _registered:
        name, folder = text, _registered[text]
    elif "/" not in text and (MODELS_DIR / text / CONFIG).is_file():  # a shipped name
        name, folder = text, MODELS_DIR / text
    else:
        folder = Path(name_or_folder)
        if not folder.is_dir():
            known = ", ".join(catalogue()) or "none"
            raise FileNotFoundError(
                f"no model called {str(name_or_folder)!r} (known: {known}) and no such folder"
            )
        name = folder.name
    info = read_info(folder, name)
    module, cls = KIND_TABLE[info.kind].implementation.split(":")
    implementation = getattr(importlib.import_module(module), cls)
    return implementation.from_folder(info.folder, info.name, pick_device(device))
