"""Copy the browser tests' page screenshots into assets/screenshots/ for the README.

    python -m tests.e2e.screenshots          # copy what the last e2e run left
    python -m tests.e2e.screenshots --take   # run the page tests first, then copy

The e2e tests write artifacts/screenshots/<page>.png (git-ignored) on every run, each page
opened from a shared URL with the lecture's sentence "I walked across the road to get cash
from the bank." (the translation pages with "i go to school", the vision page with a test
digit) in a 1400x2400 viewport. This script only picks them up; commit the copies.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

from tests.e2e.harness import ARTIFACTS, ROOT
from ui.lecture.frame import OVERVIEW
from ui.lecture.syllabus import STEPS
from ui.registry import PAGES as REGISTRY

# every page: tests/e2e saves a screenshot of each (the lecture's in presenter mode, 1280x720)
PAGES = [*(p.key for p in REGISTRY), OVERVIEW, *(s.key for s in STEPS), "compare_attention",
         "compare_positional"]
# the lecture walked in Korean (tests/e2e/test_lecture_ko_browser.py): the Korean overview's
# thumbnails, lecture-ko-<slug>.png (ui.lecture.frame.thumbnail)
KOREAN = [f"lecture-ko-{s.slug}" for s in STEPS]
SOURCE = ARTIFACTS / "screenshots"
TARGET = ROOT / "assets" / "screenshots"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--take", action="store_true", help="run the page tests first")
    args = parser.parse_args()
    if args.take:
        cmd = [sys.executable, "-m", "pytest", "-q", "tests/e2e/test_pages.py",
               "tests/e2e/test_translation_pages.py", "tests/e2e/test_vision_page_browser.py",
               "tests/e2e/test_lecture_browser.py", "tests/e2e/test_compare_browser.py",
               "tests/e2e/test_lecture_ko_browser.py",
               "-k", "shared_url_renders or translation_page or vit_page or lecture or compare"]
        if subprocess.call(cmd, cwd=ROOT) != 0:
            print("the page tests failed: screenshots not copied", file=sys.stderr)
            return 1
    missing = [p for p in [*PAGES, *KOREAN] if not (SOURCE / f"{p}.png").is_file()]
    if missing:
        print(f"no screenshot for {missing} in {SOURCE}: run with --take", file=sys.stderr)
        return 1
    TARGET.mkdir(parents=True, exist_ok=True)
    for p in [*PAGES, *KOREAN]:
        shutil.copyfile(SOURCE / f"{p}.png", TARGET / f"{p}.png")
        print(f"{TARGET.relative_to(ROOT)}/{p}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
