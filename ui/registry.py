"""The page registry: every explorer page of the app, in navigation order, and what it
needs. Lecture mode's pages come from its syllabus (ui/lecture/syllabus.py).

Adding a page is one file in pages/ (which ends with `frame("<key>", draw, ...)`) plus one
entry here. The sidebar's model menu offers exactly the models that can serve the current
page (`serves`), so no page names a model.
"""

from __future__ import annotations

from dataclasses import dataclass

from model import ModelInfo

TEXT_KINDS = ("encoder", "decoder")  # models whose trace is the typed text itself


@dataclass(frozen=True)
class PageSpec:
    """One page: its URL key (also its file pages/<key>.py), how the menu shows it, and the
    capability (and model kinds) it needs."""

    key: str
    title: str
    icon: str
    section: str
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


PAGES: list[PageSpec] = [
    PageSpec("tokens", "Tokens and embeddings", ":material/token:", "Inside the Transformer",
             "trace", TEXT_KINDS),
    PageSpec("positional", "Positional encoding", ":material/timeline:", "Inside the Transformer",
             "trace", TEXT_KINDS),
    PageSpec("learn", "Watch it learn", ":material/model_training:", "Inside the Transformer",
             "trace", ("encoder",), reads="own"),  # trains its own toy model (ui/parts/learn.py)
    PageSpec("attention", "Attention", ":material/hub:", "Inside the Transformer",
             "trace", TEXT_KINDS),
    PageSpec("masked", "Masked prediction (BERT)", ":material/masks:", "What the models predict",
             "fill_mask", TEXT_KINDS),
    PageSpec("causal", "Causal prediction (GPT)", ":material/trending_flat:",
             "What the models predict", "next_token", TEXT_KINDS),
    PageSpec("rnn", "From RNNs to attention", ":material/linear_scale:", "Translation",
             "translate", ("recurrent",), reads="own"),
    PageSpec("cross_attention", "Encoder-decoder and cross-attention", ":material/translate:",
             "Translation", "translate", ("encoder-decoder",), reads="own"),
    PageSpec("vision", "Vision Transformer", ":material/grid_on:", "Vision", "classify",
             ("vision",), reads="own"),
    PageSpec("build", "Lab: build it yourself", ":material/science:", "Lab", "next_token",
             ("decoder",)),
]  # fmt: skip
BY_KEY: dict[str, PageSpec] = {p.key: p for p in PAGES}
