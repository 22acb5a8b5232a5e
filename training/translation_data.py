"""The English -> Korean toy grammar's data for training: the grammar itself (lexicon,
generator, splits) is model/translation_grammar.py, re-exported here; this module adds the
word-level tokenizer.

    lex = read_lexicon()
    rule_translation(lex, "i went to school and he reads a book every day")
    # '나는 학교에 갔고 그는 매일 책을 읽는다'
    splits = make_splits(lex)            # {"train": [Pair, ...], "valid": ..., "test": ...}
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

from model.tokenizer import SPECIAL_TOKENS
from model.translation_grammar import (  # noqa: F401 (re-exported)
    CLAUSE_COUNTS,
    DATA_DIR,
    LECTURE,
    LEXICON,
    PER_COUNT,
    SEED,
    SPLITS,
    Adverb,
    Clause,
    Lexicon,
    Noun,
    Pair,
    Subject,
    Verb,
    adverbs_for,
    all_clauses,
    candidates,
    clause_counts,
    has_batchim,
    held_out,
    make_splits,
    objects_of,
    pair_of,
    random_clause,
    read_lexicon,
    rule_translation,
)

TOKENIZER = DATA_DIR / "tokenizer.json"


# --- The tokenizer --------------------------------------------------------------------------


def vocabulary(lex: Lexicon) -> list[str]:
    """Every word of both languages (Korean words are whole eojeol: 학교에, 갔고), sorted."""
    words = {"and"}
    for clause in all_clauses(lex):
        words.update(clause.english().split())
        words.update(clause.korean(last=True).split() + clause.korean(last=False).split())
    return sorted(words)


def build_tokenizer(lex: Lexicon) -> Tokenizer:
    """One word-level tokenizer for both languages: the special tokens are ids 0..4, then
    the words; a word outside the vocabulary becomes [UNK].

    Normalizer: NFC (Hangul stays composed: no accent stripping), lower case, surrounding
    spaces and one final ".", "!" or "?" removed; words are split on whitespace."""
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS + vocabulary(lex))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence(
        [
            normalizers.NFC(),
            normalizers.Lowercase(),
            normalizers.Strip(),
            normalizers.Replace(Regex(r"[.!?]$"), ""),
        ]
    )
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(SPECIAL_TOKENS)  # matched before normalizing, skipped by decode
    for i, name in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(name) == i, f"{name} should have id {i}"
    return tok
