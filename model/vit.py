"""The Vision Transformer (ViT): an image cut into patches, each patch a token.

The lecture's last model, on scikit-learn's handwritten digits (8x8 grey images, 0-16):

1. patches               -> `patchify`: 2x2 pixels each, a 4x4 grid of 16 patches
2. patch embedding       -> `VisionTransformer.patch_embed`: 4 pixels -> D (one Linear,
                            the image's counterpart of the token embedding table)
3. [CLS]                 -> one learned vector put in front of the patches; it reads the
                            whole image through attention, and the head reads it
4. position embeddings   -> learned, one vector per token (17 of them)
5. encoder layers        -> the project's own `Layer` (model/transformer.py), bidirectional
6. classification head   -> Linear(D, 10) on the [CLS] token's final vector

Positions are learned rather than 2-D sinusoids: nothing tells the model that the patches
form a grid, and the lecture's point is that it finds out. The cosine similarity of each
patch's position vector with every other one, drawn as a 4x4 grid of 4x4 maps, shows rows
and columns emerging from training alone; sinusoids would show the structure we put in.
They start small (std 0.02, as in the ViT paper) so what the maps show is learned, not the
initial noise.

Size, by validation accuracy (144 images, 200 epochs, seed 0, one CPU thread): D = 64 peaked
at 97.9% (pre-norm; post-norm the same, with a higher loss), D = 96 at 98.6%, D = 128 at
99.3% for one epoch but mostly 97.9%, in twice D = 96's time (over 6 minutes a run here).
So: D = 96, 4 layers of 4 heads (Dh = 24), MLP 2 x D, pre-norm (LayerNorm before each
sublayer, then a final one: the ViT paper's choice, and a lower validation loss than
post-norm). training/vit.py trains (with a moving average of the weights, which held 98.6%
over the last 50 epochs) and evaluates it against simpler classifiers.

Every forward pass returns the `Record` of what it computed (the text models' record), so
the trace and the fast path run the same code. No module keeps state between calls.

`VisionModel` is the runtime model of the app's contract (kind "vision"): `classify(image)`
ranks the ten digits, `trace(image)` returns the Trace. `to_digit_image` turns any picture
of a digit (a photo, a drawing, a PIL image) into the 8x8, 0-16 input the model reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from i18n import N_
from model.checkpoint import read_config, read_weights, save_checkpoint
from model.contract import Candidates, Model
from model.interventions import chunks, edits_of
from model.options import CLEAN, RunOptions, check_heads
from model.text import layer_trace, mlp_weights_of, timed, to_numpy
from model.trace import Trace
from model.transformer import CLEAN_EDITS, Config, Edits, Layer, Record

PIXEL_MAX = 16.0  # the digits' scale: a pixel counts the inked dots of a 4x4 block, 0-16
CLASSES = [str(d) for d in range(10)]


@dataclass
class VisionConfig:
    """Hyper-parameters; stored in the checkpoint's config.json."""

    kind: str = "vision"
    image_size: int = 8  # the image is image_size x image_size pixels
    patch_size: int = 2  # P: each token is a P x P patch, so (8 / 2)^2 = 16 patches
    n_classes: int = 10  # the digits 0-9
    d_model: int = 96  # D: width of every token vector (the residual stream)
    n_heads: int = 4  # H: heads per layer, each of Dh = D / H dimensions
    n_layers: int = 4  # encoder layers
    d_mlp: int = 192  # hidden width of each layer's MLP (2 x D)
    norm: str = "pre"  # "pre" (ViT paper) | "post" (the original Transformer)
    dropout: float = 0.1  # during training only

    @property
    def grid(self) -> int:
        """Patches per row (and per column): 4."""
        return self.image_size // self.patch_size

    @property
    def n_tokens(self) -> int:
        """T: [CLS] plus one token per patch, 17."""
        return 1 + self.grid**2

    def layer_config(self) -> Config:
        """The text Transformer's Config, for its `Layer` (the fields a Layer reads)."""
        return Config(
            kind="encoder",
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_layers=self.n_layers,
            d_mlp=self.d_mlp,
            max_len=self.n_tokens,
            positional="learned",
            norm=self.norm,
            dropout=self.dropout,
        )


def patchify(images: Tensor, patch: int) -> Tensor:
    """(B, S, S) images -> (B, N, P*P) patches in reading order (row by row), N = (S / P)^2."""
    b, s, _ = images.shape
    g = s // patch
    x = images.reshape(b, g, patch, g, patch)  # (B, row, y in patch, column, x in patch)
    return x.permute(0, 1, 3, 2, 4).reshape(b, g * g, patch * patch)


