"""The kinds of model and what each can do: the one table both the contract
(model/contract.py) and the catalogue (model/registry.py) read. Plain data: no torch, and
no import of the rest of the package, so neither of them imports the other.

Adding a kind is one implementation file (a `model.contract.Model` subclass with
`from_folder`) and one entry in KIND_TABLE.
"""

from __future__ import annotations

from dataclasses import dataclass

from i18n import N_

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
# The pages' messages about a capability, each one whole sentence (a translation puts the
# verb where its language wants it, so no sentence is glued from DOES): shown with _().
NO_MODEL = {  # no model here can serve a page that needs it
    "trace": N_("No model here can show a forward pass, so this page cannot run."),
    "fill_mask": N_("No model here can fill in a [MASK], so this page cannot run."),
    "next_token": N_("No model here can predict the next token, so this page cannot run."),
    "generate": N_("No model here can write text, so this page cannot run."),
    "translate": N_("No model here can translate, so this page cannot run."),
    "classify": N_("No model here can classify an image, so this page cannot run."),
}
RUNS_ANOTHER = {  # the sidebar's model cannot serve the page: it runs {model} instead
    "trace": N_("This page needs a model that can show a forward pass: it runs {model}. "
                "The sidebar's {chosen} still applies on the pages it can serve."),
    "fill_mask": N_("This page needs a model that can fill in a [MASK]: it runs {model}. "
                    "The sidebar's {chosen} still applies on the pages it can serve."),
    "next_token": N_("This page needs a model that can predict the next token: it runs "
                     "{model}. The sidebar's {chosen} still applies on the pages it can "
                     "serve."),
    "generate": N_("This page needs a model that can write text: it runs {model}. The "
                   "sidebar's {chosen} still applies on the pages it can serve."),
    "translate": N_("This page needs a model that can translate: it runs {model}. The "
                    "sidebar's {chosen} still applies on the pages it can serve."),
    "classify": N_("This page needs a model that can classify an image: it runs {model}. "
                   "The sidebar's {chosen} still applies on the pages it can serve."),
}  # fmt: skip


@dataclass(frozen=True)
class KindInfo:
    """How a kind of checkpoint is loaded and what it can do."""

    implementation: str  # "module:Class", a subclass of model.contract.Model
    capabilities: frozenset[str]
    label: str  # a few words for menus (N_: shown with _())


KIND_TABLE: dict[str, KindInfo] = {
    "encoder": KindInfo(
        "model.lm:TransformerLM",
        frozenset({"trace", "fill_mask"}),
        N_("masked, BERT-style (encoder)"),
    ),
    "decoder": KindInfo(
        "model.lm:TransformerLM",
        frozenset({"trace", "next_token", "generate"}),
        N_("causal, GPT-style (decoder)"),
    ),
    "encoder-decoder": KindInfo(
        "model.seq2seq:TransformerSeq2Seq",
        frozenset({"trace", "translate"}),
        N_("translation (encoder-decoder)"),
    ),
    "recurrent": KindInfo(
        "model.lstm:RecurrentTranslator",
        frozenset({"trace", "translate"}),
        N_("LSTM encoder-decoder (recurrent)"),
    ),
    "vision": KindInfo(
        "model.vit:VisionModel",
        frozenset({"trace", "classify"}),
        N_("Vision Transformer (digits)"),
    ),
}


def capabilities_of(kind: str) -> frozenset[str]:
    """What a model of this kind can do (empty for an unknown kind)."""
    entry = KIND_TABLE.get(kind)
    return entry.capabilities if entry else frozenset()
