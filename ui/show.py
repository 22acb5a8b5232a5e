"""Small widgets and display helpers the pages share: downloads, labels, pickers."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

import analysis
import viz
from i18n import N_, _
from model import Trace
from model.tokenizer import SPACE_MARK, Encoded

ZOOM_FROM = 40  # offer a position window for matrices longer than this
RADIO_MAX = 13  # layer/head pickers with more choices than this are a slider or a menu


def when_open(label: str, key: str, icon: str, draw: Callable[[], None]) -> None:
    """An expander whose content (`draw()`) is computed and sent only while it is open:
    opening or closing it reruns the script (`on_change="rerun"`), and a closed one holds
    nothing. For a page's secondary parts, so a new input costs only what is shown."""
    box = st.expander(label, key=key, on_change="rerun", icon=icon)
    if box.open:
        with box:
            draw()


NUMBERS = N_("Numbers to download")


def numbers(page: str, draw: Callable[[], None]) -> None:
    """`page`'s downloads (its numbers as CSV or JSON) in an expander at the page's foot,
    `draw()` run only while it is open (`when_open`): a new input sends one folded line,
    not a heading and a row of buttons."""
    when_open(_(NUMBERS), f"{page}_numbers_open", ":material/download:", draw)


def section_key(page: str) -> str:
    """The key of `page`'s section picker, and its query parameter: its value is the open
    section's id (a key of `lazy_sections`' parts, never its words)."""
    return f"{page}_section"


Section = tuple[str, Callable[[], None]]  # a tab's label (an N_() or _() message), its draw
_DRAWN: dict[str, tuple[str, ...]] = {}  # page -> the ids of the tabs it drew last (tests)


def section_ids(page: str) -> tuple[str, ...]:
    """The ids of the section tabs `page` drew last in this process, in order: what a test
    or a benchmark writes into `section_key(page)` to open one (each page draws the same)."""
    return _DRAWN.get(page, ())


SECTIONS = N_("The page's sections")  # the section picker's label (read aloud, not shown)


def lazy_sections(page: str, parts: dict[str, Section]) -> None:
    """`page`'s sections, `parts` keyed by each one's id: (its label, its draw), picked in a
    row of buttons above them (a segmented control, one element: tabs were one a tab and
    one for the bar, each sent again by every new input). Only the open section is computed
    and sent (a switch reruns): a new input costs only what is on screen. The open one is
    its id, bound to the URL (`?<page>_section=`, shown as its label)."""
    ids = list(parts)
    _DRAWN[page] = tuple(ids)
    picked = st.segmented_control(
        _(SECTIONS), ids, default=ids[0], key=section_key(page), required=True,
        format_func=lambda i: _(parts[i][0]), label_visibility="collapsed",
        bind="query-params", persist_state="session",
    )  # fmt: skip
    parts[picked if picked in parts else ids[0]][1]()


def keep_state(*keys: str, **defaults: object) -> None:
    """Keep widget values while their widget is not drawn (it sits in a closed tab):
    Streamlit forgets a widget's value after a run that does not draw it. `keys` are kept
    when they have a value; `defaults` also start at theirs, and their widgets then take the
    value from the state alone (no `index` or `value` argument)."""
    ss = st.session_state
    for key in keys:
        if key in ss:
            ss[key] = ss[key]
    for key, default in defaults.items():
        ss[key] = ss.get(key, default)


_BYTE = re.compile(r"<0x[0-9A-F]{2}>")  # a byte, as model.tokenizer shows one


def token_note(shown: str, raw: str, fragment: str) -> str:
    """What a token's hover adds to it: the character a byte belongs to, and the
    tokenizer's own string where it differs ("part of 나 · tokenizer: ë")."""
    parts = [_("part of {character}", character=fragment)] if fragment else []
    if raw != shown:
        parts.append(_("tokenizer: {raw}", raw=raw))
    return " · ".join(parts)


def labelled_tokens(tokens: list, raw: list[str], fragment_of: list[str]) -> list:
    """Each token that has more to say as a `viz.TokenLabel`, whose note every hover shows
    (`token_note`); tokens with nothing to add stay plain strings."""
    notes = [token_note(*n) for n in zip(tokens, raw, fragment_of, strict=True)]
    if not any(notes):
        return tokens
    return [viz.TokenLabel(tok, note) if note else tok
            for tok, note in zip(tokens, notes, strict=True)]  # fmt: skip


def labelled(t: Trace) -> Trace:
    """The trace with its tokens labelled (`labelled_tokens`), its encoder's too."""
    encoder = labelled(t.encoder) if t.encoder is not None else None
    tokens = labelled_tokens(t.tokens, t.raw_tokens, t.fragment_of)
    if tokens is t.tokens:
        return t if encoder is t.encoder else dataclasses.replace(t, encoder=encoder)
    return dataclasses.replace(t, tokens=tokens, encoder=encoder)


def raw_column(t: Trace) -> list[str] | None:
    """The tokenizer's own strings, for a download's "raw token" column; None where they
    are the tokens as shown (the shipped models)."""
    return None if list(map(str, t.tokens)) == t.raw_tokens else t.raw_tokens


