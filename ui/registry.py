"""The page registry: every page of the app, in navigation order, and what it needs.

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
]  # fmt: skip
# Lecture mode (ui/lecture.py, ui/lessons.py): an overview, then the lecture's steps in order,
# each (title, the idea in one line). A step picks the models it needs by capability, so
# these pages have no model menu.
LECTURE_STEPS: list[tuple[str, str]] = [
    ("RNNs and their bottleneck", "An LSTM reads one word at a time and hands the decoder one "
     "context vector: long sentences do not fit."),
    ("Attention", "Each word looks at every other word, with weights that depend on the "
     "sentence: “bank” by the river and “bank” with the cash."),
    ("Query, key, value", "A dict finds one exact key; attention scores every key against the "
     "query and blends all the values."),
    ("Tokens and embeddings", "Text becomes tokens, each token a learned vector; similar words "
     "lie close together."),
    ("Positional encoding", "Attention sees a set: positions, binary then sinusoidal, are "
     "added so that word order counts."),
    ("Similarity and softmax", "Dot product and cosine, scaled by √d, turned into weights by "
     "a softmax: softmax(QKᵀ/√d)V."),
    ("Multi-head attention", "Heads in parallel, each with its own habit; a link between two "
     "words must stand out from the habit."),
    ("The Transformer layer", "Attention and an MLP, each added to the residual stream, then "
     "normalised."),
    ("Encoder-decoder and cross-attention", "The decoder's queries look at the encoder's keys "
     "and values: translation, word by word."),
    ("BERT: masked prediction", "An encoder guesses hidden words from both sides."),
    ("GPT: causal prediction", "A decoder looks only left and writes the next token, again "
     "and again."),
    ("The Vision Transformer", "An image cut into patches, each patch a token, and the same "
     "encoder."),
]  # fmt: skip
LECTURE: list[PageSpec] = [
    PageSpec("lecture", "Overview", ":material/school:", "Lecture", "trace", reads="own"),
    *[PageSpec(f"lecture_{n}", f"{n}. {title}", ":material/slideshow:", "Lecture", "trace",
               reads="own") for n, (title, _) in enumerate(LECTURE_STEPS, 1)],
]  # fmt: skip
BY_KEY: dict[str, PageSpec] = {p.key: p for p in [*PAGES, *LECTURE]}
