"""Serve a Streamlit script and drive it with Playwright + Debian's Chromium.

Shared by the browser tests (tests/e2e/conftest.py) and the browser benchmark
(bench/bench_browser.py), so both start and watch Streamlit the same way.

Never `playwright install`: the browser is the system Chromium (/usr/bin/chromium, or
$GLASSBOX_CHROMIUM), driven through Playwright's Python package.

How "Streamlit has finished running" is detected (streamlit 1.67): the root element
`[data-testid="stApp"]` carries `data-test-connection-state` ("CONNECTED" once the websocket
is up) and `data-test-script-state` ("initial", "running", "rerunRequested", "notRunning",
...). Polling that attribute alone races: after a widget change it still says "notRunning"
for a few milliseconds before the rerun starts, and a fast rerun can go running -> done
within one React render, so "running" is never seen. So an init script also counts the
`script_finished` messages on Streamlit's websocket; after an action we wait for that count
to grow, the attribute to say "notRunning", and the websocket to fall quiet.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
# Lines the tests want printed in pytest's summary (see tests/e2e/conftest.py).
REPORT_KEY = pytest.StashKey[list]()

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-extensions",
]
VIEWPORT = {"width": 1400, "height": 2400}

APP = '[data-testid="stApp"]'
EXCEPTION = '[data-testid="stException"]'
# Every chart a page shows (ui.workarounds.chart's element; app.py's hidden one that loads
# Plotly early has no figure, so no .gb-chart).
CHART = ".gb-chart"
# A chart counts as drawn once Plotly has put its SVG in the page.
DRAWN_CHART = f"{CHART} .main-svg"

# Counts finished script runs by reading Streamlit's own websocket traffic: every run ends
# with a ForwardMsg whose field 6 (script_finished) is set. Only the top level of each
# protobuf frame is walked (tag varints; lengths skipped), which is cheap. `sent` counts the
# page's own messages to the server (BackMsgs: a widget's rerun request among them).
INIT_SCRIPT = """
(() => {
  const s = (window.__glassbox = { finished: 0, done: 0, sent: 0, lastMsgAt: 0, statuses: [] });
  const varint = (b, i) => {
    let v = 0, mul = 1;
    for (;;) { const x = b[i++]; v += (x & 0x7f) * mul; if (x < 0x80) return [v, i]; mul *= 128; }
  };
  const inspect = (data) => {
    if (!(data instanceof ArrayBuffer)) return;
    const b = new Uint8Array(data);
    let i = 0;
    while (i < b.length) {
      let tag, v; [tag, i] = varint(b, i);
      const field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { [v, i] = varint(b, i);
        if (field === 6) {
          s.finished += 1; s.statuses.push(v);
          if (v !== 2) { s.done += 1; s.lastDoneAt = performance.timeOrigin + performance.now(); }
        } }
      else if (wire === 2) { [v, i] = varint(b, i); i += v; }
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return;
    }
  };
  const Native = window.WebSocket;
  class Watched extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        s.lastMsgAt = performance.now();
        try { inspect(e.data); } catch (err) { s.error = String(err); }
      });
    }
    send(data) { s.sent += 1; return super.send(data); }
  }
  window.WebSocket = Watched;
})();
"""

# Idle: connected, at least `minDone` runs finished, not running, and no websocket message
# for 40 ms (Streamlit applies the last deltas asynchronously after they arrive).
IDLE_JS = """
(minDone) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const s = window.__glassbox;
  return !!app && !!s
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && s.done >= minDone
    && performance.now() - s.lastMsgAt > 40;
}
"""


def unavailable(reason: str) -> None:
    """A browser test that cannot run here: a failure under CI=true, else a skip."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but this browser test cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


def axes_show(axes: list[list[str]], tokens: list[str]) -> bool:
    """Some axis lists exactly these tokens, in order ([MASK] may stand in for any; an axis
    of positions labels each with its position first, "3 across")."""
    for axis in axes:
        labels = [html.unescape(a) for a in axis]
        pairs = enumerate(zip(labels, tokens, strict=False))
        if len(labels) == len(tokens) and all(
            a in (t, f"{i} {t}", "[MASK]") for i, (a, t) in pairs
        ):
            return True
    return False


