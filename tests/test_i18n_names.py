"""`_` is the translation function (i18n): no module that calls `_()` may also bind `_` as a
throwaway name (`for _ in ...`, `a, _ = ...`, `lambda _: ...`, `except E as _`), which
shadows it in that scope and fails only when that line runs (TypeError: 'int' object is
not callable). Found by reading every source file's syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    p for d in ("ui", "pages", "viz", "lab", "model", "analysis", "i18n")
    for p in (ROOT / d).rglob("*.py")
) + [ROOT / "app.py"]  # fmt: skip


def _binds_underscore(node: ast.AST) -> list[int]:
    """Lines where `_` is bound inside `node` (names, arguments, imports as `_` excepted:
    `from i18n import _` is the binding we want)."""
    def bound(sub: ast.AST) -> bool:
        if isinstance(sub, ast.Name):
            return sub.id == "_" and isinstance(sub.ctx, ast.Store)
        if isinstance(sub, ast.arg):
            return sub.arg == "_"
        return isinstance(sub, ast.ExceptHandler) and sub.name == "_"

    lines = [sub.lineno for sub in ast.walk(node) if bound(sub)]
    return lines


def _calls_underscore(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_"
               for n in ast.walk(tree))  # fmt: skip


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_translation_function_is_never_shadowed(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not _calls_underscore(tree):
        return
    lines = _binds_underscore(tree)
    assert not lines, (f"{path.relative_to(ROOT)} calls _() and binds _ on lines {lines}: "
                       "name the throwaway value (e.g. `unused`) instead")  # fmt: skip
