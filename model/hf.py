"""Real pretrained models from Hugging Face `transformers`, through the same contract and
Trace as the from-scratch ones.

    m = model.load("/srv/models/bert-base-uncased")     # a folder with config.json
    m.trace("The cat sat on the mat.")                   # the same Trace as ours
    m.fill_mask("I [MASK] across the river.")            # BERT, DistilBERT, RoBERTa heads
    m.next_token("Once upon a")                          # GPT-2, Llama (SmolLM2)

How a trace is read: the model runs once with `output_attentions=True` (eager attention, so
the weights are the ones it really used) and forward hooks, installed once at load time,
record what the layers compute: the residual stream around each sublayer, X (what Q, K, V
come from), the Q/K/V projections, each head's output before W_O, what attention and the
MLP add, and the MLP's hidden neurons (mlp_post: the input of its output projection). The
hooks write into a recorder that only the thread tracing sees (a shared model serves every
session), so a plain call records nothing. The scores are the model's own:
eager attention has no module to hook between Q Kᵀ / √Dh and its softmax, so during the
traced pass a torch function mode (thread-local, like the recorder) keeps what each
softmax is given; -inf replaces the model's large negative mask value. Below
KEEP_SCORES_FROM tokens (where the mode's cost per op outweighs the product), or were there
not one softmax per layer, the scores are recomputed from the hooked Q and K instead. For rotary
models (Llama) the Q and K shown are *after* the rotation, recomputed from the hooked
projections and the model's own cos/sin, because that is what the scores come from. The
tests check softmax(scores + mask) against the model's attention and Q Kᵀ / √Dh against
the scores.

Experiments (model/options.py) use the same hooks, through a second thread-local value, the
pass's `Edits`: a pre-hook on W_O replaces a knocked-out head's slice of its input (the
heads side by side) by 0 or by its mean over the positions, before W_O mixes them; a hook
on the MLP's output replaces a knocked-out MLP's (by 0, or its mean), and a pre-hook on its
output projection a knocked-out neuron's hidden activation (mlp_post); hooks on a layer's
input, on W_O's output and on the MLP's output write a patch in. The logit
lens reads each layer's stream through the model's own final norm and output head.

Loading is local and safe: `local_files_only=True`, HF_HUB_OFFLINE=1, `trust_remote_code=False`,
`attn_implementation="eager"`, and weights from safetensors only (a pickled
`pytorch_model.bin` can run code when it is read, so such a folder is refused). A GGUF file
(llama.cpp's format, a plain header plus tensors: not pickle) is read through transformers'
own `gguf_file=` support, which dequantizes it to float32.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

from i18n import N_
from model.contract import ATTRIBUTIONS, Attribution, Candidates, Model, Note, Sampling
from model.families import FAMILIES
from model.interventions import chunks, edits_of, gradient_x_input, integrated_gradients
from model.lm import UNFILTERED, filter_logits
from model.options import CLEAN, RunOptions, check_heads, check_patch
from model.registry import check_weights, read_info
from model.text import Encoded, encoded, timed, to_numpy
from model.tokenizer import Shown, reading_of, show, show_token
from model.trace import LayerTrace, Trace
from model.transformer import Edits, knock_out, knock_out_mlp, knock_out_neurons

MAX_TOKENS = 512  # the most tokens one trace reads, whatever the model's context
# From this many tokens on, a trace keeps the model's own scores (a torch function mode,
# which costs a little on every op); below it, recomputing Q K^T from the hooks is cheaper.
KEEP_SCORES_FROM = 128
MASK = "[MASK]"  # how the app writes the mask token, whatever the tokenizer calls it




# --- recording ------------------------------------------------------------------------------


@dataclass
class Recorder:
    """What the hooks saw during one traced forward pass (batch of one)."""

    embed: Tensor | None = None
    pos: Tensor | None = None
    rotary: tuple[Tensor, Tensor] | None = None
    layers: list[dict[str, Tensor]] = field(default_factory=list)
    scores: list[Tensor] = field(default_factory=list)  # each softmax's input, in order


SOFTMAX = (F.softmax, torch.softmax, Tensor.softmax)


class _KeepScores(TorchFunctionMode):
    """While active (in this thread only), keeps the input of every softmax: in eager
    attention, the scaled and masked scores as the model computed them."""

    def __init__(self, found: list[Tensor]) -> None:
        super().__init__()
        self.found = found

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        if func in SOFTMAX:
            self.found.append(args[0])
        return func(*args, **(kwargs or {}))


_local = threading.local()  # .recorder, .edits: the current thread's pass's, or None


def _recorder() -> Recorder | None:
    return getattr(_local, "recorder", None)


def _edits() -> Edits | None:
    return getattr(_local, "edits", None)


@contextmanager
def _running(edits: Edits | None, recorder: Recorder | None = None) -> Iterator[None]:
    """During the block, this thread's passes apply `edits` and record into `recorder`."""
    _local.edits, _local.recorder = edits, recorder
    try:
        yield
    finally:
        _local.edits = _local.recorder = None