def find_chromium() -> str | None:
    """The system Chromium: $GLASSBOX_CHROMIUM when set (and only it), else
    /usr/bin/chromium or one on PATH."""
    forced = os.environ.get("GLASSBOX_CHROMIUM")
    candidates = [forced] if forced else ["/usr/bin/chromium"]
    if not forced:
        candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class StreamlitServer:
    """`streamlit run SCRIPT` on a free local port, its output in a log file."""

    def __init__(self, script: str, log: Path | None = None, *extra: str) -> None:
        self.script, self.extra = script, list(extra)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or ARTIFACTS / "logs" / f"{Path(script).stem}-{self.port}.log"
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0

    def start(self) -> StreamlitServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable, "-m", "streamlit", "run", self.script,
            "--server.headless", "true",
            "--server.fileWatcherType", "none",
            "--server.address", "127.0.0.1",
            "--server.port", str(self.port),
            "--browser.gatherUsageStats", "false",
            "--client.showErrorDetails", "full",
            *self.extra,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._log_file = self.log.open("w")
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        return self

    def log_tail(self, n: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        return ""

    def wait_healthy(self, timeout: float = 60.0) -> float:
        """Poll /_stcore/health until it says ok; seconds since start."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early:\n{self.log_tail()}")
            with contextlib.suppress(OSError):
                url = f"{self.url}/_stcore/health"
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        return time.perf_counter() - self.started_at
            time.sleep(0.05)
        raise TimeoutError(f"{self.script} not healthy after {timeout:.0f} s:\n{self.log_tail()}")

    def rss_mb(self) -> float:
        assert self.proc is not None
        return rss_mb(self.proc.pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if getattr(self, "_log_file", None):
            self._log_file.close()

    def __enter__(self) -> StreamlitServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def launch(playwright, executable: str):
    """Headless system Chromium with the flags that keep it quiet and offline."""
    return playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)


def new_context(browser, viewport: dict | None = None, **kwargs):
    context = browser.new_context(viewport=viewport or VIEWPORT, **kwargs)
    context.add_init_script(INIT_SCRIPT)
    return context


# -- waiting on Streamlit -------------------------------------------------------------------


def runs(page) -> int:
    """Completed script runs seen by this page so far."""
    return page.evaluate("() => (window.__glassbox ? window.__glassbox.done : 0)")


STATE_JS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const s = window.__glassbox || {};
  return {connection: app && app.getAttribute('data-test-connection-state'),
          script: app && app.getAttribute('data-test-script-state'), done: s.done,
          sent: s.sent, last_statuses: (s.statuses || []).slice(-5),
          ms_since_last_message: Math.round(performance.now() - (s.lastMsgAt || 0))};
}
"""


def wait_idle(page, min_runs: int = 1, timeout: float = 30.0) -> None:
    """Connected, at least `min_runs` runs completed, and no script running now. On a
    timeout, says where the page was (connection, script state, runs, messages sent)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(IDLE_JS, arg=min_runs, timeout=timeout * 1000, polling="raf")
    except PlaywrightTimeout as err:
        state = page.evaluate(STATE_JS)
        raise PlaywrightTimeout(f"not idle with {min_runs} runs done in {timeout:.0f} s: "
                                f"{state}") from err  # fmt: skip


def after_rerun(page, action: Callable[[], object], timeout: float = 30.0) -> None:
    """Do `action` (a widget change) and wait for the rerun it causes to finish."""
    before = runs(page)
    action()
    wait_idle(page, before + 1, timeout)


LOST_S = 10.0  # a click that sent nothing to the server in this long never reached the app


def click_button(page, button, timeout: float = 60.0) -> None:
    """Click `button` (a Streamlit button: pressing it again does no harm while its first
    press never reached the server) and wait for the rerun it causes to finish. A click
    that sent the server nothing in LOST_S seconds is clicked again, once, with a warning:
    under load a click on an idle page can be lost, with no message to the server, so the
    app never sees it. A click that reached the server and then hangs still fails, with the
    page's state."""
    import warnings

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    before, sent = runs(page), page.evaluate("() => window.__glassbox.sent")
    button.click()
    try:
        page.wait_for_function("(n) => window.__glassbox.sent > n", arg=sent,
                               timeout=LOST_S * 1000)  # fmt: skip
    except PlaywrightTimeout:
        warnings.warn(f"a click sent nothing to the server in {LOST_S:.0f} s "
                      f"({page.evaluate(STATE_JS)}): clicked again", stacklevel=2)  # fmt: skip
        button.click()
    wait_idle(page, before + 1, timeout)


# Pages whose first tab shows the sentence's tokens only inside a strip's chips, not on a
# chart axis: the tab that has an axis of them.
TOKEN_TABS = {"masked": "Where the [MASK] looked"}


def section(page, label: str):
    """The button of a page's section `label` (ui.show.lazy_sections' picker)."""
    return page.get_by_test_id("stButtonGroup").get_by_role("radio", name=label, exact=True)


def open_tab(page, label: str, timeout: float = 60.0) -> None:
    """Open one of a page's sections (ui.show.lazy_sections: its content is computed and
    sent only then, by a rerun) and wait for that rerun to finish."""
    after_rerun(page, section(page, label).click, timeout)


def open_app(page, url: str, timeout: float = 60.0, charts: bool = False) -> None:
    """Go to `url`, wait for the first run to finish (and for a drawn chart if asked)."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
    wait_idle(page, 1, timeout)
    if charts:
        page.wait_for_selector(DRAWN_CHART, state="visible", timeout=timeout * 1000)


def assert_on_page(page, key: str, title: str) -> None:
    """The tab shows page `key` at its own path (the root: the first page) with its title,
    never Streamlit's "Page not found" (nor its dialog)."""
    from playwright.sync_api import expect

    expect(page.locator("h1").first).to_have_text(title, timeout=30000)
    assert "Page not found" not in page.locator("body").inner_text(), key
    assert page.get_by_role("dialog").count() == 0, key
    path = page.url.split("?")[0].rstrip("/")
    assert path.endswith(f"/{key}") or path.count("/") == 2, page.url  # "/": the root


def exceptions(page) -> list[str]:
    """The text of every Streamlit exception box on the page."""
    return [e.inner_text() for e in page.query_selector_all(EXCEPTION)]


def chart_texts(page) -> list[str]:
    """Every tick label / annotation text drawn in the page's Plotly charts."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.gb-chart svg text')]
              .map(t => t.textContent)"""
    )


