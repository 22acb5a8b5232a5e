"""What the frame hands a page: `Opened` (its sidebar drawn, its model chosen) for a page
with its own input, `View` (the shared sentence traced) for a page of the shared sentence."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from i18n import _, ngettext
from model import CLEAN, Model, RunOptions, Trace
from ui import cache
from ui.registry import PageSpec
from ui.sidebar import Slot


@dataclass
class Opened:
    """A page whose frame is drawn and whose model is loaded (see `open_page`)."""

    page: PageSpec
    model_name: str  # the model this page runs
    device: str  # where it runs
    timing: Slot | None  # the sidebar's place for the timing (None: folded, not drawn)
    inputs: Slot | None = None  # the sidebar's place for the sentence box, if any
    loaded: bool = True  # False: opened with load=False, the device not yet chosen

    @property
    def model(self) -> Model:
        """The model, loaded on first use (shared by every session, ui.cache.load_model)."""
        return cache.load_model(self.model_name, self.device)

    def show_timing(self, seconds: float, detail: str) -> None:
        """The forward pass's wall time and what ran, in the sidebar (where it is open)."""
        if self.timing is None:
            return
        with self.timing:
            st.metric(
                _("Forward pass"),
                f"{seconds * 1000:.1f} ms",
                help=_("Wall time of this input's forward pass, measured when it first ran."),
            )
            st.caption(_("on **{device}** · {model} · {detail}", device=self.device,
                         model=self.model_name, detail=detail))  # fmt: skip


@dataclass
class View:
    """What a page needs after the frame: the sentence, the model and its trace."""

    page: PageSpec
    sentence: str
    model_name: str  # the model this page runs
    device: str  # where it actually ran
    trace: Trace
    notes: tuple[str, ...] = ()  # what a person should know about this trace (rotary, ...)
    options: RunOptions = CLEAN  # how the trace was run (heads knocked out, a patch)

    @property
    def model(self) -> Model:
        """The model, loaded on first use (shared by every session, ui.cache.load_model)."""
        return cache.load_model(self.model_name, self.device)

    @property
    def key(self) -> tuple[str, str, str, RunOptions]:
        """What the trace depends on, for caches of what is drawn from it: an experiment's
        view (`with_options`) never shares a chart with the clean run's."""
        return (self.sentence, self.model_name, self.device, self.options)

    def with_options(self, options: RunOptions) -> View:
        """The same sentence run under `options`: its own trace and its own key."""
        trace = cache.get_trace(self.sentence, self.model_name, self.device, options)
        return replace(self, trace=trace, options=options)


def layers_detail(t: Trace) -> str:
    """What ran, for the sidebar's timing: "12 tokens · 2 layers × 4 heads", or for a
    translation "5 → 7 tokens"."""
    if t.encoder is not None:
        return ngettext("{source} → {n} token", "{source} → {n} tokens", len(t.tokens),
                        source=len(t.encoder.tokens))  # fmt: skip
    return _("{n} tokens · {layers} layers × {heads} heads", n=len(t.tokens),
             layers=t.n_layers, heads=t.n_heads)  # fmt: skip
