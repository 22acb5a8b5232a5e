"""A student's file, read for `python -m lab check FILE`: a .py module or a notebook.

A .py file is imported as a module. A notebook's code cells run in order in one
namespace, as in a kernel, except the check cells (tagged "check", or calling
lab.check): the command checks the functions itself. IPython's magics and shell lines
(%, !) are skipped. A cell that raises is noted and the next one runs. This runs the
student's own code on their own machine: a command-line tool, never the web server.
"""

from __future__ import annotations

import importlib.util
import json
import linecache
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from i18n import _

CHECK_TAG = "check"


@dataclass
class Student:
    """What a file defined, and the errors met while running it."""

    path: Path
    names: dict[str, Any]
    errors: list[str] = field(default_factory=list)  # "cell 4: NameError: ..."


def _error(where: str, error: BaseException) -> str:
    frame = traceback.extract_tb(error.__traceback__)[-1:]
    kind = type(error).__name__
    if frame:
        return _("{where} (line {line}): {error}: {text}", where=where, line=frame[0].lineno,
                 error=kind, text=error)  # fmt: skip
    return f"{where}: {kind}: {error}"


def load(path: str | Path) -> Student:
    """Run a student's .py or .ipynb file and keep what it defined."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(_("no file {path}", path=path))
    if path.suffix == ".ipynb":
        return _notebook(path)
    if path.suffix == ".py":
        return _module(path)
    raise ValueError(_("{path}: expected a .py or an .ipynb file", path=path))


def _module(path: Path) -> Student:
    spec = importlib.util.spec_from_file_location(f"lab_student_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # its own imports, as `python FILE`
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        return Student(path, vars(module), [_error(str(path), error)])
    finally:
        sys.path.remove(str(path.resolve().parent))
    return Student(path, vars(module))


def code_cells(path: Path) -> list[tuple[int, str]]:
    """(cell number from 1, source) of each code cell the command runs."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    out = []
    for n, cell in enumerate(cells, start=1):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") != "code" or CHECK_TAG in tags or "lab.check(" in source:
            continue
        magic = ("%", "!")
        lines = ["" if ln.lstrip().startswith(magic) else ln for ln in source.split("\n")]
        out.append((n, "\n".join(lines)))
    return out


def _notebook(path: Path) -> Student:
    names: dict[str, Any] = {"__name__": "__lab_student__"}
    errors = []
    for n, source in code_cells(path):
        filename = f"<{path.name}, cell {n}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            exec(compile(source, filename, "exec"), names)  # the student's own code
        except Exception as error:
            errors.append(_error(_("cell {n}", n=n), error))
    return Student(path, names, errors)