# Whether a drawn chart's title holds a text (page.evaluate(CHART_TITLE_JS, text)).
CHART_TITLE_JS = """(text) => [...document.querySelectorAll('.gb-chart .gtitle')]
  .some(t => t.textContent.includes(text))"""


def wait_for_chart_title(page, text: str, timeout: float = 60.0) -> None:
    """Wait for a drawn chart whose title holds `text`: a page's body (and a tab's content)
    is drawn after the run a test waits for has ended, chart by chart."""
    page.wait_for_function(CHART_TITLE_JS, arg=text, timeout=timeout * 1000)


def wait_for_chart_text(page, text: str, timeout: float = 60.0, exact: bool = True) -> None:
    """Wait for a drawn chart with a text (tick label, title, annotation) equal to `text`
    (or holding it, when not `exact`)."""
    page.wait_for_function(
        """([text, exact]) => [...document.querySelectorAll('.gb-chart svg text')]
              .some(t => exact ? t.textContent === text : t.textContent.includes(text))""",
        arg=[text, exact], timeout=timeout * 1000,
    )  # fmt: skip


def chart_count(page) -> int:
    return page.locator(DRAWN_CHART).count()


# The tick labels (ticktext) of every axis of every Plotly chart under a CSS scope.
AXIS_LABELS_JS = """(scope) => {
  const out = [];
  for (const gd of document.querySelectorAll(scope + ' .js-plotly-plot')) {
    const layout = gd.layout || {};
    for (const [name, axis] of Object.entries(layout)) {
      if (/^[xy]axis\\d*$/.test(name) && axis && Array.isArray(axis.ticktext))
        out.push(axis.ticktext.map(String));
    }
  }
  return out;
}"""