class VisionTransformer(nn.Module):
    """Patches -> tokens (+ [CLS], + positions) -> encoder layers -> logits."""

    def __init__(self, cfg: VisionConfig) -> None:
        super().__init__()
        if cfg.image_size % cfg.patch_size:
            raise ValueError(f"patch size {cfg.patch_size} does not divide {cfg.image_size}")
        self.cfg = cfg
        d = cfg.d_model
        self.patch_embed = nn.Linear(cfg.patch_size**2, d)  # a patch's pixels -> a token
        self.cls = nn.Parameter(torch.randn(d) * 0.02)  # the [CLS] token's vector
        self.pos_embed = nn.Parameter(torch.randn(cfg.n_tokens, d) * 0.02)  # (T, D)
        self.drop = nn.Dropout(cfg.dropout)
        layer_cfg = cfg.layer_config()
        self.layers = nn.ModuleList(Layer(layer_cfg) for _ in range(cfg.n_layers))
        self.final_norm = nn.LayerNorm(d) if cfg.norm == "pre" else nn.Identity()
        self.head = nn.Linear(d, cfg.n_classes)  # final vector -> class logits

    def forward(self, images: Tensor, edits: Edits = CLEAN_EDITS) -> tuple[Tensor, Record]:
        """images (B, 8, 8) on the 0-16 scale -> logits (B, T, 10) and the record.

        logits[:, 0] ([CLS]) is the prediction. The other rows are the same head applied to
        each patch's final vector: never trained, shown only to compare with [CLS].
        """
        b = images.size(0)
        pixels = patchify(images.float() / PIXEL_MAX, self.cfg.patch_size)  # (B, N, P*P)
        patches = self.patch_embed(pixels)  # (B, N, D)
        cls = self.cls.expand(b, 1, -1)  # (B, 1, D)
        embed = torch.cat([cls, patches], dim=1)  # (B, T, D)
        pos = self.pos_embed.expand(b, -1, -1)  # (B, T, D)
        if not edits.positions:
            pos = torch.zeros_like(pos)
        x = self.drop(embed + pos)
        layers = []
        for i, layer in enumerate(self.layers):  # no mask: every token sees every token
            rec = layer(x, None, edits=edits, i=i)
            layers.append(rec)
            x = rec.resid_post
        return self.head(self.final_norm(x)), Record(embed, pos, layers)  # (B, T, 10)


# ---------------------------------------------------------------------------------------
# Checkpoints: safetensors weights + config.json (+ training.json); never pickle
# ---------------------------------------------------------------------------------------


def save_vit(module: VisionTransformer, folder: str | Path, training: dict | None = None) -> Path:
    """Write weights, config (and training facts, if given) into a folder: a checkpoint of
    the same format as the text models', without a tokenizer."""
    return save_checkpoint(module, module.cfg, None, folder, training)


def load_vit(folder: str | Path, device: str = "cpu") -> VisionTransformer:
    """The VisionTransformer stored in `folder`, in eval mode on `device`."""
    state = read_weights(folder)
    module = VisionTransformer(read_config(folder, VisionConfig))
    module.load_state_dict(state)  # strict: every weight, no more
    return module.to(device).eval()


# ---------------------------------------------------------------------------------------
# Any picture of a digit -> the model's 8x8, 0-16 input
# ---------------------------------------------------------------------------------------


def _unit(values: np.ndarray, was_bytes: bool) -> np.ndarray:
    """Values on a 0-1 scale: uint8 (or anything above 16) is 0-255, above 1 is 0-16."""
    top = float(values.max())
    scale = 255.0 if was_bytes or top > PIXEL_MAX else PIXEL_MAX if top > 1 else 1.0
    return np.clip(values / scale, 0.0, 1.0)


def _grey(values: np.ndarray, was_bytes: bool) -> np.ndarray:
    """(H, W), (H, W, 1), grey + alpha (H, W, 2), RGB or RGBA -> (H, W) grey on 0-1.
    Transparent pixels become background: white under dark ink, black under light ink."""
    if values.ndim == 2:
        values = values[..., None]
    if values.shape[2] not in (1, 2, 3, 4):
        raise ValueError(
            f"not an image: shape {values.shape}; expected (H, W), (H, W, 3) RGB or (H, W, 4) RGBA"
        )
    n_colour = 3 if values.shape[2] >= 3 else 1
    colour = _unit(values[..., :n_colour], was_bytes)  # (H, W, 1 or 3)
    grey = colour @ np.array([0.299, 0.587, 0.114]) if n_colour == 3 else colour[..., 0]
    if values.shape[2] == n_colour:  # no alpha channel
        return grey
    alpha = values[..., -1]
    alpha = alpha / 255.0 if was_bytes or alpha.max() > 1 else alpha  # (H, W), 0-1
    if not alpha.any():
        raise DigitImageError(N_("the image is fully transparent: nothing is drawn"))
    ink_is_dark = (grey * alpha).sum() / alpha.sum() < 0.5
    return alpha * grey + (1 - alpha) * (1.0 if ink_is_dark else 0.0)


