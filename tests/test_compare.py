"""Issue 12's lecture moves: compare two sentences, follow one query, honest links between
heads and words, and the two training views (GPT's shifted targets, BERT's random masking).

Arithmetic is checked on synthetic numbers; the pages through AppTest with the shipped
models (the figures must carry the tokens of the sentences they were given)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import analysis
import model
from analysis.query import LINK_MIN_WEIGHT, head_links
from analysis.training import draw_masking, shifted_targets
from model.examples import PAIRS, PROBES
from tests.test_app import app_test, assert_ok, charts, page

RIVER, CASH = PAIRS[0]
DOG_MAN, MAN_DOG = PAIRS[1]


def ticktext(fig: dict) -> list[str]:
    """Every tick label of a figure's axes."""
    return [t for name, axis in fig["layout"].items() if name[1:5] == "axis"
            for t in axis.get("ticktext", [])]  # fmt: skip


# --- following one query: links against habits -----------------------------------------


def uniform(n: int) -> np.ndarray:
    return np.full((n, n), 1.0 / n)


def test_a_head_where_every_token_looks_at_the_key_is_no_link() -> None:
    tokens = ["[BOS]", "the", "researcher", "asked", "the", "assistant", "because", "he"]
    n, he, assistant = len(tokens), 7, 5
    habit = np.zeros((n, n))
    habit[:, assistant] = 0.83  # everybody looks at "assistant"
    habit[:, 0] = 0.17
    focused = uniform(n) * 0.5
    focused[he] = 0.0
    focused[he, assistant] = 0.8  # only "he" looks there
    focused[he, 0] = 0.2
    att = np.stack([np.stack([habit, focused])])  # [L=1, H=2, T, T]
    links = head_links(att, tokens, he, assistant, causal=False)
    by_head = {h.head: h for h in links}
    assert not by_head[0].link and by_head[0].weight == pytest.approx(0.83)
    assert by_head[0].verdict.startswith("no link")
    assert by_head[1].link and by_head[1].weight == pytest.approx(0.8)
    assert links[0].head == 1, "the head where the query stands out ranks first"


def test_a_decoder_compares_only_with_tokens_that_can_see_the_key() -> None:
    tokens = ["[BOS]", "a", "b", "c", "d"]
    att = np.tril(np.ones((5, 5)))
    att /= att.sum(1, keepdims=True)
    links = head_links(att[None, None], tokens, 4, 3, causal=True)
    # only "d" (4) and the key itself can see position 3: no other token to compare with
    assert links[0].others == 0.0 and links[0].weight == pytest.approx(0.2)
    assert links[0].link == (LINK_MIN_WEIGHT <= 0.2)


# --- the training views --------------------------------------------------------------------


def test_targets_are_the_inputs_shifted_by_one_with_their_probabilities() -> None:
    vocab = ["[PAD]", "[BOS]", "a", "b", "c"]
    tokens = ["[BOS]", "a", "b", "a"]
    logits = np.zeros((4, 5))
    logits[0, 2] = 5  # after [BOS]: a
    logits[1, 4] = 5  # after a: c (wrong, the target is b)
    logits[2, 2] = 5  # after b: a
    s = shifted_targets(tokens, logits, vocab, special_ids=[0, 1])
    assert s.inputs == tokens[:-1] and s.targets == tokens[1:]
    assert s.predicted == ["a", "c", "a"] and s.hits == 2
    p_right = np.exp(5) / (np.exp(5) + 2)
    assert s.p_target == pytest.approx([p_right, 1 / (np.exp(5) + 2), p_right])
    assert s.loss == pytest.approx(float(-np.log(s.p_target).mean()))


def test_bert_masking_draws_15_percent_split_80_10_10() -> None:
    ids = list(range(10, 110))  # 100 ordinary tokens
    hows: Counter[str] = Counter()
    for seed in range(400):
        draws = draw_masking(ids, range(100), 4, 200, [0, 1, 2, 3, 4], seed)
        assert len(draws) == 15 and len({d.position for d in draws}) == 15
        for d in draws:
            assert d.original == ids[d.position]
            assert (d.shown == 4) == (d.how == "[MASK]")
            assert d.how != "unchanged" or d.shown == d.original
            assert d.how != "random token" or d.shown > 4
            hows[d.how] += 1
    total = sum(hows.values())
    assert hows["[MASK]"] / total == pytest.approx(0.8, abs=0.02)
    assert hows["random token"] / total == pytest.approx(0.1, abs=0.02)
    assert draw_masking(ids, range(100), 4, 200, [0], 7) == draw_masking(ids, range(100), 4, 200,
                                                                          [0], 7)  # fmt: skip
    assert len(draw_masking(ids[:3], range(3), 4, 200, [0], 0)) == 1, "at least one position"


def test_without_positions_the_encoder_cannot_tell_the_two_orders_apart() -> None:
    """What the Positional page's compare mode says, measured on the shipped encoder."""
    mlm = model.load("mlm")
    a, b = (mlm.trace(s, positions=False) for s in (DOG_MAN, MAN_DOG))
    on = [mlm.trace(s) for s in (DOG_MAN, MAN_DOG)]
    (_, i, j), *_ = [w for w in analysis.shared_words(a.tokens, b.tokens) if w[0] == "dog"]
    assert analysis.cosines_by_stage(a, b, i, j) == pytest.approx(1.0, abs=1e-5)
    assert analysis.cosines_by_stage(*on, i, j)[-1] < 0.95


