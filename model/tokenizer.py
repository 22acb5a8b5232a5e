"""The subword tokenizer: a small WordPiece vocabulary, BERT style.

Text is lowercased, accents are stripped, control characters are dropped and CJK characters
are split apart (BertNormalizer); words are split on whitespace and punctuation
(BertPreTokenizer); each word is then cut into the longest known pieces, the non-initial
ones marked with "##" ("embeddings" -> "em", "##bed", "##ding", "##s"). A piece the
vocabulary cannot spell (an emoji, a CJK character) becomes [UNK].

There is no post-processor: the model code adds [BOS] / [EOS] itself. Special tokens typed
in the text, such as "[MASK]", are matched before normalization and stay one token.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "[MASK]"]
PAD_ID, UNK_ID, BOS_ID, EOS_ID, MASK_ID = range(len(SPECIAL_TOKENS))
CONTINUING_PREFIX = "##"
# Every printable ASCII character is in the vocabulary, even one the corpus lacks ("[", "~").
ALPHABET = sorted(set(string.printable.lower()) - set(string.whitespace))


def _empty_tokenizer() -> Tokenizer:
    """A WordPiece tokenizer with the normalizer, pre-tokenizer and decoder, but no vocab."""
    tok = Tokenizer(
        models.WordPiece(unk_token="[UNK]", continuing_subword_prefix=CONTINUING_PREFIX)
    )
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix=CONTINUING_PREFIX, cleanup=True)
    return tok


def train_tokenizer(lines: Iterable[str], vocab_size: int = 4096) -> Tokenizer:
    """Train a WordPiece tokenizer of `vocab_size` entries (special tokens included)."""
    tok = _empty_tokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,  # ids 0..4, in this order
        continuing_subword_prefix=CONTINUING_PREFIX,
        initial_alphabet=ALPHABET,
        show_progress=False,
    )
    tok.train_from_iterator(lines, trainer=trainer)
    # The trainer breaks ties in a different order from run to run; WordPiece only needs the
    # set of pieces, so renumber them (specials first, then sorted) for a reproducible file.
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


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer saved with `Tokenizer.save` (e.g. assets/data/tokenizer.json)."""
    return Tokenizer.from_file(str(path))
