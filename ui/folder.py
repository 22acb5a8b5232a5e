"""The sidebar's "load a model folder" box: off unless models.toml says
`allow_any_folder = true` (a shared server must not let a visitor read any path)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import model
from model.registry import settings
from ui.show import md_escape


def _on_folder() -> None:
    ss = st.session_state
    text = (ss.get("w_folder") or "").strip()
    ss.pop("folder_error", None)
    if not text:
        return
    folder = Path(text).expanduser()
    try:
        info = model.register(folder.stem if folder.suffix == ".gguf" else folder.name, folder)
    except (ValueError, OSError) as err:
        ss["folder_error"] = str(err)
        return
    ss["model"] = info.name


def folder_box() -> None:
    """A text box for a model folder (ours, a transformers folder or a .gguf file), shown
    only when the teacher's models.toml allows it."""
    if not settings().allow_any_folder:
        return
    st.text_input(
        "Model folder",
        key="w_folder",
        on_change=_on_folder,
        placeholder="/path/to/a/model/folder",
        help="A checkpoint folder of this app, a Hugging Face transformers folder "
        "(safetensors) or a .gguf file; models.toml allows this on this server.",
    )
    if st.session_state.get("folder_error"):
        st.error(md_escape(st.session_state["folder_error"]), icon="⚠️")
