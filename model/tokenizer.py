"""The subword tokenizer: a small WordPiece vocabulary, BERT style.

Text is lowercased, accents are stripped, control characters are dropped and CJK characters
are split apart (BertNormalizer); words are split on whitespace and punctuation
(BertPreTokenizer); each word is then cut into the longest known pieces, the non-initial
ones marked with "##" ("embeddings" -> "em", "##bed", "##ding", "##s"). A piece the
vocabulary cannot spell (an emoji, a CJK character) becomes [UNK].

Training a vocabulary is offline work: `training/tokenizer.py`.

There is no post-processor: the model code adds [BOS] / [EOS] itself. Special tokens typed
in the text, such as "[MASK]", are matched before normalization and stay one token.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "[MASK]"]
PAD_ID, UNK_ID, BOS_ID, EOS_ID, MASK_ID = range(len(SPECIAL_TOKENS))
CONTINUING_PREFIX = "##"


def empty_tokenizer() -> Tokenizer:
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


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer saved with `Tokenizer.save` (e.g. assets/data/tokenizer.json)."""
    return Tokenizer.from_file(str(path))
