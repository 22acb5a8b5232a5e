"""`_` is the translation function (i18n): no scope that calls `_()` may also bind `_` as a
throwaway name (`for _ in ...`, `a, _ = ...`, `lambda _: ...`, `except E as _`), which
shadows it there and fails only when that line runs (TypeError: 'int' object is not
callable). Found by reading every source file's syntax tree, scope by scope."""


from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    p for d in ("ui", "pages", "viz", "lab", "model", "analysis", "i18n")
    for p in (ROOT / d).rglob("*.py")
) + [ROOT / "app.py"]  # fmt: skip


SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp,
          ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_nodes(scope: ast.AST):
    """The nodes of `scope` outside its nested scopes (a nested scope's own arguments and
    loop targets belong to it; the nested scope node itself is yielded)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _binds(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "_" and isinstance(node.ctx, ast.Store)
    if isinstance(node, ast.arg):
        return node.arg == "_"
    return isinstance(node, ast.ExceptHandler) and node.name == "_"


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_"
               for n in ast.walk(node))  # fmt: skip


def shadowed(tree: ast.AST) -> list[int]:
    """Lines where a scope binds `_` (a comprehension's loop variable, an argument, an
    assignment, `except ... as _`) while `_()` is called in that scope or below it."""
    found = []
    for scope in ast.walk(tree):
        if not isinstance(scope, SCOPES):
            continue
        own = list(_own_nodes(scope))
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            own += list(ast.walk(scope.args))
        elif not isinstance(scope, ast.Module):  # a comprehension binds its loop targets
            own += [n for gen in scope.generators for n in ast.walk(gen.target)]
        lines = [n.lineno for n in own if _binds(n)]
        if lines and _calls(scope):
            found += lines
    return sorted(set(found))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_translation_function_is_never_shadowed(path: Path) -> None:
    lines = shadowed(ast.parse(path.read_text(encoding="utf-8")))
    assert not lines, (f"{path.relative_to(ROOT)} calls _() and binds _ on lines {lines}: "
                       "name the throwaway value (e.g. `unused`) instead")  # fmt: skip


def test_a_shadowing_binding_is_found() -> None:
    loop = "def f(xs):\n    for _ in xs:\n        pass\n    return _('a')\n"
    assert shadowed(ast.parse(loop)) == [2]
    assert shadowed(ast.parse("def f(xs):\n    return [t for t, _ in xs], _('a')\n")) == []
    assert shadowed(ast.parse("f = lambda _: _('a')\n")) == [1]
    assert shadowed(ast.parse("a, _ = 1, 2\ndef g():\n    return _('a')\n")) == [1]
