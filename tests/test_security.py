"""Security checks that need no browser: checkpoints never run code, uploads are capped.

(User text rendered as text, not HTML, is checked in a real browser: tests/e2e.)
"""

from __future__ import annotations

import ast
import pickle
import shutil
import tomllib
from pathlib import Path

import pytest

import model
from model.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "assets" / "models"
PICKLE_SUFFIXES = {".pt", ".pth", ".bin", ".pkl", ".pickle", ".ckpt"}


class _Payload:
    """Unpickling this would create the marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _python_sources() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("model", "ui", "pages", "viz"):
        files += sorted((ROOT / folder).glob("**/*.py"))
    return [f for f in files if f.is_file()]


@pytest.mark.parametrize("name", model.shipped())
def test_shipped_checkpoints_hold_no_pickles(name: str) -> None:
    folder = SHIPPED / name
    names = {p.name for p in folder.iterdir()}
    assert "model.safetensors" in names and "config.json" in names
    assert not [p for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES]
    # safetensors files start with an 8-byte little-endian header length, then JSON.
    head = (folder / "model.safetensors").read_bytes()[:9]
    assert head[8:9] == b"{"


def test_loading_a_checkpoint_never_unpickles(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    folder = tmp_path / "ckpt"
    shutil.copytree(SHIPPED / "mlm", folder)
    for suffix in PICKLE_SUFFIXES:
        (folder / f"model{suffix}").write_bytes(pickle.dumps(_Payload(marker)))
    m = model.load(str(folder), device="cpu")
    assert m.trace("the cat sat").tokens
    assert not marker.exists()


def test_a_pickle_only_checkpoint_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "model.pt").write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(FileNotFoundError):
        load_checkpoint(folder)
    assert not marker.exists()


def test_a_pickle_disguised_as_safetensors_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    folder = tmp_path / "ckpt"
    shutil.copytree(SHIPPED / "mlm", folder)
    (folder / "model.safetensors").write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(Exception):  # noqa: B017 - any refusal will do, as long as no code ran
        load_checkpoint(folder)
    assert not marker.exists()


def test_no_source_unpickles_or_evaluates() -> None:
    """No torch.load / pickle / eval / exec in the app, the model or the viz code."""
    banned_calls = {"eval", "exec"}
    banned_attrs = {("torch", "load"), ("pickle", "load"), ("pickle", "loads")}
    found = []
    for path in _python_sources():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(m.split(".")[0] in {"pickle", "dill", "joblib", "marshal"} for m in mods):
                    found.append(f"{path.name}:{node.lineno} imports a pickle module")
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id in banned_calls:
                found.append(f"{path.name}:{node.lineno} calls {fn.id}")
            if (
                isinstance(fn, ast.Attribute)
                and isinstance(fn.value, ast.Name)
                and (fn.value.id, fn.attr) in banned_attrs
            ):
                found.append(f"{path.name}:{node.lineno} calls {fn.value.id}.{fn.attr}")
    assert not found, found


def test_streamlit_caps_uploads_at_one_megabyte() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == 1
    assert config["server"]["fileWatcherType"] == "none"
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"]["headless"] is True