def _area_resize(image: np.ndarray, size: int) -> np.ndarray:
    """(S, S) -> (size, size): each new pixel is the mean of the area it covers."""
    s = image.shape[0]
    edges = np.arange(size + 1) * s / size  # the new pixels' borders, in old pixels
    left, right = edges[:-1, None], edges[1:, None]  # (size, 1)
    old = np.arange(s)[None, :]  # (1, S)
    overlap = np.clip(np.minimum(right, old + 1) - np.maximum(left, old), 0, None)  # (size, S)
    weights = overlap / overlap.sum(axis=1, keepdims=True)
    return weights @ image @ weights.T


class DigitImageError(ValueError):
    """Why an array is no picture of a digit: `message`, a template (marked for translation,
    translated where it is shown), and its `values`."""

    def __init__(self, message: str, **values: object) -> None:
        super().__init__(message.format(**values))
        self.message, self.values = message, values


def to_digit_image(array: Any, size: int = 8) -> np.ndarray:
    """Any picture of one digit -> the model's input: [8, 8] float, 0-16, light ink on dark.

    Accepts a 2-D grey array, RGB or RGBA (H, W, 3 or 4), or anything numpy reads as one (a
    PIL image), of any size, on a 0-1, 0-16 or 0-255 scale (uint8 is always 0-255). Steps:
    grey; scale to 0-1; invert when the border is light (dark ink on light paper); then,
    unless it is already 8x8: crop to the ink, pad to a square (centred), resize to 8x8 by
    area averaging and stretch so the strongest ink is 16, as in the training digits (98%
    of which reach 16). An 8x8 input keeps its values: a training digit passes unchanged.
    A blank image (no pixel with 5% ink) gives zeros. ValueError for an empty, 1-pixel-wide,
    fully transparent or non-image input.
    """
    try:
        raw = np.asarray(array)
    except Exception as err:  # an object numpy cannot turn into an array at all
        raise ValueError(f"not an image: {type(array).__name__}") from err
    if raw.dtype == bool:
        raw = raw.astype(np.uint8) * 255
    if raw.dtype.kind not in "uif":
        raise ValueError(f"not an image: {type(array).__name__} with {raw.dtype} values")
    if raw.size == 0:
        raise DigitImageError(N_("the image is empty: shape {shape}"), shape=raw.shape)
    if raw.ndim not in (2, 3):
        raise ValueError(f"not an image: shape {raw.shape}; expected (H, W) or (H, W, 3 or 4)")
    if min(raw.shape[:2]) < 2:
        raise DigitImageError(N_("the image is too small: {h}x{w} pixels"), h=raw.shape[0],
                              w=raw.shape[1])
    values = raw.astype(np.float64)
    if not np.isfinite(values).all() or values.min() < 0:
        raise ValueError("pixel values must be finite and not negative")
    grey = _grey(values, raw.dtype == np.uint8)  # (H, W), 0-1
    border = np.concatenate([grey[0], grey[-1], grey[1:-1, 0], grey[1:-1, -1]])
    ink = 1.0 - grey if border.mean() > 0.5 else grey  # light ink on a dark background
    if ink.shape == (size, size):
        return ink * PIXEL_MAX
    blank = ink.max() < 0.05  # no ink (rounding leaves ~1e-16 on white paper)
    rows, cols = ((), ()) if blank else np.nonzero(ink > 0.1 * ink.max())
    if len(rows) == 0:
        return np.zeros((size, size))
    ink = ink[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]  # crop to the ink
    h, w = ink.shape
    side = max(h, w)
    square = np.zeros((side, side))
    top, left = (side - h) // 2, (side - w) // 2
    square[top : top + h, left : left + w] = ink  # centred on a square
    small = _area_resize(square, size)
    return small / small.max() * PIXEL_MAX


# ---------------------------------------------------------------------------------------
# The runtime model of the app's contract
# ---------------------------------------------------------------------------------------


def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits (0-16, bundled with the package), split as everyone splits
    them: `train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)`. Returns the
    training part's images and labels, then the 360 test images and labels."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x, y = data.images.astype(np.float32), data.target.astype(np.int64)
    rest_x, test_x, rest_y, test_y = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y
    )
    return rest_x, rest_y, test_x, test_y


