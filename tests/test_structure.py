"""The layout's rules, checked: who may import what, thin pages, one registry that matches
the files, every chart through the figure cache, every command answering --help, and the
one Streamlit internal the app relies on (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ui.registry import PAGES

ROOT = Path(__file__).resolve().parent.parent
MAX_PAGE_LINES = 150


def sources(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("**/*.py"))


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module `path` imports (at any depth of the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def imports_of(folder: str) -> dict[str, set[str]]:
    return {str(p.relative_to(ROOT)): imported_modules(p) for p in sources(folder)}


def breaks(folder: str, banned: set[str]) -> list[str]:
    """'file imports module' for every import of `folder` whose top package is banned."""
    return [
        f"{file} imports {module}"
        for file, modules in imports_of(folder).items()
        for module in sorted(modules)
        if module.split(".")[0] in banned
    ]


# --- import rules -----------------------------------------------------------------------------


def test_viz_imports_neither_streamlit_nor_torch_nor_the_model() -> None:
    assert not breaks("viz", {"streamlit", "torch", "model", "ui", "analysis"})


def test_figures_are_built_as_dicts_without_plotly() -> None:
    """viz builds Plotly's figure JSON as plain dicts: no plotly object at run time (their
    validation and copies cost most of a figure's build), so viz imports nothing of plotly,
    nor do the app's ui and pages (the students' lab and the tests may: tests/figures.py)."""
    assert not breaks("viz", {"plotly", "_plotly_utils"})
    assert not breaks("ui", {"plotly"}) and not breaks("pages", {"plotly"})
    code = "import sys, viz; bad = [m for m in sys.modules if 'plotly' in m]; assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_analysis_is_plain_numpy() -> None:
    assert not breaks("analysis", {"streamlit", "torch", "ui", "viz"})


def test_model_imports_neither_streamlit_nor_ui() -> None:
    assert not breaks("model", {"streamlit", "ui", "pages", "viz", "analysis", "training"})


def test_classroom_imports_no_streamlit_and_nothing_of_the_app() -> None:
    """The class's store is used by the pages and by tools outside: no Streamlit, no model."""
    assert not breaks("classroom", {"streamlit", "ui", "pages", "model", "viz", "torch"})


def test_pages_import_no_torch_and_no_model_internals() -> None:
    found = breaks("pages", {"torch"})
    for file, modules in imports_of("pages").items():
        found += [f"{file} imports {m}" for m in modules if m.startswith("model.")]
    assert not found


def test_the_app_at_run_time_never_imports_training() -> None:
    assert not breaks("ui", {"training"}) and not breaks("pages", {"training"})


