"""Browser-test fixtures: one Streamlit server for the session (one per worker under
pytest-xdist), headless system Chromium.

No browser: the tests skip, except in CI (`CI=true`), where they fail, so a CI run without
Chromium can never pass quietly. Never `playwright install`; see tests/e2e/harness.py.

Artifacts (git-ignored): artifacts/screenshots/*.png, artifacts/logs/*.log (server output).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import harness

SCREENSHOTS = harness.ARTIFACTS / "screenshots"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = harness.find_chromium()
    if path is None:
        harness.unavailable(
            "no Chromium found (apt-get install chromium, or set GLASSBOX_CHROMIUM)"
        )
    return path


@pytest.fixture(scope="session")
def playwright_driver(chromium_path: str) -> Iterator[object]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        harness.unavailable(
            "the playwright package is not installed (pip install -r requirements-dev.txt)"
        )
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright_driver, chromium_path: str) -> Iterator[object]:
    b = harness.launch(playwright_driver, chromium_path)
    yield b
    b.close()


@pytest.fixture(scope="session")
def app_server(chromium_path: str) -> Iterator[harness.StreamlitServer]:
    """`streamlit run app.py` on a free port, healthy before the first test uses it."""
    if not (harness.ROOT / "app.py").is_file():
        pytest.fail("app.py is missing", pytrace=False)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # one server per worker (pytest -n)
    log = harness.ARTIFACTS / "logs" / f"e2e-app{'-' + worker if worker else ''}.log"
    server = harness.StreamlitServer("app.py", log)
    server.start()
    try:
        server.wait_healthy(timeout=90)
        yield server
    finally:
        server.stop()


@pytest.fixture
def context(browser) -> Iterator[object]:
    ctx = browser.new_context(viewport=harness.VIEWPORT)
    ctx.add_init_script(harness.INIT_SCRIPT)
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, request) -> Iterator[object]:
    """A fresh tab; on failure its screenshot goes to artifacts/screenshots/FAILED-*.png."""
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    pg.js_errors = errors  # type: ignore[attr-defined]
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
        pg.screenshot(path=str(SCREENSHOTS / f"FAILED-{name}.png"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def tokenizers() -> dict[str, object]:
    """The shipped models, to know which tokens a page should show for a sentence."""
    import model

    return {name: model.load(name, device="cpu") for name in ("mlm", "clm")}


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    lines = config.stash.get(harness.REPORT_KEY, [])
    if lines:
        terminalreporter.section("browser tests: measurements")
        for line in lines:
            terminalreporter.write_line(line)
