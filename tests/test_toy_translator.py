"""The live translator of "Watch it learn" (issue 28, cross-attention forming): its data
are the grammar's one- and two-clause pairs without the lecture's sentences, held out
apart; seeded runs are the same; the budget is honoured, counted in steps; steps lower the
loss; and the command line writes the calibration report the page quotes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model.examples import PROBES, TRANSLATION_PROBES
from model.fit import Budget
from model.toy import snapshot_steps
from model.toy_translator import (
    HELD_OUT_PER_COUNT,
    SENTENCE,
    SNAPSHOT_RATIO,
    TranslatorRun,
    TranslatorSetup,
    agreement,
    data,
)
from model.translation_grammar import all_clauses, pair_of, read_lexicon
from tests.test_toy import FakeClock
from training.probes import contains_probe

ROOT = Path(__file__).resolve().parent.parent


def test_the_data_are_the_grammars_short_pairs_without_the_lectures_sentences() -> None:
    sets = data(2)
    train, test = sets["train"], sets["test"]
    by_english = {c.english(): c for c in all_clauses(read_lexicon())}
    rng = np.random.default_rng(0)
    for pairs in (train, test):
        for i in rng.choice(len(pairs), size=min(200, len(pairs)), replace=False):
            clauses = [by_english[part] for part in pairs.english[i].split(" and ")]
            assert len(clauses) <= 2 and pair_of(clauses)[1] == pairs.korean[i]
    assert len(test) == 2 * HELD_OUT_PER_COUNT and len(train) > 20_000
    assert not set(train.english) & set(test.english), "held-out pairs never trained on"
    assert SENTENCE == "i go to school" and SENTENCE in PROBES[8].lower()
    for english in (*train.english, *test.english):
        assert not contains_probe(english), english
        assert not any(probe in english for probe in TRANSLATION_PROBES), english


def test_the_same_seed_gives_the_same_run() -> None:
    def run(seed: int, steps: int = 4) -> TranslatorRun:
        r = TranslatorRun(TranslatorSetup(seed=seed), Budget(steps=steps))
        r.train_for(float("inf"))
        return r

    a, b, c = run(3), run(3), run(4, steps=2)
    assert a.step == b.step == 4 and a.fit.losses == b.fit.losses
    assert [s.step for s in a.snapshots] == [0, 1, 2, 3, 4]
    assert len(snapshot_steps(100, SNAPSHOT_RATIO)) >= 20, "even on a slow server"
    assert all(np.array_equal(s.cross, t.cross) and s.output == t.output
               for s, t in zip(a.snapshots, b.snapshots, strict=True))  # fmt: skip
    assert a.fit.losses[:2] != c.fit.losses, "another seed, another run"
    first = a.snapshots[0].cross
    assert first.shape == (3, 4, 4, 6), "[L, H, Korean written, English read]"
    assert np.allclose(first.sum(-1), 1.0), "every row a softmax"
    assert a.written == ["나는", "학교에", "간다", "[EOS]"]
    assert a.source_tokens == ["[BOS]", "i", "go", "to", "school", "[EOS]"]


def test_the_time_budget_is_honoured_counting_steps() -> None:
    """1/8 s of (fake) time per step: a 1 s budget is exactly 8 steps; measuring (which
    takes no fake time here) is not training time."""
    clock = FakeClock()
    run = TranslatorRun(budget=Budget(seconds=1.0), clock=clock)
    step = run.fit.step

    def timed_step(*args, **kwargs) -> float:
        clock.now += 0.125
        return step(*args, **kwargs)

    run.fit.step = timed_step  # type: ignore[method-assign]
    run.train_for(0.5)
    assert run.step == 4 and not run.finished, "a slice of 0.5 s is 4 steps"
    run.train_for(60.0)
    assert run.step == 8 and run.ended == "budget"
    assert run.points[-1].step == 8 and run.snapshots[-1].step == 8
    run.train_for(60.0)
    assert run.step == 8, "an ended run does not train on"
    run.release()
    assert run.memory_bytes() < 2**20 and run.step == 8, "what it showed is kept"


def test_a_fixed_number_of_steps_lowers_the_loss() -> None:
    run = TranslatorRun(TranslatorSetup(seed=1), Budget(steps=20))
    assert run.memory_bytes() < 32 * 2**20, "weights, gradients, AdamW's moments: 1.4M params"
    run.train_for(float("inf"))
    assert run.points[-1].test_loss < 0.75 * run.points[0].test_loss


def test_agreement_compares_the_most_read_token_of_each_korean_word() -> None:
    live = np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    shipped = np.array([[0.2, 0.8], [0.3, 0.7], [0.0, 1.0]])
    assert agreement(live, shipped) == [True, False], "the last row writes [EOS]"
    with pytest.raises(ValueError):
        agreement(live, shipped[:2])


def test_the_command_line_writes_the_calibration_report(tmp_path, capsys) -> None:
    from training import toy

    report = tmp_path / "report.json"
    toy.main(["--translator", "--steps", "2", "--report", str(report), "--json"])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["task"] == "translate" and line["steps"] == 2
    written = json.loads(report.read_text())
    assert written["alignment"][0]["korean"] == "나는" and written["alignment"][0]["shipped"] == "i"
    assert {"measured", "seconds_to_95", "aligned_from_step", "curve", "load_average"} <= set(
        written
    )


def test_the_shipped_report_is_the_commands() -> None:
    """assets/toy_translator_report.json, which the page quotes, is a full default run."""
    r = json.loads((ROOT / "assets" / "toy_translator_report.json").read_text())
    assert r["setup"] == {**TranslatorSetup().__dict__} and r["ended"] == "budget"
    assert r["threads"] == 1 and 119 < r["seconds"] < 122 and len(r["curve"]) > 20
    assert r["held_out"] == 2 * HELD_OUT_PER_COUNT, "measured on the page's held-out pairs"
    assert [a["korean"] for a in r["alignment"]] == ["나는", "학교에", "간다"]


def test_the_strips_mark_each_token_right_or_wrong() -> None:
    from tests.figures import plotly_figure
    from viz.learning import alignment_match, translation_answer

    fig = plotly_figure(
        translation_answer(["나는", "학교에", "갔다", "<b>"], ["나는", "학교에", "간다"], "t")
    )
    z, text = fig.data[0].z, fig.data[0].text
    assert list(z[0]) == [1.0, 1.0, 0.0, 0.0], "a wrong and an extra token are wrong"
    assert text[0][0] == "나는 ✓" and text[0][3] == "&lt;b&gt; ✗" and text[1][3] == ""
    assert fig.layout.yaxis.ticktext[0] == "model: 2/3 right"
    fig = plotly_figure(
        alignment_match(["나는", "학교에", "간다"], ["i", "go", "go"], ["i", "school", "go"], "t")
    )
    assert list(fig.data[0].z[0]) == [1.0, 0.0, 1.0]
    assert fig.layout.yaxis.ticktext[0] == "this run: 2/3 alike"
    assert list(fig.layout.xaxis.ticktext) == ["나는", "학교에", "간다"]
