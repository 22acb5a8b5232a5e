"""Follow one query: where a token looks, and which heads link it to a chosen key, judged
against what every other token does with the same key (plain numpy)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.tokens import word_positions
from i18n import N_

LINK_MIN_WEIGHT = 0.2  # a link needs at least this much of the query's attention...
LINK_MIN_RATIO = 2.0  # ...and at least this many times the other tokens' average weight
PREFERRED_KEYS = ("river", "cash", "researcher", "assistant", "dog", "man")


@dataclass(frozen=True)
class HeadLink:
    """How strongly one head sends a query to a key, against the other queries' habit."""

    layer: int
    head: int
    weight: float  # the query's weight on the key
    others: float  # the mean weight on the same key from the other tokens that can see it
    link: bool  # the query stands out: weight >= LINK_MIN_WEIGHT and >= LINK_MIN_RATIO x others

    @property
    def lift(self) -> float:
        """How far the query stands out: its weight minus the others' mean weight."""
        return self.weight - self.others

    @property
    def verdict(self) -> str:
        if self.link:
            return N_("link: this query stands out")
        if self.weight >= LINK_MIN_WEIGHT:
            return N_("no link: the other tokens look there as much")
        return N_("weak")  # the verdict is shown with _()


def other_queries(n: int, query: int, key: int, causal: bool, words: list[int]) -> list[int]:
    """The tokens to compare the query with: words other than the query (and the key) that
    can see the key (in a decoder only the later ones)."""
    return [i for i in words if i not in (query, key) and (not causal or i >= key)]


def head_links(
    attention: np.ndarray, tokens: list[str], query: int, key: int, causal: bool
) -> list[HeadLink]:
    """Every (layer, head) for query -> key, the strongest lift first.

    `attention` is [L, H, T, T] (Trace.attention_stack()). The others' mean is taken over
    `other_queries`; with none (a two-word sentence) it is 0."""
    others = other_queries(len(tokens), query, key, causal, word_positions(tokens))
    out = []
    for layer, heads in enumerate(np.asarray(attention)):
        for head, weights in enumerate(heads):
            w = float(weights[query, key])
            base = float(weights[others, key].mean()) if others else 0.0
            link = w >= LINK_MIN_WEIGHT and w >= LINK_MIN_RATIO * base
            out.append(HeadLink(layer, head, w, base, link))
    return sorted(out, key=lambda h: (-h.lift, -h.weight))


def strongest_head(attention: np.ndarray, query: int, key: int) -> HeadLink:
    """The (layer, head) that puts the most weight on query -> key (no comparison)."""
    a = np.asarray(attention)[:, :, query, key]
    layer, head = np.unravel_index(int(a.argmax()), a.shape)
    return HeadLink(int(layer), int(head), float(a[layer, head]), float("nan"), False)


def default_key(tokens: list[str], query: int, attention: np.ndarray) -> int:
    """The key to follow first: a lecture word (river, cash, researcher...) when the sentence
    has one, else the word the query attends to most, heads and layers averaged."""
    words = [i for i in word_positions(tokens) if i != query]
    if not words:
        return query
    for word in PREFERRED_KEYS:
        hits = [i for i in words if tokens[i] == word]
        if hits:
            return hits[0]
    mean = np.asarray(attention)[:, :, query, :].mean(axis=(0, 1))
    return max(words, key=lambda i: mean[i])
