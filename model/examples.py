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

# The lecture's pairs of sentences to compare (the compare mode's presets): the same word in
# two contexts, and the same words in two orders.
PAIRS: list[tuple[str, str]] = [
    (RIVER_BANK, MONEY_BANK),
    ("the dog bit the man", "the man bit the dog"),
    (PROBES[2], PROBES[2].replace(" he ", " she ")),
]

# The lecture's English -> Korean pairs (../shared/translation/README.md): the translation
# pages' presets, never a clause of the translators' training data.
TRANSLATION_PROBES: list[str] = [
    "i go to school",  # -> 나는 학교에 간다
    "the dog bit the man",
    "the man bit the dog",
    "i went to the bank to get cash",
    "i swam across the river to the bank",
]
# The translation pages' presets with the grammar's own translation (tests/test_translation.py
# checks each against training/translation_data.py's rules).
TRANSLATION_EXAMPLES: dict[str, str] = {
    "i go to school": "나는 학교에 간다",
    "the dog bit the man": "개가 남자를 물었다",
    "the man bit the dog": "남자가 개를 물었다",
    "i went to the bank to get cash": "나는 돈을 찾으러 은행에 갔다",
    "i swam across the river to the bank": "나는 강을 건너 강둑까지 헤엄쳤다",
    "i went to school and he reads a book every day": "나는 학교에 갔고 그는 매일 책을 읽는다",
    # eight clauses: where the LSTM's one context vector runs out
    "i go to school and he reads a book and the dog bit the cat and we drink water and she "
    "watched a movie yesterday and the teacher likes music and you ate bread and they went "
    "to the park": "나는 학교에 가고 그는 책을 읽고 개가 고양이를 물었고 우리는 물을 마시고 "
    "그녀는 어제 영화를 봤고 선생님이 음악을 좋아하고 너는 빵을 먹었고 그들은 공원에 갔다",
}

# The sidebar's menu: the lecture's sentences first, then the others, without repeats.
EXAMPLES: list[str] = list(dict.fromkeys([*PROBES, *MORE]))