# The sides where Plotly drew a chart with a larger margin than its figure gave: its
# automargin found the labels or colour bar did not fit, and it drew the chart again.
GROWN_MARGINS_JS = """(scope) => {
  const out = [];
  for (const gd of document.querySelectorAll(scope + ' .js-plotly-plot')) {
    const given = (gd.layout || {}).margin || {}, drawn = (gd._fullLayout || {})._size || {};
    for (const side of ['l', 'r', 't', 'b']) {
      if (typeof given[side] === 'number' && Math.round(drawn[side]) > given[side])
        out.push({ title: String((gd.layout.title || {}).text), side, given: given[side],
                   drawn: Math.round(drawn[side]) });
    }
  }
  return out;
}"""


def grown_margins(page, scope: str = "") -> list[dict]:
    """Charts under `scope` that Plotly drew with margins larger than their figures gave,
    side by side: each was drawn twice (viz.margins)."""
    return page.evaluate(GROWN_MARGINS_JS, scope)


def axis_labels(page, scope: str = "") -> list[list[str]]:
    """The tick labels (ticktext) of every axis of every Plotly chart under `scope`, as the
    figures carry them: a token axis lists the sentence's tokens in order."""
    return page.evaluate(AXIS_LABELS_JS, scope)


def heatmap_signature(page, scope: str) -> str:
    """What the first heatmap under `scope` draws: its title and its image (a data URL)."""
    return page.evaluate(
        """(scope) => {
          const root = document.querySelector(scope);
          if (!root) return '';
          const img = root.querySelector('image');
          const title = root.querySelector('.gtitle');
          return (title ? title.textContent : '') + '|' +
                 (img ? (img.getAttribute('href') || img.getAttribute('xlink:href') || '') : '');
        }""",
        scope,
    )


def clipped_tick_labels(page, tolerance: float = 2.0) -> list[dict]:
    """Axis tick labels drawn (partly) outside their chart's SVG, where the browser cuts them
    off: a token axis nobody can read. Each as {chart, label, overflow: {side: px}}."""
    return page.evaluate(
        """(tol) => {
          const out = [];
          document.querySelectorAll('.gb-chart').forEach((chart, i) => {
            const svg = chart.querySelector('.main-svg');
            if (!svg) return;
            const box = svg.getBoundingClientRect();
            const key = (chart.closest('[class*="st-key-"]')?.className.match(/st-key-(\\S+)/)
                         || [null, String(i)])[1];
            chart.querySelectorAll('.xtick text, .ytick text').forEach((t) => {
              const r = t.getBoundingClientRect();
              if (!t.textContent || r.width === 0) return;
              const over = {left: box.left - r.left, right: r.right - box.right,
                            top: box.top - r.top, bottom: r.bottom - box.bottom};
              const worst = Object.entries(over).filter(([, v]) => v > tol);
              if (worst.length) out.push({chart: key, label: t.textContent,
                overflow: Object.fromEntries(worst.map(([k, v]) => [k, Math.round(v)]))});
            });
          });
          return out;
        }""",
        tolerance,
    )


def page_model(page_key: str, sidebar: str = "mlm") -> str:
    """The model an explorer page runs when the sidebar's choice is `sidebar`: that one when
    it can serve the page, else the first that can (ui.frame.open_page's rule)."""
    import model
    from ui.registry import BY_KEY

    infos = model.catalogue()
    serving = [name for name, info in infos.items() if BY_KEY[page_key].serves(info)]
    return sidebar if sidebar in serving else serving[0]
