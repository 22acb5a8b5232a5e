"""The lecture's example sentences, in one place: the app offers them, the corpus builder
keeps them out of the training data, the tests and the evaluation probe the models with them.
"""

from __future__ import annotations

# The lecture's own sentences: what the app demonstrates on, so never what a model learns from
# (training/data.py drops every corpus sentence that contains one).
PROBES: list[str] = [
    "I swam across the river to get to the other bank.",
    "I walked across the road to get cash from the bank.",
    "The researcher asked the assistant to run the experiment again because he was not "
    "satisfied with the results.",
    "He opened the door and smiled.",
    "the dog bit the man",
    "the man bit the dog",
    "power of industrial AI",
    "The cat sat",
    "I go to school",
    "The cat sat on the mat.",
]
RIVER_BANK, MONEY_BANK = PROBES[0], PROBES[1]
DEFAULT_SENTENCE = RIVER_BANK

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

# The sidebar's menu: the lecture's sentences first, then the others, without repeats.
EXAMPLES: list[str] = list(dict.fromkeys([*PROBES, *MORE]))
