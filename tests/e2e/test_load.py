"""Ten browser sessions at once on one server, each with its own sentence.

Every session types its sentence, then all ten walk through every page together: each must
show its own tokens and nobody else's (the model is cached once for all sessions, so
cross-talk through shared state would show up here), with no exception. Then every session
types two more sentences. The server's RSS is read before, after the walk, after the extra
sentences, at the peak and after the tabs close; it is printed in the test summary and
written to artifacts/load.json. Bounded: the ten sessions add less than RSS_BUDGET_MB, and
the extra sentences less than WAVE_BUDGET_MB.
"""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from tests.e2e import harness
from tests.e2e.harness import axes_show
from tests.e2e.test_pages import (
    PAGE_KEYS,
    assert_clean,
    expected_tokens,
    nav_link,
    sentence_box,
    url,
    wait_for_tokens,
)

pytestmark = pytest.mark.e2e

SESSIONS = 10
# One distinct word per session, so each session's token axis is unique.
WORDS = ["penguin", "volcano", "violin", "desert", "library",
         "tiger", "harbor", "castle", "garden", "rocket"]  # fmt: skip
SENTENCES = [f"The {w} was seen near the old bridge at night." for w in WORDS[:SESSIONS]]
# Memory the ten sessions may add to a warmed-up server (MiB): sessions, cached traces and
# allocator slack, not a copy of the model per session (~7 MB each) or a leak per rerun.
RSS_BUDGET_MB = 400
# More sentences in the same sessions once everything is warm. Each new sentence adds about
# 1 MB of cached results (traces with their [T, V] logits, next-token distributions) until
# the caches' max_entries are reached: measured on the causal page, +125 MB over the first
# 150 new sentences, then +25 MB over the next 180. A copy of a model per rerun (7 MB) or
# any leak of that size would blow this budget for 20 reruns.
WAVES = 2
WAVE_BUDGET_MB = 120
# A laptop-sized window: ten 1400x2400 tabs would mostly measure Chromium's rasterizer.
LOAD_VIEWPORT = {"width": 1280, "height": 800}
# The sessions open and type on the lightest page, then walk through all of them.
START = "masked"
WALK = [START] + [k for k in PAGE_KEYS if k != START]


@pytest.fixture(scope="module")
def load_server(chromium_path):
    """A server of its own, so the memory readings are not skewed by the other tests."""
    with harness.StreamlitServer("app.py", harness.ARTIFACTS / "logs" / "e2e-load.log") as srv:
        srv.wait_healthy(timeout=90)
        yield srv


def _wait_all(pages, rss: list[float], server, before: list[int]) -> None:
    for pg, n in zip(pages, before, strict=True):
        harness.wait_idle(pg, n + 1, timeout=120)
        rss.append(server.rss_mb())


