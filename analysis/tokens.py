"""Which tokens to show and how to name them; probabilities from logits (plain numpy)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from i18n import _
from model.tokenizer import SPACE_MARK, SPECIAL_TOKENS
from model.trace import Trace

# Special tokens of pretrained tokenizers: [CLS], [SEP], <s>, </s>, <|endoftext|>, <|im_end|>
PRETRAINED_SPECIAL = re.compile(r"^(\[[A-Z]+\]|<\|?/?[a-z_]+\|?>)$")


def is_special(token: str) -> bool:
    """Whether a token is a marker rather than text: ours ([BOS], [MASK]) or one of a
    pretrained tokenizer's ([CLS], </s>, <|endoftext|>)."""
    return token in SPECIAL_TOKENS or bool(PRETRAINED_SPECIAL.match(token))


def word_positions(tokens: Sequence[str]) -> list[int]:
    """Positions of the tokens that are not special ([BOS], [EOS], [CLS], </s>, ...)."""
    return [i for i, tok in enumerate(tokens) if not is_special(tok)]


def word_of(token: str) -> str:
    """The word a shown token spells, without the mark of a space before it ("␣bank": bank)."""
    return token.removeprefix(SPACE_MARK)


def default_token(tokens: Sequence[str], prefer: Sequence[str] = ("bank",)) -> int:
    """The token a page starts on: a preferred word ("bank", also after a space), else the
    last word."""
    words = word_positions(tokens)
    for word in prefer:
        hits = [i for i in words if word_of(tokens[i]) == word]
        if hits:
            return hits[-1]
    alpha = [i for i in words if any(ch.isalpha() for ch in tokens[i])]
    return (alpha or words or [0])[-1]


def stage_names(n_layers: int) -> list[str]:
    """ "token embedding + position" (the input to layer 1), then "after layer 1", ..., in
    the session's language (they label rows, axes and downloads)."""
    after = [_("after layer {n}", n=i) for i in range(1, n_layers + 1)]
    return [_("input (embedding + position)"), *after]


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax that treats -inf as weight 0."""
    top = np.max(np.where(np.isfinite(scores), scores, -np.inf), axis=-1, keepdims=True)
    e = np.exp(scores - top)
    return e / e.sum(axis=-1, keepdims=True)


def prediction_probs(logits: np.ndarray, special_ids: Iterable[int]) -> np.ndarray:
    """Softmax over the vocabulary [N, V] with the special tokens left out, as the ranked
    predictions of the model (fill_mask) compute it."""
    z = np.array(logits, dtype=np.float64)
    z[:, list(special_ids)] = -np.inf
    return softmax_rows(z)


def head_pattern(attention: np.ndarray, head: int | str) -> np.ndarray:
    """[T, S] one head's weights of a layer's attention [H, T, S], or their average over
    the heads ("average")."""
    return attention.mean(axis=0) if head == "average" else attention[head]


def head_weights(trace: Trace, layer: int, head: int | str) -> np.ndarray:
    """[T, S] one head's self-attention weights in `layer`, or their average ("average")."""
    return head_pattern(trace.layers[layer].attention, head)
