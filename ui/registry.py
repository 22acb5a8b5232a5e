"""The page registry: every explorer page of the app, in navigation order, and what it
needs. Lecture mode's pages come from its syllabus (ui/lecture/syllabus.py).

Adding a page is one file in pages/ (which ends with `frame("<key>", draw, ...)`) plus one
entry here. The sidebar's model menu offers exactly the models that can serve the current
page (`serves`), so no page names a model.
"""

from __future__ import annotations

from dataclasses import dataclass

from i18n import N_
from model import ModelInfo

TEXT_KINDS = ("encoder", "decoder")  # models whose trace is the typed text itself


@dataclass(frozen=True)
class PageSpec:
    """One page: its URL key (also its file pages/<key>.py), how the menu shows it, and the
    capability (and model kinds) it needs."""

    key: str
    title: str  # N_(): shown with _(spec.title)
    icon: str
    section: str  # N_(): shown with _(spec.section)
    needs: str  # a capability of model.CAPABILITIES: "trace", "fill_mask", ...
    kinds: tuple[str, ...] = ()  # the model kinds it can draw; () for any kind
    reads: str = "sentence"  # "sentence": the sidebar's shared sentence; "own": its own input

    @property
    def path(self) -> str:
        """The page's file, relative to app.py."""
        return f"pages/{self.key}.py"

    def serves(self, info: ModelInfo) -> bool:
        """Whether this page can run on the model `info` describes."""
        return self.needs in info.capabilities and (not self.kinds or info.kind in self.kinds)


INSIDE, PREDICT = N_("Inside the Transformer"), N_("What the models predict")  # the sections
PAGES: list[PageSpec] = [
    PageSpec("tokens", N_("Tokens and embeddings"), ":material/token:", INSIDE,
             "trace", TEXT_KINDS),
    PageSpec("positional", N_("Positional encoding"), ":material/timeline:", INSIDE,
             "trace", TEXT_KINDS),
    PageSpec("learn", N_("Watch it learn"), ":material/model_training:", INSIDE,
             "trace", ("encoder",), reads="own"),  # trains its own toy model (ui/parts/learn.py)
    PageSpec("attention", N_("Attention"), ":material/hub:", INSIDE,
             "trace", TEXT_KINDS),
    PageSpec("masked", N_("Masked prediction (BERT)"), ":material/masks:", PREDICT,
             "fill_mask", TEXT_KINDS),
    PageSpec("causal", N_("Causal prediction (GPT)"), ":material/trending_flat:",
             PREDICT, "next_token", TEXT_KINDS),
    PageSpec("rnn", N_("From RNNs to attention"), ":material/linear_scale:", N_("Translation"),
             "translate", ("recurrent",), reads="own"),
    PageSpec("cross_attention", N_("Encoder-decoder and cross-attention"), ":material/translate:",
             N_("Translation"), "translate", ("encoder-decoder",), reads="own"),
    PageSpec("vision", N_("Vision Transformer"), ":material/grid_on:", N_("Vision"), "classify",
             ("vision",), reads="own"),
    PageSpec("build", N_("Lab: build it yourself"), ":material/science:", N_("Lab"), "next_token",
             ("decoder",)),
]  # fmt: skip
BY_KEY: dict[str, PageSpec] = {p.key: p for p in PAGES}
