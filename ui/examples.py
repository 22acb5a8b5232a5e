"""The example sentences in the sidebar's menu: the lecture's own, then a few more."""

from __future__ import annotations

from model.data import PROBES

DEFAULT_SENTENCE = PROBES[0]  # "I swam across the river to get to the other bank."

# Beyond the lecture's sentences: [MASK] versions for the masked page, prompts for the
# causal page, and the lecture's query / key / value and materials examples.
MORE: list[str] = [
    "I swam across the river to get to the other [MASK].",
    "I walked across the road to get cash from the [MASK].",
    "The cat sat on the [MASK].",
    "the dog bit the [MASK]",
    "a fast and strongly typed language such as c++, java, python or haskell",
    "steel and aluminum are metals but rubber is not",
    "She opened the door and smiled at the dog.",
    "the researcher asked the",
]

EXAMPLES: list[str] = list(dict.fromkeys([*PROBES, *MORE]))