def test_ten_sessions_each_see_their_own_sentence(
    load_server,
    browser,
    tokenizers,
    request,
) -> None:
    server = load_server
    started = time.perf_counter()

    # Warm up: one session visits every page (both models loaded, every import done).
    warm = harness.new_context(browser)
    pg = warm.new_page()
    harness.open_app(pg, url(server, PAGE_KEYS[0]), charts=True)
    for key in PAGE_KEYS[1:]:
        harness.after_rerun(pg, lambda key=key: nav_link(pg, key).click())
        pg.wait_for_selector(harness.DRAWN_CHART)
    warm.close()
    phases = {"warm-up": time.perf_counter() - started}
    time.sleep(1)
    rss_before = server.rss_mb()
    rss = [rss_before]

    contexts = [harness.new_context(browser, LOAD_VIEWPORT) for _ in range(SESSIONS)]
    pages = [c.new_page() for c in contexts]
    for p in pages:
        p.js_errors = []  # type: ignore[attr-defined]
        p.on("pageerror", lambda err, p=p: p.js_errors.append(str(err)))
    try:
        # All ten open a page at once...
        for p in pages:
            p.goto(url(server, START), wait_until="commit")
        for p in pages:
            harness.wait_idle(p, 1, timeout=120)
        phases["open"] = time.perf_counter() - started - sum(phases.values())
        # ...then all ten type their own sentence at once (no waiting in between)...
        before = [harness.runs(p) for p in pages]
        for p, sentence in zip(pages, SENTENCES, strict=True):
            box = sentence_box(p)
            box.fill(sentence)
            box.press("Control+Enter")
        _wait_all(pages, rss, server, before)
        phases["type"] = time.perf_counter() - started - sum(phases.values())

        # ...and walk through every page together.
        for key in WALK:
            if key != START:
                before = [harness.runs(p) for p in pages]
                for p in pages:
                    nav_link(p, key).click()
                _wait_all(pages, rss, server, before)
            if key in harness.TOKEN_TABS:  # its first tab has no axis of tokens: open the tab
                before = [harness.runs(p) for p in pages]
                for p in pages:
                    p.get_by_role("tab", name=harness.TOKEN_TABS[key], exact=True).click()
                _wait_all(pages, rss, server, before)
            for i, (p, sentence) in enumerate(zip(pages, SENTENCES, strict=True)):
                assert p.locator("h1").first.inner_text().strip() != ""
                expect(sentence_box(p), f"{key} {i}").to_have_value(sentence)
                wait_for_tokens(p, expected_tokens(tokenizers, key, sentence))
                axes = harness.axis_labels(p)
                others = [s for j, s in enumerate(SENTENCES) if j != i]
                leaked = [s for s in others if axes_show(axes, expected_tokens(tokenizers, key, s))]
                assert not leaked, f"session {i} on {key} shows another session's tokens"
                assert_clean(p)
            phases[key] = time.perf_counter() - started - sum(phases.values())

        # A second wave: every session types more new sentences on the last page. Memory
        # must level off (caches are bounded), not grow with every rerun.
        rss_walk = server.rss_mb()
        last = WALK[-1]
        for wave in range(WAVES):
            texts = [f"{s[:-1]} and again {wave + 1}." for s in SENTENCES]
            before = [harness.runs(p) for p in pages]
            for p, text in zip(pages, texts, strict=True):
                box = sentence_box(p)
                box.fill(text)
                box.press("Control+Enter")
            _wait_all(pages, rss, server, before)
            for p, text in zip(pages, texts, strict=True):
                wait_for_tokens(p, expected_tokens(tokenizers, last, text))
                assert_clean(p)
        rss_waves = server.rss_mb()
        phases["more sentences"] = time.perf_counter() - started - sum(phases.values())
    finally:
        for c in contexts:
            c.close()

    time.sleep(2)
    rss_after = server.rss_mb()
    report = {
        "sessions": SESSIONS,
        "pages": PAGE_KEYS,
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(max(rss), 1),
        "rss_after_walk_mb": round(rss_walk, 1),
        "rss_after_more_sentences_mb": round(rss_waves, 1),
        "rss_after_close_mb": round(rss_after, 1),
        "seconds": round(time.perf_counter() - started, 1),
        "phase_seconds": {k: round(v, 1) for k, v in phases.items()},
    }
    harness.ARTIFACTS.mkdir(exist_ok=True)
    (harness.ARTIFACTS / "load.json").write_text(json.dumps(report, indent=1) + "\n")
    request.config.stash.setdefault(harness.REPORT_KEY, []).append(
        f"load test: {SESSIONS} sessions x {len(PAGE_KEYS)} pages in {report['seconds']} s; "
        f"server RSS (MiB) {report['rss_before_mb']} before, {report['rss_after_walk_mb']} "
        f"after the walk, {report['rss_after_more_sentences_mb']} after {WAVES * SESSIONS} "
        f"more sentences, {report['rss_peak_mb']} peak, {report['rss_after_close_mb']} after "
        f"closing; phases (s): {report['phase_seconds']}"
    )
    assert max(rss) - rss_before < RSS_BUDGET_MB, report
    assert rss_waves - rss_walk < WAVE_BUDGET_MB, report
    assert server.proc.poll() is None, "the server died"
