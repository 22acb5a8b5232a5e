"""English -> Korean translation: the grammar's rules, the splits, the word-level tokenizer,
unknown words, and the LSTM encoder-decoder (the RNN bottleneck) through model.load."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import torch

import model
from model import Unsupported
from model.checkpoint import save_checkpoint
from model.lstm import LSTMSeq2Seq, RecurrentConfig, load_recurrent
from model.tokenizer import BOS_ID, MASK_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID
from tests.conftest import save_tiny
from tests.test_contract import CALLS
from training.translation_data import (
    CLAUSE_COUNTS,
    LECTURE,
    PER_COUNT,
    SPLITS,
    TOKENIZER,
    all_clauses,
    build_tokenizer,
    clause_counts,
    has_batchim,
    held_out,
    make_splits,
    pair_of,
    read_lexicon,
    rule_translation,
)
from training.translation_train import encode_pairs, greedy_batch, padded, train

SMALL = {"train": 6000, "valid": 300, "test": 300}  # per clause count; 1 clause runs out


@pytest.fixture(scope="module")
def lex():
    return read_lexicon()


@pytest.fixture(scope="module")
def clauses(lex):
    return all_clauses(lex)


@pytest.fixture(scope="module")
def splits(lex):
    return make_splits(lex, seed=0, per_count=SMALL)


@pytest.fixture(scope="module")
def tokenizer(lex):
    return build_tokenizer(lex)


# --- the grammar ------------------------------------------------------------------------------


def test_the_readme_examples_come_out_of_the_rules(lex) -> None:
    assert rule_translation(lex, "i go to school") == "나는 학교에 간다"
    two = "i went to school and he reads a book every day"
    assert rule_translation(lex, two) == "나는 학교에 갔고 그는 매일 책을 읽는다"
    assert rule_translation(lex, "the dog bit the man") == "개가 남자를 물었다"
    assert rule_translation(lex, "i went to the bank to get cash") == "나는 돈을 찾으러 은행에 갔다"


def test_particles_follow_the_batchim(lex, clauses) -> None:
    assert has_batchim("책") and has_batchim("선생님") and not has_batchim("학교")
    subjects = {s.english: s.korean for s in lex.subjects}
    assert subjects["the student"] == "학생이" and subjects["the dog"] == "개가"
    assert subjects["the teacher"] == "선생님이" and subjects["i"] == "나는"
    for clause in clauses:
        if clause.obj is None:
            continue
        cls, noun = clause.obj
        word = next(w for w in clause.korean().split() if w.startswith(noun.korean))
        particle = "에" if cls == "place" else "을" if has_batchim(noun.korean) else "를"
        assert word == noun.korean + particle, clause.english()
    assert rule_translation(lex, "she likes school") == "그녀는 학교를 좋아한다"  # not a place


def test_read_is_past_only_with_yesterday_so_every_sentence_has_one_translation(clauses) -> None:
    for clause in clauses:
        if clause.verb.english[0] == "read" and clause.past:
            assert clause.adverb is not None and clause.adverb.english == "yesterday"
        tense = "past" if clause.past else "present"
        assert clause.adverb is None or clause.adverb.tense in (tense, "any")
    english = [c.english() for c in clauses]
    assert len(set(english)) == len(english)  # one clause (so one Korean) per English string


def test_no_animate_object_repeats_its_subject(clauses) -> None:
    animate = [c for c in clauses if c.obj and c.obj[0] == "animate"]
    assert animate and all(c.obj[1].english != c.subject.english for c in animate)
    assert "the dog bit the dog" not in {c.english() for c in clauses}


# --- the splits -------------------------------------------------------------------------------


def test_every_clause_count_is_in_every_split(splits) -> None:
    for name in SPLITS:
        counts = clause_counts(splits[name])
        assert all(counts[n] > 0 for n in CLAUSE_COUNTS), (name, counts)
        assert all(p[2] == len(p[0].split(" and ")) for p in splits[name])
    assert clause_counts(splits["test"]) == dict.fromkeys(CLAUSE_COUNTS, SMALL["test"])
    assert clause_counts(splits["train"])[1] < SMALL["train"]  # the 1-clause pool ran out


def test_the_shipped_sizes_leave_1_clause_sentences_for_training(clauses) -> None:
    pool = sum(1 for c in clauses if not held_out(c))
    assert pool - PER_COUNT["valid"] - PER_COUNT["test"] > 5000


def test_the_splits_are_disjoint_without_repeats(splits) -> None:
    english = [{p[0] for p in splits[name]} for name in SPLITS]
    assert [len(e) for e in english] == [len(splits[name]) for name in SPLITS]
    assert not (english[0] & english[1] or english[0] & english[2] or english[1] & english[2])


def test_no_lecture_pair_is_in_any_split_even_as_a_clause(clauses, splits) -> None:
    by_english = {c.english(): c for c in clauses}
    for name in SPLITS:
        for english, korean, _ in splits[name]:
            parts = [by_english[part] for part in english.split(" and ")]
            assert not any(c.core() in LECTURE for c in parts), english
            assert pair_of(parts) == (english, korean, len(parts))


def test_the_splits_are_deterministic_for_a_seed(lex) -> None:
    small = {"train": 50, "valid": 10, "test": 10}
    again = make_splits(lex, seed=0, per_count=small)
    assert again == make_splits(lex, seed=0, per_count=small)
    assert again["train"] != make_splits(lex, seed=1, per_count=small)["train"]


# --- the tokenizer ----------------------------------------------------------------------------


def test_the_tokenizer_has_the_special_tokens_first_and_is_the_shipped_one(tokenizer) -> None:
    assert [tokenizer.id_to_token(i) for i in range(5)] == SPECIAL_TOKENS
    shipped = json.loads(Path(TOKENIZER).read_text())["model"]["vocab"]
    assert shipped == tokenizer.get_vocab(with_added_tokens=False)


def test_hangul_stays_composed_and_input_is_normalised(tokenizer) -> None:
    korean = "나는 학교에 간다"
    enc = tokenizer.encode(korean)
    assert enc.tokens == ["나는", "학교에", "간다"] and UNK_ID not in enc.ids
    assert tokenizer.encode(unicodedata.normalize("NFD", korean)).ids == enc.ids
    assert tokenizer.decode(enc.ids) == korean
    for text in ("I go to school.", "  I GO to   school!  ", "i go to school?"):
        assert tokenizer.encode(text).tokens == ["i", "go", "to", "school"], text


def test_an_unknown_word_becomes_unk(tokenizer) -> None:
    enc = tokenizer.encode("i go to the zoo")
    assert enc.tokens == ["i", "go", "to", "the", "[UNK]"]


# --- the LSTM ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lstm_folder(tmp_path_factory, tokenizer) -> Path:
    torch.manual_seed(0)
    cfg = RecurrentConfig(vocab_size=tokenizer.get_vocab_size(), d_model=16, max_len=24)
    folder = tmp_path_factory.mktemp("tiny") / "tiny-lstm"
    return save_checkpoint(LSTMSeq2Seq(cfg).eval(), cfg, tokenizer, folder)


@pytest.fixture(scope="module")
def lstm(lstm_folder):
    return model.load(lstm_folder, device="cpu")


def test_the_lstm_loads_as_a_recurrent_translator(lstm, lstm_folder) -> None:
    assert type(lstm).__name__ == "RecurrentTranslator" and lstm.kind == "recurrent"
    assert lstm.capabilities == {"trace", "translate"} == model.read_info(lstm_folder).capabilities
    again, cfg, _ = load_recurrent(lstm_folder)
    for a, b in zip(again.state_dict().values(), lstm.module.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert cfg == lstm.cfg


def test_the_lstm_does_what_it_declares_and_refuses_the_rest(lstm) -> None:
    for capability, call in CALLS.items():
        if lstm.can(capability):
            assert call(lstm) is not None
        else:
            with pytest.raises(Unsupported, match=r"'tiny-lstm' \(recurrent\) cannot"):
                call(lstm)


def test_translate_is_deterministic_and_the_trace_follows_it(lstm) -> None:
    out = lstm.translate("the dog bites the man")
    assert out == lstm.translate("the dog bites the man") and out.unknown == []
    t = lstm.trace("the dog bites the man")
    assert t.tokens == ["[BOS]", *out.tokens] and t.layers == [] and t.cross_layers == []
    assert t.encoder.tokens == ["[BOS]", "the", "dog", "bites", "the", "man", "[EOS]"]
    d = lstm.cfg.d_model
    assert t.states.shape == (len(t.tokens), d) and t.encoder.states.shape == (7, d)
    assert t.logits.shape == (len(t.tokens), lstm.cfg.vocab_size)
    np.testing.assert_allclose(t.context, t.encoder.states[-1])  # the final hidden state
    logits = t.logits.copy()
    logits[:, [PAD_ID, UNK_ID, BOS_ID, MASK_ID]] = -np.inf
    assert lstm.tokens_of(logits.argmax(-1)[: len(out.tokens)]) == out.tokens


def test_the_decoder_gets_the_source_only_through_the_context(lstm) -> None:
    module = lstm.module
    assert module.decoder.input_size == lstm.cfg.d_model  # it reads target embeddings only
    assert not any("attn" in name for name, _ in module.named_modules())
    src_a = torch.tensor([lstm.encode("i go to the park").ids])
    src_b = torch.tensor([lstm.encode("the cat drinks milk").ids])
    tgt = torch.tensor([[BOS_ID, 7, 9, 11]])
    with torch.no_grad():
        logits_a, rec_a = module(src_a, tgt)
        logits_b, _ = module(src_b, tgt)
        _, _, final_a = module.encode(src_a)
        from_state, _, states, _ = module.decode(tgt, final_a)  # only the final (h, c)
    torch.testing.assert_close(from_state, logits_a)
    torch.testing.assert_close(states, rec_a.decoder_states)
    torch.testing.assert_close(final_a[0][-1], rec_a.context)
    assert not torch.allclose(logits_a, logits_b)
    t = lstm.trace_pair("i go to the park", "나는 공원에 간다")
    assert t.tokens == ["[BOS]", "나는", "공원에", "간다"] and t.states.shape == (4, 16)


def test_unknown_words_are_named_by_both_translators(lstm, tokenizer, tmp_path) -> None:
    transformer = model.load(save_tiny(tmp_path / "tf", tokenizer, "encoder-decoder"), "cpu")
    for m in (lstm, transformer):
        out = m.translate("I go to the zoo with Bob.")
        assert out.unknown == ["zoo", "with", "Bob"]  # as typed; the final "." is not a word


def test_the_evaluation_decodes_as_the_app_does(lstm, tokenizer, tmp_path) -> None:
    transformer = model.load(save_tiny(tmp_path / "tf", tokenizer, "encoder-decoder"), "cpu")
    pairs = [("i go to the park", "", 1), ("the cat drinks milk and we ate rice", "", 2)]
    for m in (lstm, transformer):
        src = padded([ids for ids, _ in encode_pairs(pairs, tokenizer)])
        batch = greedy_batch(m.module, src, m.max_len)
        assert [m.tokens_of(ids) for ids in batch] == [m.translate(p[0]).tokens for p in pairs]


def test_both_trainers_run_and_save_loadable_checkpoints(splits, tokenizer, tmp_path) -> None:
    pairs = [p for p in splits["train"] if p[2] == 1][:32]
    for which in ("lstm", "translate"):
        quiet = dict(device="cpu", log=lambda *_: None)
        _, facts = train(which, pairs, pairs[:8], tokenizer, steps=3, batch_size=16,
                         eval_every=2, out=tmp_path / which, **quiet)  # fmt: skip
        assert facts["steps"] == 3 and [h["step"] for h in facts["valid_history"]] == [2, 3]
        assert facts["best_step"] in (2, 3)
        m = model.load(tmp_path / which, device="cpu")
        assert m.kind == facts["kind"] and m.translate("i go to the park").text is not None


def test_the_pages_presets_carry_the_grammars_own_translation() -> None:
    from model.examples import TRANSLATION_EXAMPLES, TRANSLATION_PROBES
    from training.translation_data import read_lexicon, rule_translation

    lex = read_lexicon()
    assert set(TRANSLATION_PROBES) <= set(TRANSLATION_EXAMPLES)
    for english, korean in TRANSLATION_EXAMPLES.items():
        assert rule_translation(lex, english) == korean, english