def _knock(i: int, n_heads: int) -> Any:
    """A pre-hook on layer i's W_O: the knocked-out heads' slices of its input (the heads'
    z side by side, (B, T, H * Dh)) replaced by 0 or by their mean over the positions."""

    def hook(module: nn.Module, args: tuple, kwargs: dict) -> Any:
        edits = _edits()
        if edits is None or i not in edits.knocked:
            return None
        x = args[0]
        b, t, _ = x.shape
        z = x.reshape(b, t, n_heads, -1).transpose(1, 2)  # (B, H, T, Dh)
        z = knock_out(z, edits.knocked[i], edits.mean)
        return (z.transpose(1, 2).reshape(b, t, -1), *args[1:]), kwargs

    return hook


def _knock_mlp(i: int) -> Any:
    """A forward hook on layer i's MLP: its output (mlp_out) replaced by 0 or by its mean over
    the positions in the rows that knock it out."""

    def hook(module: nn.Module, args: tuple, out: Any) -> Any:
        edits = _edits()
        if edits is None or i not in edits.knocked_mlp:
            return None
        rows = edits.knocked_mlp[i]
        if isinstance(out, tuple):
            return (knock_out_mlp(out[0], rows, edits.mean), *out[1:])
        return knock_out_mlp(out, rows, edits.mean)

    return hook


def _knock_neurons(i: int) -> Any:
    """A pre-hook on layer i's MLP output projection (Llama: down_proj): the knocked-out
    hidden neurons of its input (mlp_post, (B, T, M)) replaced by 0 or by their mean over
    the positions."""

    def hook(module: nn.Module, args: tuple, kwargs: dict) -> Any:
        edits = _edits()
        if edits is None or i not in edits.knocked_neurons:
            return None
        x = knock_out_neurons(args[0], edits.knocked_neurons[i], edits.mean)
        return (x, *args[1:]), kwargs

    return hook


def _patch_input(i: int) -> Any:
    """A pre-hook on layer i: the patch of its resid_pre, if any, written in."""

    def hook(module: nn.Module, args: tuple, kwargs: dict) -> Any:
        edits = _edits()
        if edits is None or ("resid_pre", i) not in edits.patches:
            return None
        if args:
            return (edits.patched("resid_pre", i, args[0]), *args[1:]), kwargs
        x = edits.patched("resid_pre", i, kwargs["hidden_states"])
        return args, {**kwargs, "hidden_states": x}

    return hook


def _patch_output(i: int, site: str) -> Any:
    """A forward hook: the patch of layer i's `site` (attn_out, mlp_out), if any, written in."""

    def hook(module: nn.Module, args: tuple, out: Any) -> Any:
        edits = _edits()
        if edits is None or (site, i) not in edits.patches:
            return None
        if isinstance(out, tuple):
            return (edits.patched(site, i, out[0]), *out[1:])
        return edits.patched(site, i, out)

    return hook


def _first(out: Any) -> Tensor:
    return out[0] if isinstance(out, tuple | list) else out


def _record(i: int, what: str) -> Any:
    """A forward hook that keeps the module's output as layer i's `what`."""

    def hook(module: nn.Module, args: tuple, out: Any) -> None:
        rec = _recorder()
        if rec is not None:
            rec.layers[i][what] = _first(out)

    return hook


def _record_input(i: int, what: str) -> Any:
    """A forward pre-hook that keeps the module's first input (hidden_states) as `what`."""

    def hook(module: nn.Module, args: tuple, kwargs: dict) -> None:
        rec = _recorder()
        if rec is not None:
            rec.layers[i][what] = args[0] if args else kwargs["hidden_states"]

    return hook


def _embed_hook(module: nn.Module, args: tuple, out: Tensor) -> None:
    rec = _recorder()
    if rec is not None:
        rec.embed = out


def _positions_off() -> bool:
    edits = _edits()
    return edits is not None and not edits.positions


def _pos_hook(module: nn.Module, args: tuple, out: Tensor) -> Tensor | None:
    if _positions_off():
        out = torch.zeros_like(out)
    rec = _recorder()
    if rec is not None:
        rec.pos = out
    return out


