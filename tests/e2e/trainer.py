"""A teacher who keeps a training running on the Watch-it-learn page while the class walks
the app (crowd.run_crowd's `during`): issue 28's "while one training runs, other visitors'
pages stay usable", measured with the class load test (tests/e2e/test_deploy.py).

It opens /learn in a browser context of its own, presses Train with the page's defaults
(reverse, sinusoidal positions, the default budget), waits until the run has ended, and
presses Train again, until every session of the class has ended. Counted: the runs, their
steps, and the seconds each took; a run that does not end in time is a failure.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from tests.e2e import crowd as crowds
from tests.e2e import harness

RUN_TIMEOUT_S = 180  # the page's default budget is 30 s; a busy machine steps slower
ENDED = re.compile(r"Trained ([\d,]+) steps in ([\d.]+) s")
STARTED_JS = """() => /Training: step|Waiting in line/.test(document.body.innerText)"""
ENDED_JS = """(src) => {
  const m = document.body.innerText.match(new RegExp(src));
  return m && !/Training: step/.test(document.body.innerText) ? [m[1], m[2]] : null;
}"""


@dataclass
class Trainer:
    base: str
    runs: list[dict] = field(default_factory=list)  # {"steps", "seconds", "wall_s"}

    async def __call__(self, crowd: crowds.Crowd, browser) -> None:
        context = await browser.new_context(viewport=crowds.VIEWPORT)
        page = await context.new_page()
        try:
            await page.goto(self.base + "/learn", wait_until="domcontentloaded")
            train = page.get_by_role("button", name="Train", exact=True)
            await train.wait_for(timeout=60000)
            while crowd.completed + len(crowd.failed) < crowd.sessions:
                started = time.perf_counter()
                await train.click()
                # Running (or waiting in line), then ended: read off the page's own words.
                await page.wait_for_function(STARTED_JS, timeout=60000)
                found = await page.wait_for_function(ENDED_JS, arg=ENDED.pattern,
                                                     timeout=RUN_TIMEOUT_S * 1000)  # fmt: skip
                steps, seconds = await found.json_value()
                self.runs.append({"steps": int(steps.replace(",", "")),
                                  "seconds": float(seconds),
                                  "wall_s": round(time.perf_counter() - started, 1)})  # fmt: skip
            shown = await page.query_selector_all(harness.EXCEPTION)
            assert not shown, "an exception on the Watch-it-learn page"
        finally:
            await context.close()

    def summary(self) -> str:
        if not self.runs:
            return "no training run ended during the class"
        steps = [r["steps"] for r in self.runs]
        return (f"{len(self.runs)} training runs ended during the class (reverse, defaults), "
                f"{min(steps):,}-{max(steps):,} steps each in "
                f"{self.runs[0]['seconds']:.0f} s of training")  # fmt: skip
