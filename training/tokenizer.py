"""Train the WordPiece vocabulary of `model/tokenizer.py` on the training split."""

from __future__ import annotations

import string
from collections.abc import Iterable

from tokenizers import Tokenizer, models, trainers

from model.tokenizer import CONTINUING_PREFIX, SPECIAL_TOKENS, empty_tokenizer

VOCAB_SIZE = 8000  # word pieces, special tokens included
# Every printable ASCII character is in the vocabulary, even one the corpus lacks ("[", "~").
ALPHABET = sorted(set(string.printable.lower()) - set(string.whitespace))


def train_tokenizer(lines: Iterable[str], vocab_size: int = VOCAB_SIZE) -> Tokenizer:
    """Train a WordPiece tokenizer of `vocab_size` entries (special tokens included)."""
    tok = empty_tokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,  # ids 0..4, in this order
        continuing_subword_prefix=CONTINUING_PREFIX,
        initial_alphabet=ALPHABET,
        show_progress=False,
    )
    tok.train_from_iterator(lines, trainer=trainer)
    # The trainer numbers the pieces differently from run to run (and on a tie at the cutoff
    # may even keep a different piece or two: huggingface/tokenizers issue 1794). WordPiece
    # only needs the set of pieces, so renumber them (specials first, then sorted): the same
    # set always gives the same file.
    pieces = sorted(set(tok.get_vocab(with_added_tokens=False)) - set(SPECIAL_TOKENS))
    vocab = {t: i for i, t in enumerate(SPECIAL_TOKENS + pieces)}
    tok.model = models.WordPiece(
        vocab, unk_token="[UNK]", continuing_subword_prefix=CONTINUING_PREFIX
    )
    # The trainer registers the special tokens as added tokens, so they are matched in raw
    # text before the lowercasing normalizer runs: "[MASK]" stays one token.
    for i, name in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(name) == i, f"{name} should have id {i}"
    return tok
