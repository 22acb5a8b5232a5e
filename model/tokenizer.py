"""The subword tokenizer: a small WordPiece vocabulary, BERT style.

Text is lowercased, accents are stripped, control characters are dropped and CJK characters
are split apart (BertNormalizer); words are split on whitespace and punctuation
(BertPreTokenizer); each word is then cut into the longest known pieces, the non-initial
ones marked with "##" ("embeddings" -> "em", "##bed", "##ding", "##s"). A piece the
vocabulary cannot spell (an emoji, a CJK character) becomes [UNK].

Training a vocabulary is offline work: `training/tokenizer.py`.

There is no post-processor: the model code adds [BOS] / [EOS] itself. Special tokens typed
in the text, such as "[MASK]", are matched before normalization and stay one token.

Every model's tokens, ours and Hugging Face ones, are shown by the rule at the end of this
module: `show` (a sequence: "ĠParis" -> "␣Paris", the bytes of 나 -> "<0xEB>" ... each
knowing its character), `show_token` (one token), `read_back` (the text shown tokens stand
for, which the tests compare with the input).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


# --- tokens as a person reads them ------------------------------------------------------------
#
# A tokenizer's own strings are internal symbols: byte-level BPE (GPT-2, RoBERTa, SmolLM2)
# writes each byte as a printable stand-in ("Ġ" for a space, "ë" for the byte 0xEB),
# SentencePiece writes a space as "▁", WordPiece marks a continuation with "##". The app
# shows each token as the text it stands for, the way the tokenizer's decoder reads it:
# a space as SPACE_MARK, a newline and a tab as their marks, any other invisible character
# and any byte that is only part of a character as "<0xNN>", a WordPiece continuation with
# its "##" (what the lecture shows), special tokens as they are.

SPACE_MARK = "␣"  # a space, wherever a token holds one ("␣Paris": Paris after a space)
MARKS = {" ": SPACE_MARK, "\n": "↵", "\t": "⇥"}
_UNMARKS = {mark: ch.encode() for ch, mark in MARKS.items()}
_INVISIBLE = {"Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"}  # shown as their bytes
_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_SHOWN_PART = re.compile(r"(<0x[0-9A-Fa-f]{2}>|[" + "".join(_UNMARKS) + "])")
_ESCAPED = range(0xDC80, 0xDD00)  # surrogateescape: a byte that starts no character


def byte_alphabet() -> dict[str, int]:
    """Byte-level BPE's printable stand-in for each of the 256 bytes, as a map back to the
    byte: the printable Latin-1 characters stand for themselves, the other bytes (space,
    control characters, ...) take the characters from U+0100 on, in byte order."""
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    moved = [b for b in range(256) if b not in kept]
    return {chr(b): b for b in kept} | {chr(0x100 + n): b for n, b in enumerate(moved)}


BYTE_ALPHABET = byte_alphabet()


@dataclass(frozen=True)
class Reading:
    """How one tokenizer's strings stand for text (read from its decoder by `reading_of`).

    scheme: "bytes" (byte-level BPE), "metaspace" (SentencePiece: `replacement` for a space,
    "<0xNN>" tokens for bytes), "wordpiece" (`prefix` marks a continuation) or "words" (whole
    words, one space between them)."""

    scheme: str = "words"
    prefix: str = CONTINUING_PREFIX
    replacement: str = "▁"
    strip_first: bool = False  # metaspace: the decoder drops the space it put in front
    specials: frozenset[str] = frozenset()  # shown as they are; no text


@dataclass(frozen=True)
class Shown:
    """Token ids as a person reads them."""

    tokens: list[str]  # the text each token stands for ("␣Paris", "##s", "<0xEB>")
    raw: list[str]  # the tokenizer's own strings ("ĠParis", "##s", "ë")
    fragment_of: list[str]  # the character a token holds only part of ("나"), else ""


def _parts(component: Any) -> list[dict]:
    """A tokenizers component (decoder, pre-tokenizer) as its JSON parts, a Sequence flattened."""
    return [] if component is None else _flat(json.loads(component.__getstate__()))


def _flat(state: dict) -> list[dict]:
    inner = state.get("decoders") or state.get("pretokenizers")
    return [p for part in inner for p in _flat(part)] if inner else [state]


def reading_of(tokenizer: Any, specials: Iterable[str] = ()) -> Reading:
    """How `tokenizer` (a `tokenizers.Tokenizer`, or a transformers fast tokenizer: its
    backend) writes text, from its decoder (and pre-tokenizer); `specials` are more tokens
    to show as they are (the tokenizer's own special tokens always are)."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    added = backend.get_added_tokens_decoder().values()
    marked = frozenset({t.content for t in added if t.special} | set(specials))
    parts = _parts(backend.decoder)
    types = {p["type"] for p in parts} | {p["type"] for p in _parts(backend.pre_tokenizer)}
    if "ByteLevel" in types:
        return Reading("bytes", specials=marked)
    spaces = [p for p in parts if p["type"] == "Metaspace" or p.get("content") == " "]
    if spaces:
        p = spaces[0]
        replacement = p.get("replacement") or p.get("pattern", {}).get("String", "▁")
        strip = p.get("prepend_scheme", "never") != "never" or p.get("add_prefix_space", False)
        strip = strip or any(q["type"] == "Strip" and q.get("start", 0) for q in parts)
        return Reading("metaspace", replacement=replacement, strip_first=bool(strip),
                       specials=marked)  # fmt: skip
    wordpiece = [p for p in parts if p["type"] == "WordPiece"]
    if wordpiece:
        return Reading("wordpiece", prefix=wordpiece[0].get("prefix", "##"), specials=marked)
    return Reading("words", specials=marked)


def token_bytes(reading: Reading, raw: str) -> bytes:
    """The bytes of text a token stands for (a WordPiece continuation keeps its prefix)."""
    if reading.scheme == "bytes":
        return b"".join(
            bytes([BYTE_ALPHABET[ch]]) if ch in BYTE_ALPHABET else ch.encode() for ch in raw
        )
    if reading.scheme == "metaspace":
        byte = _BYTE.fullmatch(raw)
        return bytes([int(byte[1], 16)]) if byte else raw.replace(reading.replacement, " ").encode()
    return raw.encode()


def _characters(data: bytes) -> list[tuple[int, int, str]]:
    """Each character of `data` with its byte span; a byte that starts no character (one
    piece of a character cut apart) is a one-byte "character" of its own (an escape)."""
    out, at = [], 0
    for ch in data.decode("utf-8", errors="surrogateescape"):
        n = 1 if ord(ch) in _ESCAPED else len(ch.encode())
        out.append((at, at + n, ch))
        at += n
    return out


def show_bytes(data: bytes) -> str:
    """Bytes of text as a token is shown: marks for space, newline and tab, "<0xNN>" for an
    invisible character's bytes and for a byte that is only part of a character."""
    shown = []
    for _, _, ch in _characters(data):
        if ord(ch) in _ESCAPED:
            shown.append(f"<0x{ord(ch) - 0xDC00:02X}>")
        elif ch in MARKS:
            shown.append(MARKS[ch])
        elif unicodedata.category(ch) in _INVISIBLE:
            shown.append("".join(f"<0x{b:02X}>" for b in ch.encode()))
        else:
            shown.append(ch)
    return "".join(shown)


def show_token(reading: Reading, raw: str) -> str:
    """One token as a person reads it (no context: a byte stays "<0xNN>")."""
    return raw if raw in reading.specials else show_bytes(token_bytes(reading, raw))


def _fragments(reading: Reading, raw: Sequence[str]) -> list[str]:
    """For each token that holds only part of a character (byte-level BPE cuts a Hangul
    syllable or an emoji into bytes), that character, read across its neighbours."""
    out = [""] * len(raw)
    run: list[tuple[int, int, int]] = []  # (token, byte start, byte end) since a special
    data = b""
    for i, tok in enumerate([*raw, None]):
        if tok is None or tok in reading.specials:
            chars = _characters(data)
            for k, a, b in run:
                cut = [ch for s, e, ch in chars if s < b and e > a and (s < a or e > b)]
                out[k] = "".join(ch for ch in cut if ord(ch) not in _ESCAPED)
            run, data = [], b""
            continue
        piece = token_bytes(reading, tok)
        run.append((i, len(data), len(data) + len(piece)))
        data += piece
    return out


def show(
    reading: Reading,
    raw: Sequence[str],
    text: str | None = None,
    offsets: Sequence[tuple[int, int]] | None = None,
) -> Shown:
    """A sequence of the tokenizer's strings as a person reads them. With the `text` and the
    tokens' character `offsets`, a token that shares its span with a neighbour (WordPiece
    cuts a Hangul syllable, decomposed, into its letters) is a fragment of that span too."""
    raw = [str(t) for t in raw]
    fragment_of = _fragments(reading, raw)
    if text is not None and offsets is not None:
        spans = list(offsets)
        for i, (a, b) in enumerate(spans):
            near = spans[max(0, i - 1) : i] + spans[i + 1 : i + 2]
            if not fragment_of[i] and a < b and any(c < b and d > a for c, d in near):
                fragment_of[i] = text[a:b].strip()
    return Shown([show_token(reading, t) for t in raw], raw, fragment_of)


def shown_tokens(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Token ids as a person reads them, for a `tokenizers.Tokenizer` or a transformers fast
    tokenizer: the one rule every page shows tokens by."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    reading = reading_of(backend)
    return [show_token(reading, backend.id_to_token(int(i)) or f"<{i}>") for i in ids]


def read_back(reading: Reading, shown: Sequence[str]) -> str:
    """The text that shown tokens stand for, as the tokenizer's decoder would write it:
    the marks as what they mark, "<0xNN>" as its byte, WordPiece continuations glued on and
    whole words (WordPiece, word-level) one space apart; special tokens left out."""
    words = [tok for tok in shown if tok not in reading.specials]

    def data(tok: str) -> bytes:
        pieces = _SHOWN_PART.split(tok)
        return b"".join(
            _UNMARKS.get(p) or (bytes([int(p[3:5], 16)]) if _BYTE.fullmatch(p) else p.encode())
            for p in pieces
        )

    if reading.scheme in ("bytes", "metaspace"):
        text = b"".join(data(tok) for tok in words).decode("utf-8", errors="replace")
        return text[1:] if reading.strip_first and text.startswith(" ") else text
    out, prefix = "", reading.prefix
    for tok in words:
        glued = reading.scheme == "wordpiece" and tok.startswith(prefix) and tok != prefix
        piece = data(tok[len(prefix) :] if glued else tok).decode("utf-8", errors="replace")
        out += piece if glued or not out else " " + piece
    return out


# --- A text as a model reads it (no PyTorch: a first page shows its tokens before it loads) --


@dataclass
class Encoded:
    """A text as the model reads it."""

    ids: list[int]  # with [BOS] (and [EOS] for an encoder) around the text's tokens
    tokens: list[str]  # as a person reads them (model.tokenizer.show)
    offsets: list[tuple[int, int]]  # character span of each token; (0, 0) for specials
    truncated: bool
    n_input_tokens: int  # the text's tokens before truncation, specials included
    raw_tokens: list[str] = field(default_factory=list)  # the tokenizer's own strings
    fragment_of: list[str] = field(default_factory=list)  # the character a byte belongs to

    @classmethod
    def of(
        cls, ids: list[int], shown: Shown, offsets: list[tuple[int, int]], truncated: bool,
        n_input: int,
    ) -> Encoded:  # fmt: skip
        """Ids, their tokens as `model.tokenizer.show` gave them, and the rest."""
        return cls(ids, shown.tokens, offsets, truncated, n_input, shown.raw, shown.fragment_of)


def encode_text(tokenizer: Tokenizer, reading: Reading, text: str, max_len: int,
                eos: bool = True) -> Encoded:  # fmt: skip
    """[BOS] text [EOS] (or [BOS] text when `eos` is False), cut to `max_len` tokens: what
    every model of ours reads (model.text.TextModel.encode)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if not text.strip():
        raise ValueError("The text is empty: type a sentence.")
    enc = tokenizer.encode(text, add_special_tokens=False)
    room = max_len - (2 if eos else 1)
    ids, offsets = enc.ids[:room], [tuple(o) for o in enc.offsets[:room]]
    n_input = len(enc.ids) + (2 if eos else 1)
    ids, offsets = [BOS_ID, *ids], [(0, 0), *offsets]
    if eos:
        ids, offsets = [*ids, EOS_ID], [*offsets, (len(text), len(text))]
    raw = [tokenizer.id_to_token(int(i)) or f"<{i}>" for i in ids]
    shown = show(reading, raw, text, offsets)
    return Encoded.of(ids, shown, offsets, len(enc.ids) > room, n_input)