def _rotary_hook(module: nn.Module, args: tuple, out: tuple[Tensor, Tensor]) -> Any:
    if _positions_off():  # no rotation: cos 1, sin 0
        out = (torch.ones_like(out[0]), torch.zeros_like(out[1]))
    rec = _recorder()
    if rec is not None:
        rec.rotary = out
    return out


def _rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotary position embedding of x [H, T, Dh] with cos, sin [T, Dh] (the half-split
    convention transformers' Llama uses)."""
    half = x.shape[-1] // 2
    turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + turned * sin


def _get(root: nn.Module, path: str) -> nn.Module:
    return root.get_submodule(path) if path else root


# --- loading --------------------------------------------------------------------------------


def load_pretrained(path: Path, head: str, device: str) -> tuple[nn.Module, Any]:
    """The transformers model (head "mlm", "lm" or "" for none) and its fast tokenizer, from
    a folder (safetensors) or a .gguf file, local files only."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is first imported: no Hub
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    common: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}
    if path.suffix == ".gguf":
        folder, extra = path.parent, {"gguf_file": path.name}
    else:
        check_weights(path)
        folder, extra = path, {"use_safetensors": True}
    auto = {
        "mlm": transformers.AutoModelForMaskedLM,
        "lm": transformers.AutoModelForCausalLM,
    }.get(head, transformers.AutoModel)
    module = auto.from_pretrained(
        folder, attn_implementation="eager", dtype=torch.float32, **common, **extra
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        folder, **common, **({"gguf_file": path.name} if "gguf_file" in extra else {})
    )
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{path}: the app needs a fast tokenizer (a tokenizer.json)")
    return module.to(device).eval(), tokenizer


# --- the model ------------------------------------------------------------------------------


class HFModel(Model):
    """A Hugging Face transformers model behind the app's contract (see the module doc)."""

    def __init__(
        self, module: nn.Module, tokenizer: Any, kind: str, capabilities: frozenset[str],
        name: str, device: str, source: str = "",
    ) -> None:  # fmt: skip
        self.module, self.tokenizer, self.kind, self.name = module, tokenizer, kind, name
        self.device, self._capabilities = str(device), capabilities
        cfg = module.config
        self.model_type = cfg.model_type
        if self.model_type not in FAMILIES:
            raise ValueError(
                f"{name}: model_type {self.model_type!r} is not supported by the adapter "
                f"(supported: {', '.join(FAMILIES)})"
            )
        self.family = FAMILIES[self.model_type]
        self.base = module.base_model
        self.stack = _get(self.base, self.family.layers)
        self.n_heads = int(getattr(cfg, "num_attention_heads", 0) or cfg.n_heads)
        width = int(getattr(cfg, "hidden_size", 0) or cfg.dim)
        self.d_head = int(getattr(cfg, "head_dim", 0) or width // self.n_heads)
        self.n_kv_heads = int(getattr(cfg, "num_key_value_heads", 0) or self.n_heads)
        limit = int(getattr(cfg, "max_position_embeddings", 0) or MAX_TOKENS)
        if self.model_type in ("roberta", "xlm-roberta"):  # positions start after padding
            limit -= int(cfg.pad_token_id or 0) + 1
        self.max_len = min(MAX_TOKENS, limit)
        self.positional = "rotary" if self.family.rotary else "learned"
        down = _get(self.stack[0], self.family.mlp_down)  # GPT-2's Conv1D: weight [M, D]
        self.d_mlp = int(down.weight.shape[0 if type(down).__name__ == "Conv1D" else 1])
        self.n_vocab = self._vocab_size()
        self.notes = self._notes(source)
        self._mask_id = tokenizer.mask_token_id if self.can("fill_mask") else None
        self._specials = sorted(set(tokenizer.all_special_ids))
        self.reading = reading_of(tokenizer, [*tokenizer.all_special_tokens, MASK])
        self._install_hooks()

    @classmethod
    def from_folder(cls, folder: str | Path, name: str, device: str) -> HFModel:
        """A transformers folder (config.json with model_type) or a .gguf file."""
        info = read_info(folder, name)
        caps = info.capabilities
        head = "mlm" if "fill_mask" in caps else "lm" if "next_token" in caps else ""
        module, tokenizer = load_pretrained(Path(folder), head, device)
        gguf = Path(folder).suffix == ".gguf"
        source = Note(N_("GGUF, dequantized to float32")) if gguf else ""
        return cls(module, tokenizer, info.kind, caps, name, device, source)

    @property
    def capabilities(self) -> frozenset[str]:
        return self._capabilities

    def _vocab_size(self) -> int:
        head = self.module.get_output_embeddings()
        table = head if head is not None else self.module.get_input_embeddings()
        return int(table.weight.shape[0])

    def _notes(self, source: str) -> tuple[str, ...]:
        """What a person should know about this model's trace, as Notes (shown translated)."""
        notes = [
            Note(N_("A Hugging Face transformers model ({type}, {source}), traced through "
                    "forward hooks."), type=self.model_type, source=source)
            if source
            else Note(N_("A Hugging Face transformers model ({type}), traced through forward "
                         "hooks."), type=self.model_type)
        ]  # fmt: skip
        if self.family.rotary:
            notes.append(Note(N_(
                "Rotary positions: nothing is added to the embeddings (the positional vectors "
                "are zeros); positions rotate Q and K inside every attention layer. The Q and "
                "K shown are after the rotation, the ones the scores are computed from; the "
                "step-by-step view recomputes them without it, so it differs."
            )))
        if self.n_kv_heads != self.n_heads:
            notes.append(Note(
                N_("Grouped-query attention: {kv} key/value heads shared by {heads} query heads; "
                   "K and V are shown repeated per query head."),
                kv=self.n_kv_heads, heads=self.n_heads,
            ))  # fmt: skip
        if self.model_type in ("bert", "roberta", "xlm-roberta"):
            notes.append(Note(N_(
                "BERT-style embeddings also add a segment (token type) vector and a "
                "LayerNorm before layer 1: the input to layer 1 is not just token + position."
            )))
        return tuple(notes)

    def _install_hooks(self) -> None:
        """Hooks that record into the tracing thread's Recorder (and do nothing otherwise)."""
        fam = self.family
        _get(self.base, fam.embed).register_forward_hook(_embed_hook)
        if fam.pos:
            _get(self.base, fam.pos).register_forward_hook(_pos_hook)
        if fam.rotary:
            _get(self.base, fam.rotary).register_forward_hook(_rotary_hook)
        for i, layer in enumerate(self.stack):  # edits first, then the records see them
            layer.register_forward_pre_hook(_patch_input(i), with_kwargs=True)
            layer.register_forward_pre_hook(_record_input(i, "resid_pre"), with_kwargs=True)
            layer.register_forward_hook(_record(i, "resid_post"))
            if fam.fused:
                _get(layer, fam.q).register_forward_hook(_record(i, "qkv"))
            else:
                for what in ("q", "k", "v"):
                    _get(layer, getattr(fam, what)).register_forward_hook(_record(i, what))
            out = _get(layer, fam.out)
            out.register_forward_pre_hook(_knock(i, self.n_heads), with_kwargs=True)
            out.register_forward_pre_hook(_record_input(i, "z"), with_kwargs=True)
            out.register_forward_hook(_patch_output(i, "attn_out"))
            out.register_forward_hook(_record(i, "attn_out"))
            mlp = _get(layer, fam.mlp)
            mlp.register_forward_hook(_knock_mlp(i))
            mlp.register_forward_hook(_patch_output(i, "mlp_out"))
            mlp.register_forward_hook(_record(i, "mlp_out"))
            down = _get(layer, fam.mlp_down)
            down.register_forward_pre_hook(_knock_neurons(i), with_kwargs=True)
            down.register_forward_pre_hook(_record_input(i, "mlp_post"), with_kwargs=True)
            if fam.attn_in:
                _get(layer, fam.attn_in).register_forward_hook(_record(i, "attn_input"))
            if fam.mid:
                _get(layer, fam.mid).register_forward_hook(_record(i, "resid_mid"))

    # -- tokens ------------------------------------------------------------------------------

    @property
    def causal(self) -> bool:
        return self.kind == "decoder"

    def _raw(self, ids: list[int]) -> list[str]:
        """The tokenizer's own strings ("<id>" for a row it does not name)."""
        tokens = self.tokenizer.convert_ids_to_tokens([int(i) for i in ids])
        return [t if t is not None else f"<{i}>" for i, t in zip(ids, tokens, strict=True)]

    def _shown(self, ids: list[int], text: str | None = None, offsets: list | None = None) -> Shown:
        """The tokens of a sequence as a person reads them (model.tokenizer.show), the mask
        token as [MASK]."""
        shown = show(self.reading, self._raw(ids), text, offsets)
        tokens = [MASK if i == self._mask_id else t for i, t in zip(ids, shown.tokens, strict=True)]
        return replace(shown, tokens=tokens)

    def _display(self, ids: list[int]) -> list[str]:
        """Token ids as a person reads them, one by one (the mask token as [MASK])."""
        return [
            MASK if i == self._mask_id else show_token(self.reading, t)
            for i, t in zip(ids, self._raw(ids), strict=True)
        ]

    def encode(self, text: str) -> Encoded:
        """The text as the tokenizer reads it, with its own special tokens, cut to max_len;
        "[MASK]" typed in the text is the tokenizer's mask token."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        if not text.strip():
            raise ValueError("The text is empty: type a sentence.")
        mask = self.tokenizer.mask_token
        if mask and mask != MASK:
            text = text.replace(MASK, mask)
        full = self.tokenizer(text, return_offsets_mapping=True, verbose=False)  # all of it
        n_input = len(full["input_ids"])
        enc = full
        if n_input > self.max_len:
            enc = self.tokenizer(
                text, return_offsets_mapping=True, truncation=True, max_length=self.max_len
            )
        ids = [int(i) for i in enc["input_ids"]]
        offsets = [tuple(int(x) for x in o) for o in enc["offset_mapping"]]
        shown = self._shown(ids, text, offsets)
        return Encoded.of(ids, shown, offsets, n_input > len(ids), n_input)

    def encoded_ids(self, ids: list[int]) -> Encoded:
        """Token ids as they are, keeping the last max_len."""
        ids = [int(i) for i in ids]
        if not ids:
            raise ValueError("no token ids to trace")
        kept = ids[-self.max_len :]
        n = len(kept)
        return Encoded.of(kept, self._shown(kept), [(0, 0)] * n, n < len(ids), len(ids))

    def tokens_of(self, ids: list[int]) -> list[str]:
        return self._display(ids)

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=True)

    def vocabulary(self) -> list[str]:
        """Every token by id, as long as the model's output (rows the tokenizer does not
        name are "<id>")."""
        return self._display(list(range(self.n_vocab)))

    def special_ids(self) -> dict[str, int]:
        """The tokenizer's special tokens under the app's names ([BOS] is BERT's [CLS],
        [EOS] its [SEP]), and under their own."""
        tok = self.tokenizer
        ours = {
            "[PAD]": tok.pad_token_id,
            "[UNK]": tok.unk_token_id,
            "[BOS]": tok.bos_token_id if tok.bos_token_id is not None else tok.cls_token_id,
            "[EOS]": tok.eos_token_id if tok.eos_token_id is not None else tok.sep_token_id,
            MASK: tok.mask_token_id,
        }
        named = dict(zip(tok.all_special_tokens, tok.all_special_ids, strict=True))
        return {**named, **{k: int(v) for k, v in ours.items() if v is not None}}

    # -- forward passes ----------------------------------------------------------------------

    def heads(self) -> dict[str, tuple[int, int]]:
        """One stack of (layers, query heads a layer)."""
        return {"": (len(self.stack), self.n_heads)}

    def ids_of(self, inputs: str | Sequence[int]) -> list[int]:
        """A text's ids (as `trace` reads it), or token ids as they are."""
        return encoded(self, inputs).ids

    def edits(self, runs: Sequence[RunOptions], ids: Tensor) -> Edits:
        """`runs` (one per row of ids, or one for all) checked, as the pass's Edits; a
        patch's source is run (and recorded) first."""
        runs = list(runs) * ids.shape[0] if len(runs) == 1 else list(runs)
        source = None
        for run in runs:
            check_heads(run, self.heads(), self.name, self.d_mlp)
            if run.patch is None:
                continue
            n_source = len(self.ids_of(run.patch.source)) if source is None else ids.shape[1]
            check_patch(run.patch, len(self.stack), n_source, ids.shape[1])
            if source is None:
                rec = Recorder(layers=[{} for _ in self.stack])
                src = torch.tensor([self.ids_of(run.patch.source)], device=self.device)
                with _running(Edits(positions=run.positions), rec):
                    self.module(input_ids=src)
                source = lambda site, layer, rec=rec: rec.layers[layer][site]  # noqa: E731
        return edits_of(runs, "", self.n_heads, self.device, source, d_mlp=self.d_mlp)

    @torch.inference_mode()
    def _forward(
        self, ids: list[int] | Tensor, attentions: bool = False,
        options: RunOptions | Sequence[RunOptions] = CLEAN, recorder: Recorder | None = None,
    ) -> Any:  # fmt: skip
        x = ids if isinstance(ids, Tensor) else torch.tensor([ids], device=self.device)
        runs = [options] if isinstance(options, RunOptions) else options
        with _running(self.edits(runs, x), recorder):
            return self.module(input_ids=x, output_attentions=attentions)

    def _logits(self, ids: list[int], options: RunOptions = CLEAN) -> Tensor:
        """The fast path: logits (T, V) for one sequence, nothing recorded."""
        return self._forward(ids, options=options).logits[0]

    def trace_with(self, inputs: str | Sequence[int], options: RunOptions = CLEAN) -> Trace:
        """One text (or token ids as they are) through the model, everything inside kept."""
        enc = encoded(self, inputs)
        rec = Recorder(layers=[{} for _ in self.stack])
        keep = _KeepScores(rec.scores) if len(enc.ids) >= KEEP_SCORES_FROM else nullcontext()
        with keep:
            out, seconds = timed(
                lambda: self._forward(enc.ids, True, options, rec), self.device
            )
        if len(rec.scores) != len(self.stack):  # not one softmax per layer: recompute them
            rec.scores = []
        n = len(enc.ids)
        logits = getattr(out, "logits", None)
        embed = to_numpy(rec.embed[0])
        return Trace(
            tokens=enc.tokens,
            ids=np.array(enc.ids),
            offsets=enc.offsets,
            embeddings=embed,
            positional=to_numpy(rec.pos[0]) if rec.pos is not None else np.zeros_like(embed),
            layers=[self._layer(rec, i, out.attentions[i][0]) for i in range(len(self.stack))],
            logits=to_numpy(logits[0]) if logits is not None else np.zeros((n, 0), np.float32),
            causal=self.causal,
            truncated=enc.truncated,
            n_input_tokens=enc.n_input_tokens,
            options=options,
            device=self.device,
            seconds=seconds,
            raw_tokens=enc.raw_tokens,
            fragment_of=enc.fragment_of,
        )

    def log_probs(
        self, inputs: str | Sequence[int], runs: Sequence[RunOptions],
        at: Sequence[int] | None = None, batch: int = 16,
    ) -> np.ndarray:  # fmt: skip
        """[len(runs), len(at), V]: one input under each of `runs`, `batch` rows a pass."""
        if not self._head():
            raise self._unsupported("read its guesses (no output head)")
        ids = self.ids_of(inputs)[: self.max_len]
        where = list(range(len(ids))) if at is None else list(at)
        out = []
        for part in chunks(runs, batch):
            x = torch.tensor([ids] * len(part), device=self.device)
            logits = self._forward(x, options=part).logits[:, where].float()
            out.append(to_numpy(torch.log_softmax(logits, dim=-1)))
        return np.concatenate(out)

    def _head(self) -> list[nn.Module]:
        """The final norm (if any) and the output head's modules: stream -> logits; [] for
        a model without an output head."""
        fam = self.family
        if not fam.head or not (self.can("fill_mask") or self.can("next_token")):
            return []
        norm = [_get(self.base, fam.final_norm)] if fam.final_norm else []
        return norm + [_get(self.module, path) for path in fam.head]

    @torch.inference_mode()
    def logit_lens(
        self, inputs: str | Sequence[int], at: Sequence[int] | None = None
    ) -> np.ndarray:
        """[L + 1, T, V] log-probabilities of the stream entering layer 0, then leaving each
        layer, read through the model's final norm and output head."""
        head = self._head()
        if not head:
            raise self._unsupported("read its guesses (no output head)")
        rec = Recorder(layers=[{} for _ in self.stack])
        self._forward(self.ids_of(inputs)[: self.max_len], recorder=rec)
        streams = [rec.layers[0]["resid_pre"]] + [layer["resid_post"] for layer in rec.layers]
        x = torch.cat(streams)  # (L + 1, T, D)
        x = x[:, list(at)] if at is not None else x
        for module in head:
            x = module(x)
        return to_numpy(torch.log_softmax(x.float(), dim=-1))

    def attribute(
        self, inputs: str | Sequence[int], position: int, token: int,
        method: str = "integrated_gradients", steps: int = 64,
    ) -> Attribution:  # fmt: skip
        """Each input token's score for log p(`token`) at `position` (see Model.attribute),
        on the token embeddings given as `inputs_embeds`."""
        if method not in ATTRIBUTIONS:
            raise ValueError(f"method must be one of {', '.join(ATTRIBUTIONS)}, not {method!r}")
        if not self._head():
            raise self._unsupported("attribute a prediction to its tokens")
        ids = torch.tensor([self.ids_of(inputs)[: self.max_len]], device=self.device)
        if not 0 <= position < ids.shape[1]:
            raise ValueError(f"position {position} is out of range (0-{ids.shape[1] - 1})")
        with torch.no_grad():
            x = self.module.get_input_embeddings()(ids)[0]  # (T, D)

        def output(embeds: Tensor) -> Tensor:  # (B, T, D) -> log p(token) (B,)
            logits = self.module(inputs_embeds=embeds).logits[:, position].float()
            return torch.log_softmax(logits, dim=-1)[:, token]

        if method == "gradient_x_input":
            scores, value = gradient_x_input(output, x)
            return Attribution(to_numpy(scores), method, position, token, value, float("nan"))
        scores, value, base = integrated_gradients(output, x, torch.zeros_like(x), steps, 8)
        return Attribution(to_numpy(scores), method, position, token, value, base, steps)

    def _heads(self, x: Tensor, n_heads: int) -> Tensor:
        """(T, n_heads * Dh) -> (n_heads, T, Dh)."""
        return x.reshape(x.shape[0], n_heads, self.d_head).transpose(0, 1)

    @torch.inference_mode()  # the recorded tensors are inference tensors
    def _layer(self, rec: Recorder, i: int, attention: Tensor) -> LayerTrace:
        """Layer i's LayerTrace from what the hooks recorded and the model's attention."""
        got = {k: v[0] for k, v in rec.layers[i].items()}
        if "qkv" in got:  # GPT-2: one projection, Q K V side by side
            got["q"], got["k"], got["v"] = got.pop("qkv").chunk(3, dim=-1)
        q = self._heads(got["q"], self.n_heads)
        k = self._heads(got["k"], self.n_kv_heads)
        v = self._heads(got["v"], self.n_kv_heads)
        if rec.rotary is not None:
            cos, sin = rec.rotary[0][0], rec.rotary[1][0]
            q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        if self.n_kv_heads != self.n_heads:
            share = self.n_heads // self.n_kv_heads
            k, v = k.repeat_interleave(share, dim=0), v.repeat_interleave(share, dim=0)
        if rec.scores:  # the model's own, the mask added (a large negative number)
            scores = rec.scores[i][0].float()
        else:
            attn = _get(self.stack[i], self.family.attn)
            scale = float(getattr(attn, "scaling", self.d_head**-0.5))
            scores = (q * scale) @ k.transpose(-1, -2)  # scaling Q (T x Dh), not T x T
        if self.causal:
            n = scores.shape[-1]
            above = torch.ones(n, n, dtype=torch.bool, device=scores.device).triu(1)
            scores.masked_fill_(above, float("-inf"))
        resid_pre, attn_out = got["resid_pre"], got["attn_out"]
        resid_mid = got.get("resid_mid", resid_pre + attn_out)
        return LayerTrace(
            resid_pre=to_numpy(resid_pre),
            attn_input=to_numpy(got.get("attn_input", resid_pre)),
            q=to_numpy(q),
            k=to_numpy(k),
            v=to_numpy(v),
            scores=to_numpy(scores),
            attention=to_numpy(attention),
            z=to_numpy(self._heads(got["z"], self.n_heads)),
            attn_out=to_numpy(attn_out),
            resid_mid=to_numpy(resid_mid),
            mlp_out=to_numpy(got["mlp_out"]),
            resid_post=to_numpy(got["resid_post"]),
            mlp_post=to_numpy(got["mlp_post"]),
        )

    # -- predictions -------------------------------------------------------------------------

    def _ranked(self, probs: Tensor, k: int) -> Candidates:
        top = torch.topk(probs, min(k, probs.numel()))
        names = self._display(top.indices.tolist())
        return [(t, float(p)) for t, p in zip(names, top.values, strict=True) if p > 0]

    def _without(self, logits: Tensor, keep: tuple[int, ...] = ()) -> Tensor:
        """Logits with the special tokens (except `keep`) and the rows the tokenizer does not
        name set to -inf: never predicted."""
        drop = [i for i in self._specials if i not in keep and i < logits.shape[-1]]
        logits = logits.clone()
        logits[..., drop] = float("-inf")
        logits[..., len(self.tokenizer) :] = float("-inf")
        return logits

    def fill_mask_ids(
        self, ids: list[int], k: int = 5, options: RunOptions = CLEAN
    ) -> list[Candidates]:
        if not self.can("fill_mask"):
            raise self._unsupported("fill_mask")
        ids = [int(i) for i in ids][: self.max_len]
        logits = self._logits(ids, options)
        where = [p for p, i in enumerate(ids) if i == self._mask_id]
        return [self._ranked(torch.softmax(self._without(logits[p]), -1), k) for p in where]

    def next_distribution(
        self, ids: list[int], sampling: Sampling | None = None, options: RunOptions = CLEAN
    ) -> np.ndarray:
        if not self.can("next_token"):
            raise self._unsupported("next_token")
        ids = [int(i) for i in ids][-self.max_len :]
        eos = self.tokenizer.eos_token_id
        logits = self._logits(ids, options)[-1]
        logits = self._without(logits, keep=(eos,) if eos is not None else ())
        probs = filter_logits(logits.float(), sampling or UNFILTERED).double().cpu().numpy()
        return probs / probs.sum()

    # -- weights, for the views --------------------------------------------------------------

    def embedding_matrix(self) -> np.ndarray:
        return to_numpy(self.module.get_input_embeddings().weight)

    def nearest_tokens(self, token_id: int, k: int = 8) -> Candidates:
        table = self.module.get_input_embeddings().weight.detach()
        unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-8)
        cos = self._without(unit @ unit[token_id])
        cos[token_id] = float("-inf")
        top = torch.topk(cos, k)
        names = self._display(top.indices.tolist())
        return [(t, float(c)) for t, c in zip(names, top.values, strict=True)]

    def _projection(self, module: nn.Module, part: int = 0, parts: int = 1) -> tuple:
        """(W as [D_in, D_out] for x @ W, b [D_out]) of a Linear or GPT-2's Conv1D, cut to
        one of `parts` equal column blocks."""
        w = module.weight.detach()
        w = w if type(module).__name__ == "Conv1D" else w.T
        b = module.bias.detach() if module.bias is not None else torch.zeros(w.shape[1])
        width = w.shape[1] // parts
        cols = slice(part * width, (part + 1) * width)
        return to_numpy(w[:, cols]), to_numpy(b[cols])

    def attention_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_Q, W_K, W_V [H, D, Dh] and biases [H, Dh] (K, V repeated per query head under
        grouped-query attention); W_O [D, D], b_O [D]. For rotary models Q and K are before
        the rotation."""
        fam, lay = self.family, self.stack[layer]
        out: dict[str, np.ndarray] = {}
        for n, name in enumerate(("q", "k", "v")):
            module = _get(lay, getattr(fam, name))
            w, b = self._projection(module, n, 3) if fam.fused else self._projection(module)
            heads = self.n_heads if name == "q" or fam.fused else self.n_kv_heads
            w = w.reshape(w.shape[0], heads, self.d_head).transpose(1, 0, 2)
            b = b.reshape(heads, self.d_head)
            share = self.n_heads // heads
            out[f"w_{name}"], out[f"b_{name}"] = w.repeat(share, 0), b.repeat(share, 0)
        out["w_o"], out["b_o"] = self._projection(_get(lay, fam.out))
        return out

    def unembedding(self) -> np.ndarray:
        """[D, V] W_U, the output head's last Linear (transformers' output embeddings):
        logits = h @ W_U + b_U, h after the final norm (GPT-2, Llama) or BERT's transform."""
        if not self._head():
            raise self._unsupported("show its unembedding (no output head)")
        return to_numpy(self.module.get_output_embeddings().weight).T

    @torch.inference_mode()
    def read_out(self, vectors: np.ndarray) -> np.ndarray:
        """[N, V] log-probabilities of vectors [N, D] through the family's final norm and
        output head, as the logit lens reads the stream."""
        head = self._head()
        if not head:
            raise self._unsupported("read its guesses (no output head)")
        dtype = next(self.module.parameters()).dtype
        x = torch.as_tensor(np.asarray(vectors, dtype=np.float32), device=self.device).to(dtype)
        for module in head:
            x = module(x)
        return to_numpy(torch.log_softmax(x.float(), dim=-1))

    def mlp_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_in [D, M], b_in [M], W_out [M, D], b_out [D] of a layer's MLP, for x @ W + b
        (zeros where the model has no bias): mlp_out = mlp_post @ W_out + b_out, and
        mlp_post = act(X @ W_in + b_in) for the MLP's input X, act the model's own
        (BERT: GELU; GPT-2: GELU's tanh approximation). A gated MLP (Llama) adds W_gate [D,
        M] and b_gate [M]: mlp_post = SiLU(X @ W_gate + b_gate) * (X @ W_in + b_in), its
        "up" projection being W_in."""
        fam, lay = self.family, self.stack[layer]
        out: dict[str, np.ndarray] = {}
        out["w_in"], out["b_in"] = self._projection(_get(lay, fam.mlp_in))
        out["w_out"], out["b_out"] = self._projection(_get(lay, fam.mlp_down))
        if fam.mlp_gate:
            out["w_gate"], out["b_gate"] = self._projection(_get(lay, fam.mlp_gate))
        return out

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.module.parameters())
