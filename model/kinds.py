"""The kinds of model and what each can do: the one table both the contract
(model/contract.py) and the catalogue (model/registry.py) read. Plain data: no torch, and
no import of the rest of the package, so neither of them imports the other.

Adding a kind is one implementation file (a `model.contract.Model` subclass with
`from_folder`) and one entry in KIND_TABLE.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("encoder", "decoder", "encoder-decoder", "recurrent", "vision")
CAPABILITIES = ("trace", "fill_mask", "next_token", "generate", "translate", "classify")
DOES = {  # what each capability lets a model do, for messages: "cannot fill in a [MASK]"
    "trace": "show a forward pass",
    "fill_mask": "fill in a [MASK]",
    "next_token": "predict the next token",
    "generate": "write text",
    "translate": "translate",
    "classify": "classify an image",
}


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