# --- the pages -----------------------------------------------------------------------------


def compare_page(name: str, a: str = RIVER, b: str = CASH, **state: object):
    """`name` opened from a compare link: the sentences and compare mode in its URL."""
    at = app_test(name)
    at.query_params.update(sentence=a, compare_on="true", compare=b)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert_ok(at)
    return at


def test_compare_mode_draws_both_sentences_with_the_same_layer_and_head() -> None:
    at = compare_page("attention", model="clm", att_layer=0, att_head=2)
    figs = charts(at)
    a, b = figs["cmp_att_A"], figs["cmp_att_B"]
    assert "bank" in ticktext(a) and "river" in ticktext(a) and "cash" not in ticktext(a)
    assert "cash" in ticktext(b) and "river" not in ticktext(b)
    assert a["layout"]["title"]["text"] == "A: layer 1, head 3"
    assert b["layout"]["title"]["text"] == "B: layer 1, head 3"
    rows = figs["cmp_rows"]  # the word's row in each, one weight axis for both
    assert [a["text"] for a in rows["layout"]["annotations"]] == [
        "A: 'bank' attends to…", "B: 'bank' attends to…"]
    assert rows["layout"]["yaxis2"]["matches"] == "y"
    assert len(rows["data"][0]["x"]) == len(a["layout"]["yaxis"]["tickvals"])
    assert at.toggle(key="compare_on").value and at.text_input(key="compare").value == CASH


def test_compare_mode_off_by_default_and_a_preset_pair_sets_both_sentences() -> None:
    at = page("tokens", RIVER)
    assert_ok(at)
    assert "cmp_strip_B" not in charts(at)
    at.toggle(key="compare_on").set_value(True).run()
    at.selectbox(key="w_compare_pair").set_value(1).run()
    assert_ok(at)
    assert at.session_state["sentence"] == DOG_MAN
    figs = charts(at)
    assert ticktext(figs["cmp_cosine"])[0].startswith("input")
    assert any("'dog'" in c.value and "cosine" in c.value for c in at.caption)


def test_positional_compare_shows_the_order_with_and_without_positions() -> None:
    at = compare_page("positional", DOG_MAN, MAN_DOG)
    fig = charts(at)["cmp_cosine"]
    names = [trace["name"] for trace in fig["data"]]
    assert names == ["with positions", "without positions"]
    assert min(fig["data"][1]["y"]) > 0.999, "the encoder without positions: cosine 1"
    assert any("cannot tell the two orders apart" in c.value for c in at.caption)


def test_masked_compare_hides_the_shared_word_in_both() -> None:
    at = compare_page("masked")
    figs = charts(at)
    assert figs["cmp_mask_A"]["layout"]["title"]["text"] == "A: 'bank' hidden"
    assert any(c.value.startswith("First guesses with 'bank' hidden") for c in at.caption)


def test_follow_one_query_ranks_heads_and_goes_to_the_best() -> None:
    at = page("attention", RIVER, model="clm", att_query_open=True)
    assert_ok(at)
    table = at.dataframe[0].value
    assert list(table.columns[:3]) == ["layer", "head", "bank → river"]
    lifts = table["bank → river"] - table["other words → key (mean)"]
    assert list(lifts) == sorted(lifts, reverse=True)
    best_layer, best_head = int(table["layer"][0]) - 1, int(table["head"][0]) - 1
    at.button(key="att_go").click().run()
    assert_ok(at)
    assert (at.session_state["att_layer"], at.session_state["att_head"]) == (best_layer, best_head)
    title = charts(at)["att_query_row"]["layout"]["title"]["text"]
    assert f"layer {best_layer + 1}, head {best_head + 1}" in title


def test_coreference_is_reported_honestly_with_the_masked_alternative() -> None:
    at = page("attention", PROBES[2], model="clm", att_query=None, att_query_open=True)
    assert_ok(at)
    assert at.selectbox(key="att_query").value == at.session_state["att_query"]
    text = " ".join(m.value for m in at.markdown)
    assert "he →" in text, "the researcher sentence follows 'he' first"
    table = at.dataframe[0].value
    # a head counts as a link only when its weight beats the others' mean twice over
    for _, row in table.iterrows():
        w, others = row.iloc[2], row.iloc[3]
        assert row["verdict"].startswith("link") == (w >= 0.2 and w >= 2 * others - 1e-3)
    assert any("hidden behind [MASK]" in c.value and "'he'" in c.value for c in at.caption)


def test_the_causal_page_shows_targets_shifted_by_one() -> None:
    at = page("causal", "I go to school", model="clm", causal_section="learns")
    assert_ok(at)
    fig = charts(at)["causal_targets"]
    text = fig["data"][0]["text"]
    assert text[0] == ["[BOS]", "i", "go", "to"] and text[1] == ["i", "go", "to", "school"]
    assert any("lessons at once" in c.value for c in at.caption)


def test_the_masked_page_draws_bert_masking_again_on_a_click() -> None:
    at = page("masked", RIVER, masked_section="learns")
    assert_ok(at)
    first = at.dataframe[-1].value
    assert set(first.columns) >= {"token", "the model reads", "its first guess", "p(token)"}
    at.button(key="bert_draw").click().run()
    assert_ok(at)
    assert at.session_state["bert_seed"] == 1
    title = charts(at)["bert_strip"]["layout"]["title"]["text"]
    assert title == "what the model reads (draw 2)"