class VisionModel(Model):
    """A trained Vision Transformer ready for the app: classify a digit, trace a pass."""

    kind = "vision"
    positional = "learned"
    example = np.zeros((8, 8), dtype=np.float32)  # a blank digit

    def __init__(self, module: VisionTransformer, device: str, name: str) -> None:
        self.module, self.cfg = module, module.cfg
        self.device, self.name = str(device), name
        self.max_len = self.cfg.n_tokens

    @classmethod
    def from_folder(cls, folder: str | Path, name: str, device: str) -> VisionModel:
        """The checkpoint in `folder` (model.safetensors + config.json)."""
        return cls(load_vit(folder, device), device, name)

    def tokens(self) -> list[str]:
        """The token names: [CLS], then "patch row,column" in reading order, "patch 0,0" first."""
        g = self.cfg.grid
        return ["[CLS]"] + [f"patch {r},{c}" for r in range(g) for c in range(g)]

    def heads(self) -> dict[str, tuple[int, int]]:
        return {"": (self.cfg.n_layers, self.cfg.n_heads)}

    def edits(self, runs: Sequence[RunOptions], b: int) -> Edits:
        """`runs` (one per image, or one for all) checked, as the pass's Edits."""
        runs = list(runs) * b if len(runs) == 1 else list(runs)
        for run in runs:
            check_heads(run, self.heads(), self.name, self.cfg.d_mlp)
            if run.patch is not None:
                raise ValueError(f"'{self.name}' (vision) knocks heads out; it does not patch")
        return edits_of(runs, "", self.cfg.n_heads, self.device, d_mlp=self.cfg.d_mlp)

    @torch.inference_mode()
    def forward(
        self, images: np.ndarray, options: RunOptions | Sequence[RunOptions] = CLEAN
    ) -> tuple[Tensor, Record]:
        """(B, 8, 8) images on the 0-16 scale -> logits (B, T, 10) and the record."""
        batch = torch.as_tensor(np.asarray(images, dtype=np.float32), device=self.device)
        runs = [options] if isinstance(options, RunOptions) else options
        return self.module(batch, self.edits(runs, batch.shape[0]))

    def probabilities(self, images: np.ndarray, options: RunOptions = CLEAN) -> np.ndarray:
        """The fast path for many images: (B, 8, 8), 0-16 -> [B, 10] class probabilities."""
        logits, _ = self.forward(images, options)
        return to_numpy(torch.softmax(logits[:, 0], dim=-1))  # [CLS] row

    def classify(
        self, image: Any, ablate: Iterable | None = None, ablate_mlp: Iterable | None = None,
        ablate_neurons: Iterable | None = None,
    ) -> Candidates:  # fmt: skip
        """The ten digits with their probabilities, most likely first: [("7", 0.97), ...]."""
        options = RunOptions(ablate=ablate, ablate_mlp=ablate_mlp, ablate_neurons=ablate_neurons)
        probs = self.probabilities(to_digit_image(image)[None], options)[0]
        order = np.argsort(-probs, kind="stable")
        return [(CLASSES[i], float(probs[i])) for i in order]

    def log_probs(
        self, inputs: Any, runs: Sequence[RunOptions], at: Sequence[int] | None = None
    ) -> np.ndarray:
        """[len(runs), len(at), 10]: one image's class log-probabilities under each run
        (the [CLS] row, position 0, decides), batched."""
        image = to_digit_image(inputs)
        where = list(range(self.cfg.n_tokens)) if at is None else list(at)
        out = []
        for part in chunks(runs):
            logits = self.forward(np.repeat(image[None], len(part), 0), part)[0][:, where]
            out.append(to_numpy(torch.log_softmax(logits.float(), dim=-1)))
        return np.concatenate(out)

    def trace_ids(
        self, ids: list[int], positions: bool = True, ablate: Iterable | None = None,
        ablate_mlp: Iterable | None = None, ablate_neurons: Iterable | None = None,
    ) -> Trace:  # fmt: skip
        """An image has no token ids."""
        raise self._unsupported("read token ids")

    def trace_with(self, inputs: Any, options: RunOptions = CLEAN) -> Trace:
        """One image through the model, everything inside kept (see Trace)."""
        image = to_digit_image(inputs)
        (logits, record), seconds = timed(lambda: self.forward(image[None], options), self.device)
        t = self.cfg.n_tokens
        return Trace(
            tokens=self.tokens(),
            ids=np.arange(t),
            offsets=[(0, 0)] * t,  # no text to point into
            embeddings=to_numpy(record.embed[0]),  # [T, D] [CLS] vector, patch embeddings
            positional=to_numpy(record.pos_embed[0]),  # [T, D] learned position embeddings
            layers=[layer_trace(layer) for layer in record.layers],
            logits=to_numpy(logits[0]),  # [T, 10]; row 0 ([CLS]) is the prediction
            causal=False,
            truncated=False,
            n_input_tokens=t,
            options=options,
            device=self.device,
            seconds=seconds,
            image=image,
        )

    def mlp_weights(self, layer: int) -> dict[str, np.ndarray]:
        """W_in [D, M], b_in [M], W_out [M, D], b_out [D] of a layer's MLP."""
        return mlp_weights_of(self.module.layers[layer].mlp)

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.module.parameters())
