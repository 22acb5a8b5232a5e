"""Tokens as a person reads them (model/tokenizer.py `show`, `read_back`; issue 25, part 4).

Every tokenizer the app can meet: the shipped ones (WordPiece, word-level), the tiny Hugging
Face ones of tests/hf_models.py (word-level), a byte-level BPE and a SentencePiece-style one
(byte fallback) built here, and the optional real models' (MiniLM's WordPiece, SmolLM2's
byte-level BPE; skipped where their packages are absent). For each, reading the shown tokens
back (the space mark as a space, "<0xNN>" as its byte, "##" glued on) gives the text again:
exactly for byte-level and SentencePiece tokenizers, and for WordPiece and word-level ones
the text as their normalizer and pre-tokenizer leave it (lowercased, split into words),
without the words they cannot spell ([UNK]).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

import model
import viz
from model.examples import PROBES, TRANSLATION_EXAMPLES
from model.registry import packaged
from model.tokenizer import (
    BYTE_ALPHABET,
    SPACE_MARK,
    read_back,
    reading_of,
    show,
    show_token,
    shown_tokens,
)
from model.trace import load_npz, save_npz
from tests.charts import figures
from tests.figures import plotly_figure
from ui.show import labelled, raw_column, tokens_caption

ROOT = Path(__file__).resolve().parent.parent
KOREAN = "나는 학교에 간다"
TEXTS = [
    KOREAN,
    "The capital of France is",
    "I 😀 emoji 👍🏽 and 👨‍👩‍👧 too",
    "tabs\tand\nnew  lines, café",
    *PROBES[:4],
    "The cat sat on the mat.",
    *list(TRANSLATION_EXAMPLES.values())[:2],
]
SHIPPED = ("mlm", "clm", "translate", "lstm")
RAW_SYMBOLS = "ĠĊċ▁"  # byte-level's space and newline, SentencePiece's space


def backend(tok: object) -> Tokenizer:
    return getattr(tok, "backend_tokenizer", tok)


def shown_of(tok: object, text: str):
    """The text through `tok` (no special tokens added), as `show` gives it."""
    enc = backend(tok).encode(text, add_special_tokens=False)
    return show(reading_of(tok), enc.tokens, text, enc.offsets), enc


def kept_words(tok: object, text: str) -> str:
    """What a WordPiece or word-level tokenizer keeps of `text`: its normalized words one
    space apart, without those it cannot spell."""
    b = backend(tok)
    norm = b.normalizer.normalize_str(text) if b.normalizer else text
    words = [w for w, _ in b.pre_tokenizer.pre_tokenize_str(norm)]
    unk = b.token_to_id("[UNK]")
    return " ".join(w for w in words if unk not in b.encode(w, add_special_tokens=False).ids)


def check_round_trip(tok: object, text: str) -> None:
    shown, enc = shown_of(tok, text)
    reading = reading_of(tok)
    assert shown.raw == enc.tokens and len(shown.tokens) == len(enc.ids)
    assert shown_tokens(tok, enc.ids) == shown.tokens, "one rule, whatever the caller"
    expected = text if reading.scheme in ("bytes", "metaspace") else kept_words(tok, text)
    assert read_back(reading, shown.tokens) == expected, (shown.tokens, reading)
    if reading.scheme in ("bytes", "metaspace"):
        assert not any(ch in tok_ for tok_ in shown.tokens for ch in RAW_SYMBOLS), shown.tokens


# --- the rule itself ------------------------------------------------------------------------


def test_the_byte_alphabet_stands_for_every_byte_once() -> None:
    assert sorted(BYTE_ALPHABET.values()) == list(range(256))
    assert BYTE_ALPHABET["Ġ"] == 0x20 and BYTE_ALPHABET["Ċ"] == 0x0A and BYTE_ALPHABET["A"] == 65


def test_a_token_is_shown_as_the_text_it_stands_for() -> None:
    r = model.tokenizer.Reading("bytes")
    assert show_token(r, "ĠParis") == f"{SPACE_MARK}Paris"
    assert show_token(r, "ë") == "<0xEB>" and show_token(r, "Ġê") == f"{SPACE_MARK}<0xEA>"
    assert show_token(r, "Ċ") == "↵" and show_token(r, "ĉ") == "⇥"
    assert show_token(r, "íķľ") == "한"  # the three bytes of one syllable: the syllable
    assert show_token(r, "âĢĭ") == "<0xE2><0x80><0x8B>"  # an invisible one: its bytes
    wp = model.tokenizer.Reading("wordpiece")
    assert [show_token(wp, t) for t in ("cat", "##s", "[MASK]")] == ["cat", "##s", "[MASK]"]


def test_a_byte_fragment_knows_its_character() -> None:
    r = model.tokenizer.Reading("bytes", specials=frozenset({"<s>"}))
    raw = ["<s>", "ë", "Ĥ", "ĺ", "Ġ", "ðŁĺ", "Ģ", "Ġok"]  # <s> 나 😀 ok
    shown = show(r, raw)
    assert shown.tokens == ["<s>", "<0xEB>", "<0x82>", "<0x98>", SPACE_MARK,
                            "<0xF0><0x9F><0x98>", "<0x80>", f"{SPACE_MARK}ok"]  # fmt: skip
    assert shown.fragment_of == ["", "나", "나", "나", "", "😀", "😀", ""]
    assert read_back(r, shown.tokens) == "나 😀 ok"


# --- every tokenizer: the shown tokens read back -----------------------------------------


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_tokenizers_read_back(name: str) -> None:
    tok = Tokenizer.from_file(str(model.MODELS_DIR / name / "tokenizer.json"))
    for text in TEXTS:
        check_round_trip(tok, text)
        shown, enc = shown_of(tok, text)
        assert shown.tokens == enc.tokens, "the shipped chips stay as they were"


@pytest.mark.parametrize("family", ["bert", "roberta", "gpt2", "llama"])
def test_the_tiny_hf_tokenizers_read_back(family: str) -> None:
    from tests.hf_models import WORDS, tokenizer

    tok = tokenizer(family)
    for text in ["the dog bit the man near the river bank", " ".join(WORDS), KOREAN]:
        check_round_trip(tok, text)


def byte_level() -> Tokenizer:
    """A byte-level BPE (GPT-2's scheme) trained here on the lecture's sentences."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )  # fmt: skip
    tok.train_from_iterator([*PROBES, "the dog bit the man near the river bank"] * 3, trainer)
    return tok


def sentencepiece() -> Tokenizer:
    """A SentencePiece-style BPE ("▁" for a space, Llama's decoder) with byte fallback: the
    letters of English are tokens, anything else falls back to "<0xNN>" tokens."""
    letters = sorted({ch for text in PROBES for ch in text if ch != " "})
    vocab = {"<unk>": 0, "<s>": 1, "▁": 2}
    vocab |= {f"<0x{b:02X}>": 3 + b for b in range(256)}
    vocab |= {ch: 259 + n for n, ch in enumerate(letters)}
    tok = Tokenizer(models.BPE(vocab, [], unk_token="<unk>", byte_fallback=True))
    tok.add_special_tokens(["<unk>", "<s>"])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.decoder = decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
        decoders.Strip(" ", 1, 0),
    ])  # fmt: skip
    return tok