def test_viz_and_analysis_load_without_torch_or_streamlit() -> None:
    """The rule holds for what they import indirectly too."""
    code = (
        "import sys, viz, analysis; "
        "bad = {'torch', 'streamlit'} & set(sys.modules); assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_the_models_load_without_streamlit() -> None:
    code = (
        "import sys, model; model.load('mlm', 'cpu').trace('the cat'); "
        "import model.seq2seq; bad = {'streamlit', 'ui'} & set(sys.modules); assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# --- pages ------------------------------------------------------------------------------------


def test_the_registry_and_the_page_files_match() -> None:
    """One file per explorer page, named by its key, opening its own key; Lecture mode has
    no file (its pages are served from the syllabus)."""
    files = {p.stem for p in (ROOT / "pages").glob("*.py")}
    assert files == {spec.key for spec in PAGES}
    assert len({spec.key for spec in PAGES}) == len(PAGES)
    for spec in PAGES:
        text = (ROOT / spec.path).read_text()
        assert f'frame(\n    "{spec.key}"' in text, f"{spec.path} must end with frame(its key)"


def test_no_page_of_the_shared_sentence_stops() -> None:
    """st.stop() in a page of the shared sentence, or in a part it draws, would drop what
    the frame writes after the page (the sentence box, the URL, the timing): such a page
    returns early instead (ui/frame.py)."""
    stopping = []
    for spec in PAGES:
        if spec.reads != "sentence":
            continue
        files = [ROOT / spec.path]
        files += [ROOT / (m.replace(".", "/") + ".py") for m in imported_modules(ROOT / spec.path)
                  if m.startswith("ui.parts.")]  # fmt: skip
        files += [ROOT / "ui" / "parts" / f"{name}.py" for name in ("compare",)
                  if "from ui.parts import compare" in (ROOT / spec.path).read_text()]  # fmt: skip
        stopping += [str(f.relative_to(ROOT)) for f in files if "st.stop(" in f.read_text()]
    assert not stopping


@pytest.mark.parametrize("path", sources("pages"), ids=lambda p: p.name)
def test_pages_are_thin(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_PAGE_LINES


def test_no_page_names_a_model() -> None:
    import model

    names = set(model.catalogue())
    for path in sources("pages"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in names, f"{path.name} names the model {node.value!r}"


def test_every_chart_goes_through_the_figure_cache() -> None:
    """No page draws with st.plotly_chart (it would load Streamlit's full Plotly bundle), and
    ui.workarounds.chart's element is mounted from ui/figures.py's chart() only (and
    ui/workarounds/chart.py itself)."""
    callers = []
    for folder in ("pages", "ui"):
        for path in sources(folder):
            text = path.read_text()
            if "st.plotly_chart(" in text or (
                "from ui.workarounds.chart import" in text
                and path.name not in ("figures.py", "preload.py")
            ):
                callers.append(str(path.relative_to(ROOT)))
    assert not callers


# --- no import circles -----------------------------------------------------------------------

PACKAGES = ("model", "ui", "analysis", "viz", "training", "lab", "deploy")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports anywhere in its file (a function's
    lazy import counts: it only hides a circle). `from a import b` names module a.b when
    there is one, else a."""
    paths = {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).glob("**/*.py"))}

    def owner(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                found |= {owner(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from its package
                    package = name.split(".")[: None if path.name == "__init__.py" else -1]
                    base = ".".join(package[: len(package) - node.level + 1] + [base] * bool(base))
                found |= {owner(f"{base}.{a.name}") if f"{base}.{a.name}" in paths else owner(base)
                          for a in node.names}  # fmt: skip
        graph[name] = {m for m in found if m and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_between_the_projects_modules() -> None:
    graph = import_graph()
    assert {"ui.frame", "model.contract", "training.data"} <= set(graph)
    assert "model.trace" in graph["model.contract"], "the graph sees imports"
    assert not circles(graph)


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_hugging_face_families_are_listed_once() -> None:
    """The adapter's families (model/families.py) are what the catalogue offers: no other
    module lists model types."""
    from model.families import FAMILIES

    assert {f.kind for f in FAMILIES.values()} == {"encoder", "decoder"}
    for path in sources("model"):
        if path.name != "families.py":
            assert '"distilbert"' not in path.read_text(), f"{path.name} lists families"


# --- commands ---------------------------------------------------------------------------------

COMMANDS = [
    ["-m", "training.data", "--help"],
    ["-m", "training.train", "--help"],
    ["-m", "training.evaluate", "--help"],
    ["-m", "training.translation", "--help"],
    ["-m", "training.vit", "--help"],
    ["-m", "training.toy", "--help"],
    ["-m", "training.default_trace", "--help"],
    ["-m", "training.interventions", "--help"],
    ["bench/bench_trace.py", "--help"],
    ["bench/bench_hf.py", "--help"],
    ["bench/bench_apptest.py", "--help"],
    ["bench/bench_hostile.py", "--help"],
    ["bench/bench_browser.py", "--help"],
    ["bench/bench_deploy.py", "--help"],
    ["bench/bench_elements.py", "--help"],
    ["bench/bench_toy.py", "--help"],
    ["bench/bench_interventions.py", "--help"],
    ["-m", "deploy.serve", "--help"],
    ["-m", "tests.e2e.screenshots", "--help"],
    ["-m", "i18n.catalogue", "--help"],
    ["-m", "classroom", "--help"],
    ["-m", "classroom", "open", "--help"],
    ["-m", "classroom", "results", "--help"],
    ["bench/bench_classroom.py", "--help"],
]


SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}
# What the other test workers write while a command runs (xdist): the data folder (the
# class database and its journal), the tests' artifacts, and lock files (the translation
# catalogue's, made by the first page a worker draws, which can appear during a --help).
SHARED_DIRS = {"runs", "artifacts"}


def snapshot() -> dict[str, float]:
    """Every file of the checkout (caches, the venv and what other test workers write
    aside) with its modification time (0 for logs, which a background job may be writing)."""
    files = {}
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS
                   and not (folder == str(ROOT) and d in SHARED_DIRS)]  # fmt: skip
        for name in names:
            if name.endswith(".lock"):
                continue
            path = os.path.join(folder, name)
            files[path] = 0.0 if name.endswith(".log") else os.stat(path).st_mtime
    return files


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:-1]))
def test_every_command_answers_help_without_side_effects(args: list[str]) -> None:
    before = snapshot()
    run = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "usage:" in run.stdout
    assert snapshot() == before


# --- Streamlit's internals: each test fails on an upgrade that moves one ------------------


PRIVATE_STREAMLIT = re.compile(r"\bstreamlit\.(runtime|web|proto)\b")
PINNED = {"ui/workarounds/__init__.py", "deploy/failover.py"}  # each pinned by a test here


def test_only_two_app_files_reach_into_streamlits_private_modules() -> None:
    """Streamlit's private modules (runtime, web, proto) are reached from two app files
    only, each with tests that fail on an upgrade (below, and tests/test_deploy_failover.py);
    everything else uses the public API."""
    app = [f for f in ROOT.rglob("*.py")
           if f.relative_to(ROOT).parts[0] not in {"tests", "bench", ".venv", "training"}
           and not any(part.startswith(".") for part in f.relative_to(ROOT).parts)]
    reaching = {f.relative_to(ROOT).as_posix() for f in app
                if PRIVATE_STREAMLIT.search(f.read_text(encoding="utf-8"))}  # fmt: skip
    assert reaching == PINNED


def test_streamlit_still_has_the_legacy_switch() -> None:
    """ui.workarounds.leave_legacy_mode clears PagesManager.uses_pages_directory so that a shared
    link to a page runs through app.py on a fresh server. If this fails after a Streamlit
    upgrade, the deep-link fix no longer applies: re-check the pitfall in
    docs/ARCHITECTURE.md ("Streamlit internals") and the e2e deep-link test."""
    from streamlit.runtime.pages_manager import PagesManager

    assert "uses_pages_directory" in vars(PagesManager), (
        "streamlit.runtime.pages_manager.PagesManager.uses_pages_directory is gone: "
        "ui/workarounds/__init__.py leave_legacy_mode() must be revisited"
    )
    assert isinstance(vars(PagesManager)["uses_pages_directory"], bool | None)


def test_streamlit_still_says_which_fragments_a_run_is_for() -> None:
    """ui.workarounds.fragment_run (a class's follower moves on its fragment's tick) and
    session_language (i18n's language in every run) read the script run context
    (`fragment_ids_this_run`, `session_state`; Streamlit has no public way): if this fails
    after an upgrade, followers would switch pages from inside a fragment again, or every
    page would be drawn in English."""
    import dataclasses
    import inspect

    from streamlit.runtime.scriptrunner_utils import script_run_context

    fields = {f.name for f in dataclasses.fields(script_run_context.ScriptRunContext)}
    assert {"fragment_ids_this_run", "session_state", "query_string"} <= fields
    assert "suppress_warning" in inspect.signature(script_run_context.get_script_run_ctx).parameters

    import i18n
    from ui import workarounds

    assert workarounds.fragment_run() is False and workarounds.session_language() is None
    assert workarounds.asked_query() == {}  # outside a run
    assert i18n._session_reader == [workarounds.session_language]


def test_apptest_still_scans_for_components_through_the_cached_scanner() -> None:
    """tests/conftest.py caches streamlit.components.v2.manifest_scanner's scan, which every
    new AppTest ran (0.16-0.27 s each). If this fails after a Streamlit upgrade, the suite is
    slower, not wrong: find where AppTest scans now, or drop the cache."""
    import inspect

    from streamlit.components.v2 import manifest_scanner
    from streamlit.components.v2.component_manager import BidiComponentManager
    from streamlit.testing.v1 import app_test

    assert hasattr(manifest_scanner.scan_component_manifests, "cache_info")
    assert "BidiComponentManager()" in inspect.getsource(app_test.AppTest._run)
    scan = inspect.getsource(BidiComponentManager.discover_and_register_components)
    assert "from streamlit.components.v2.manifest_scanner import" in scan
    assert "scan_component_manifests()" in scan


def test_streamlit_still_has_what_the_warm_up_reads() -> None:
    """ui/cache.py's warm_up starts only in a server (ui.workarounds.in_a_server:
    `streamlit.runtime.exists`, false under AppTest) and silences the "missing
    ScriptRunContext" warning of its thread through the logger of the module that writes it.
    If this fails after an upgrade, the warm-up may run under AppTest or fill the log: find
    where Streamlit moved them."""
    import importlib
    import inspect

    from ui.workarounds import CONTEXT_LOGGER, in_a_server

    assert in_a_server() is False  # no server in this test
    module = importlib.import_module(CONTEXT_LOGGER)
    assert "missing ScriptRunContext" in inspect.getsource(module)


def test_the_replica_serves_the_app_through_st_app() -> None:
    """deploy/replica.py serves app.py through Streamlit's public `st.App(...).run(config=)`
    (after the failover patch), its command line's options as Streamlit's config overrides."""
    import inspect

    import streamlit as st

    from deploy import replica

    assert {"config"} <= set(inspect.signature(st.App.run).parameters)
    assert replica.options(["--server.port", "8502", "--server.address=127.0.0.1"]) == {
        "server.port": "8502", "server.address": "127.0.0.1"}  # fmt: skip
    for bad in (["8502"], ["--server.port"]):
        with pytest.raises(SystemExit):
            replica.options(bad)