def tokens_caption(t: Trace | Encoded) -> str:
    """What the token chips need said: the hover, the model's own start and end tokens, and
    the marks its tokens carry (a continuation, a space, a byte), each only where shown."""
    tokens = [str(tok) for tok in t.tokens]
    said = [_("Hover a chip for its position and id, and the tokenizer's own string.")
            if tokens != t.raw_tokens else _("Hover a chip for its position and id.")]
    start = analysis.is_special(tokens[0])
    end = len(tokens) > 1 and analysis.is_special(tokens[-1])
    if start and end:
        said.append(_("`{first}` and `{last}` mark the start and the end.", first=tokens[0],
                      last=tokens[-1]))
    elif start:
        said.append(_("`{token}` marks the start.", token=tokens[0]))
    elif end:
        said.append(_("`{token}` marks the end.", token=tokens[-1]))
    if any(tok.startswith("##") for tok in tokens):
        said.append(_("`##` marks a piece that continues the word before it."))
    if any(SPACE_MARK in tok for tok in tokens):
        said.append(_("`{mark}` marks a space: `{mark}word` is a word after a space, a token "
                      "without it joins the one before.", mark=SPACE_MARK))
    if any(_BYTE.search(tok) for tok in tokens):
        said.append(_("`<0xNN>` is one byte, as a number: of a character the tokenizer cut "
                      "into pieces, or of an invisible one."))
    if any(t.fragment_of):
        said.append(_("Hover a piece of a character for the whole character."))
    return " ".join(said)  # fmt: skip


def token_labels(tokens: Sequence[str]) -> list[str]:
    """ "3 · bank": position and token, so repeated tokens stay apart in menus."""
    return [f"{i} · {tok}" for i, tok in enumerate(tokens)]


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$])")


def md_escape(text: str) -> str:
    """User text made inert in Streamlit markdown (no emphasis, links, HTML or maths)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def download_csv(
    label: str,
    values: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None,
    key: str,
    filename: str,
    raw: Sequence[str] | None = None,
) -> None:
    """A CSV download of a labelled matrix, written only when the button is clicked; `raw`
    (`raw_column`): a column of each row's token as the tokenizer writes it."""
    rows, cols = list(row_labels), None if col_labels is None else list(col_labels)
    st.download_button(
        label,
        lambda: viz.matrix_to_csv(values, rows, cols, raw),
        file_name=filename,
        mime="text/csv",
        key=key,
        icon=":material/download:",
        on_click="ignore",
    )


def _jsonable(value: object) -> object:
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if np.isfinite(v) else ("-inf" if v < 0 else "inf" if v > 0 else "nan")
    if isinstance(value, np.integer):
        return int(value)
    return value


def download_json(label: str, data: dict, key: str, filename: str) -> None:
    """A JSON download (numpy arrays as lists, ±inf as strings), written only on click."""
    st.download_button(
        label,
        lambda: json.dumps(_jsonable(data), ensure_ascii=False),
        file_name=filename,
        mime="application/json",
        key=key,
        icon=":material/data_object:",
        on_click="ignore",
    )


def window_picker(n: int, key: str, label: str | None = None) -> tuple[int, int] | None:
    """For long sentences, a range slider picking the positions to show (None: show all);
    `label` in the session's language (default: "Zoom to positions").

    The figures hold only the window's data: a 256-token sentence sends a 32-token figure."""
    if n <= ZOOM_FROM:
        return None
    start, end = st.slider(
        label or _("Zoom to positions"),
        0,
        n - 1,
        (0, min(n - 1, 31)),
        key=key,
        help=_("Long sentences: show a window of positions so that the labels stay readable "
               "and the page stays fast; choose the whole range to see every position."),
    )  # fmt: skip
    return (start, end) if (start, end) != (0, n - 1) else None


def number(i: int) -> str:
    """A 0-based layer or head as the lecture counts it, 1-based ("2"): its picker's option,
    kept in the URL as it shows it, in any language."""
    return str(i + 1)


def head_number(h: int | str) -> str:
    """A head picker's option: "average", or the head's number."""
    return _("average") if h == "average" else number(h)


def layer_label(i: int) -> str:
    return _("layer {n}", n=i + 1)


def head_label(h: int | str) -> str:
    return _("average") if h == "average" else _("head {n}", n=h + 1)


def layer_head(prefix: str, n_layers: int, n_heads: int, layer: int = 0, average: bool = True):
    """Layer and head pickers (radios, keys <prefix>_layer / <prefix>_head); the head may be
    "average". Returns (layer, head, a label such as "layer 2, head 3")."""
    # One row (a horizontal container: one element, where two columns are three)
    c1 = c2 = st.container(horizontal=True, gap="large")
    # Radios up to RADIO_MAX choices; a slider beyond (a real model's 30 layers)
    chosen = (
        c1.radio(_("Layer"), range(n_layers), index=layer, key=f"{prefix}_layer",
                 horizontal=True, format_func=number, bind="query-params")
        if n_layers <= RADIO_MAX
        else c1.select_slider(_("Layer"), list(range(n_layers)), value=layer,
                              key=f"{prefix}_layer", format_func=number,
                              bind="query-params")
    )  # fmt: skip
    heads = ["average", *range(n_heads)] if average else list(range(n_heads))
    head = (
        c2.radio(_("Head"), heads, key=f"{prefix}_head", horizontal=True,
                 format_func=head_number, bind="query-params")
        if len(heads) <= RADIO_MAX
        else c2.selectbox(_("Head"), heads, key=f"{prefix}_head", format_func=head_number,
                          bind="query-params")
    )  # fmt: skip
    if head == "average":
        return chosen, head, _("layer {layer}, average of the heads", layer=chosen + 1)
    return chosen, head, _("layer {layer}, head {head}", layer=chosen + 1, head=head + 1)
