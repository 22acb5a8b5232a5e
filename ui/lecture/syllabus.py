"""The lecture's steps in the lecture's order (../shared/DESIGN.md): the one list Lecture mode
walks through. Each step is one module of ui/lecture/steps/ (its SLUG, TITLE, IDEA, `draw`
and, where it has one, `intro`); inserting a step is one line here and changes no step's address.

A step's address is its slug (/lecture-attention), not its place. The numbered addresses
of earlier versions (/lecture_1 ... /lecture_12) stay: OLD_NUMBERS sends each to the step it
showed then, whatever its place now.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from i18n import _
from ui.lecture.steps import (
    attention,
    bert,
    cross,
    embeddings,
    gpt,
    heads,
    lab,
    layer,
    learn,
    positions,
    qkv,
    rnn,
    softmax,
    vision,
)

ORDER: list[ModuleType] = [rnn, attention, qkv, embeddings, positions, learn, softmax, heads,
                           layer, cross, bert, gpt, vision, lab]  # fmt: skip


@dataclass(frozen=True)
class Step:
    """One step: its place (1-based), slug, title, the idea in one line, and its drawing.
    The title and the idea are in the session's language (the module's are N_() marked)."""

    number: int
    module: ModuleType

    @property
    def slug(self) -> str:
        return self.module.SLUG

    @property
    def title(self) -> str:
        return _(self.module.TITLE)

    @property
    def idea(self) -> str:
        return _(self.module.IDEA)

    @property
    def key(self) -> str:
        """Its URL path, and its key wherever a page key is asked for: "lecture-attention"."""
        return f"lecture-{self.slug}"

    def draw(self) -> None:
        self.module.draw()

    def intro(self) -> None:
        """What the step says before its own inputs, if it has such a part (`intro()`): drawn
        outside the step's fragment, so a new input does not send it again."""
        if hasattr(self.module, "intro"):
            self.module.intro()


STEPS: list[Step] = [Step(n, module) for n, module in enumerate(ORDER, 1)]
BY_SLUG: dict[str, Step] = {s.slug: s for s in STEPS}
# The addresses of the numbered steps of earlier versions (/lecture_5): fixed for ever, not
# derived from ORDER, so a step inserted later leaves every shared link where it pointed.
OLD_NUMBERS: dict[int, str] = {
    1: "rnn-bottleneck", 2: "attention", 3: "query-key-value", 4: "tokens-and-embeddings",
    5: "positional-encoding", 6: "similarity-and-softmax", 7: "multi-head-attention",
    8: "transformer-layer", 9: "cross-attention", 10: "bert", 11: "gpt",
    12: "vision-transformer",
}  # fmt: skip