@pytest.mark.parametrize("build", [byte_level, sentencepiece])
def test_byte_level_and_sentencepiece_tokenizers_read_back(build) -> None:
    tok = build()
    assert reading_of(tok).scheme == ("bytes" if build is byte_level else "metaspace")
    for text in TEXTS:
        check_round_trip(tok, text)
        assert read_back(reading_of(tok), shown_of(tok, text)[0].tokens) == tok.decode(
            tok.encode(text).ids
        ), "as the tokenizer's own decoder writes it"
    shown, _ = shown_of(tok, KOREAN)
    assert "<0xEB>" in shown.tokens and shown.fragment_of[shown.tokens.index("<0xEB>")] == "나"


# --- the optional real models (requirements-extra.txt), where installed --------------------

FOUND = packaged()
needs = {name: pytest.mark.skipif(name not in FOUND, reason=f"{name}'s package is not installed")
         for name in ("minilm", "smollm2")}  # fmt: skip


def real_model(name: str):
    """The packaged model as the app loads it: one load a process, shared with the page
    walk (ui.cache.load_model; SmolLM2's GGUF takes about 30 s of CPU to dequantize)."""
    import ui.cache

    return ui.cache.load_model(name, "cpu")


def real_tokenizer(name: str):
    """The packaged model's own fast tokenizer, read as model/hf.py reads it."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    if FOUND[name].suffix == ".gguf":  # read from the GGUF by the model's own load
        return real_model(name).tokenizer
    import transformers

    return transformers.AutoTokenizer.from_pretrained(FOUND[name], local_files_only=True)


@pytest.mark.parametrize("name", [pytest.param(n, marks=needs[n]) for n in ("minilm", "smollm2")])
def test_the_real_tokenizers_read_back(name: str) -> None:
    tok = real_tokenizer(name)
    assert reading_of(tok).scheme == {"minilm": "wordpiece", "smollm2": "bytes"}[name]
    for text in TEXTS:
        check_round_trip(tok, text)
    shown, _ = shown_of(tok, KOREAN)
    assert all(shown.fragment_of[1:3]), "each piece of 나 knows it is part of 나"
    assert shown.fragment_of[0] == "나"


@needs["smollm2"]
def test_smollm2_shows_spaces_bytes_and_its_predictions_as_text() -> None:
    m = real_model("smollm2")
    t = m.trace("The capital of France is")
    assert t.tokens == ["The", "␣capital", "␣of", "␣France", "␣is"]
    assert t.raw_tokens == ["The", "Ġcapital", "Ġof", "ĠFrance", "Ġis"]
    assert m.next_token("The capital of France is", k=1)[0][0] == "␣Paris"
    k = m.trace(KOREAN)
    assert k.tokens[:3] == ["<0xEB>", "<0x82>", "<0x98>"] and k.fragment_of[:3] == ["나"] * 3
    assert k.raw_tokens[0] == "ë" and read_back(m.reading, k.tokens) == KOREAN
    assert not any("Ġ" in tok for tok in m.vocabulary()[:5000])


@needs["minilm"]
def test_minilm_names_its_own_start_and_end_tokens() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "tokens.py"), default_timeout=120)
    at.session_state["sentence"] = KOREAN
    at.session_state["model"] = "minilm"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    caption = " ".join(c.value for c in at.caption)
    assert "`[CLS]` and `[SEP]` mark the start and the end" in caption
    assert "[BOS]" not in caption
    hover = json.dumps(figures(at)["tok_strip"]["data"][0]["customdata"], ensure_ascii=False)
    assert "part of 나" in hover, "a letter of a decomposed syllable says which syllable"


# --- a Hugging Face model with a byte-level tokenizer, through the model and the pages -----


@pytest.fixture(scope="module")
def gpt2_bytes(tmp_path_factory) -> Path:
    """A tiny random GPT-2 with the byte-level tokenizer above (no downloads)."""
    import torch
    import transformers

    folder = tmp_path_factory.mktemp("gpt2-bytes")
    tok = byte_level()
    end = tok.token_to_id("<|endoftext|>")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(
        vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64,
        bos_token_id=end, eos_token_id=end,
    )  # fmt: skip
    transformers.GPT2LMHeadModel(cfg).eval().save_pretrained(folder, safe_serialization=True)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>"
    )
    fast.save_pretrained(folder)
    return folder


def test_an_hf_trace_keeps_shown_and_raw_tokens(gpt2_bytes: Path, tmp_path: Path) -> None:
    m = model.load(gpt2_bytes, device="cpu")
    t = m.trace("the dog bit " + KOREAN)
    assert t.tokens[1] == f"{SPACE_MARK}dog" and t.raw_tokens[1] == "Ġdog"
    assert read_back(m.reading, t.tokens) == "the dog bit " + KOREAN
    i = t.tokens.index("<0xEB>")
    assert t.raw_tokens[i] == "ë" and t.fragment_of[i] == "나"
    ids = m.encode("the dog bit " + KOREAN).ids
    assert m.trace_ids(ids).fragment_of == t.fragment_of, "the bytes alone tell the character"
    assert all("Ġ" not in tok for tok, _ in m.next_token("the dog", k=20))
    assert all("Ġ" not in tok for tok in m.generate("the dog", max_new_tokens=5).tokens)
    save_npz(t, tmp_path / "t.npz")
    back, _ = load_npz(tmp_path / "t.npz")
    assert (back.tokens, back.raw_tokens, back.fragment_of) == (
        t.tokens, t.raw_tokens, t.fragment_of
    )  # fmt: skip


def test_the_tokens_page_shows_text_and_keeps_the_raw_tokens_in_the_hover(gpt2_bytes) -> None:
    from streamlit.testing.v1 import AppTest

    name = model.register("gpt2-bytes", gpt2_bytes).name
    try:
        at = AppTest.from_file(str(ROOT / "pages" / "tokens.py"), default_timeout=60)
        at.session_state["sentence"] = "the dog bit " + KOREAN
        at.session_state["model"] = name
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        drawn = figures(at)
        strip = drawn["tok_strip"]["data"][0]
        assert f"{SPACE_MARK}dog" in strip["text"] and "&lt;0xEB&gt;" in strip["text"]
        hover = json.dumps(strip["customdata"], ensure_ascii=False)
        assert "tokenizer: Ġdog" in hover and "part of 나 · tokenizer: ë" in hover
        ticks = json.dumps(
            [ax.get("ticktext") for f in drawn.values() for ax in f["layout"].values()
             if isinstance(ax, dict)], ensure_ascii=False,
        )  # fmt: skip
        assert f"{SPACE_MARK}dog" in ticks and "Ġ" not in ticks
        caption = " ".join(c.value for c in at.caption)
        assert f"`{SPACE_MARK}` marks a space" in caption and "`<0xNN>` is one byte" in caption
        assert "[BOS]" not in caption
    finally:
        model.unregister(name)


# --- the shipped models and the app's side ---------------------------------------------------


def test_the_shipped_models_show_what_they_showed() -> None:
    t = model.load("mlm", "cpu").trace("The cats sat on the mat.")
    assert t.tokens == ["[BOS]", "the", "cat", "##s", "sat", "on", "the", "mat", ".", "[EOS]"]
    assert t.raw_tokens == t.tokens and not any(t.fragment_of)
    assert labelled(t) is t and raw_column(t) is None
    assert tokens_caption(t).startswith(
        "Hover a chip for its position and id. `[BOS]` and `[EOS]` mark the start and the end."
    )
    out = model.load("translate", "cpu").translate("i go to school")
    assert out.tokens == ["나는", "학교에", "간다"]


def test_hovers_add_the_note_and_ticks_stay_plain() -> None:
    tokens = ["the", viz.TokenLabel("␣dog", "tokenizer: Ġdog")]
    fig = plotly_figure(viz.matrix_heatmap(np.ones((2, 3)), tokens))
    assert list(fig.layout.yaxis.ticktext) == ["the", "␣dog"]
    assert fig.data[0].customdata[1][0][0] == "␣dog (tokenizer: Ġdog)"
    chips = plotly_figure(viz.token_strip(tokens, [5, 7]))
    assert chips.data[0].customdata[1][1] == "␣dog (tokenizer: Ġdog)"
    assert list(chips.data[0].text) == ["the", "␣dog"]
    csv = viz.matrix_to_csv(np.ones((2, 1)), ["0 · the", "1 · ␣dog"], ["x"], ["the", "Ġdog"])
    assert csv.splitlines() == [",raw token,x", "0 · the,the,1", "1 · ␣dog,Ġdog,1"]
