"""viz's figures read back in tests (not a test module): every spec validated against
Plotly's schema, typed arrays decoded, and every figure builder of viz/ with small inputs.

viz builds Plotly's figure JSON as dicts and never makes a plotly object; the tests do, to
check each spec against Plotly's schema (an invalid property raises) and to read it with
the attribute access the assertions use (`fig.data[0].z`, `fig.layout.yaxis.ticktext`).
"""

from __future__ import annotations

import base64
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

import viz

ROOT = Path(__file__).resolve().parents[1]


def plotly_figure(spec: viz.Figure) -> go.Figure:
    """A viz figure (dict) as a plotly Figure, validated against Plotly's schema: a property
    Plotly does not know, or a value it does not accept, raises ValueError."""
    return go.Figure(spec)


_DTYPES = {"i1": "<i1", "u1": "<u1", "i2": "<i2", "u2": "<u2", "i4": "<i4", "u4": "<u4",
           "f4": "<f4", "f8": "<f8"}  # fmt: skip


def decoded(value: object) -> object:
    """JSON data with Plotly's typed arrays ({"dtype", "bdata", "shape"}) read back as nested
    lists, NaN as None (null), as static/svg_chart.js reads them."""
    if isinstance(value, dict):
        if set(value) in ({"dtype", "bdata"}, {"dtype", "bdata", "shape"}):
            flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=_DTYPES[value["dtype"]])
            shape = [int(n) for n in str(value.get("shape", flat.size)).split(",")]
            array = flat.reshape(shape).astype(object)
            array[flat.reshape(shape) != flat.reshape(shape)] = None  # NaN
            return array.tolist()
        return {key: decoded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decoded(item) for item in value]
    return value


# --- every figure builder, with small inputs (those of tests/test_viz.py where it has them) ---

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]  # "the" twice: two separate ticks
T = len(TOKENS)
NOT_BUILDERS = {"Figure", "TokenLabel", "matrix_to_csv", "to_json", "zoom"}  # viz.__all__
# viz modules of helpers, not builders: shared pieces, margins, zoom, CSV export
HELPER_MODULES = {"_common", "margins", "zoom", "export", "__init__"}


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    w = rng.random(shape)
    return w / w.sum(axis=-1, keepdims=True)


def builder_inputs() -> dict[str, list[Callable[[], viz.Figure]]]:
    """Builder name -> calls of it on small representative inputs (a few per builder where
    its options change the figure's shape)."""
    from model import additive_mask, binary_encoding, causal_mask, sinusoidal_encoding
    from viz.layers import attention_grid_page
    from viz.learning import alignment_match, learning_curve, toy_answer, translation_answer

    rng = np.random.default_rng(0)
    w = _weights(rng, T, T)
    emb, pos = rng.normal(size=(T, 8)), rng.normal(size=(T, 8))
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    scores = rng.normal(size=(T, T)) + additive_mask(causal_mask(T))
    pe = sinusoidal_encoding(T, 8)
    image = rng.random((8, 8)) * 16
    return {
        "attention_heatmap": [
            lambda: viz.attention_heatmap(w, TOKENS, "layer 1, head 1"),
            lambda: viz.attention_heatmap(w[:3, :4], ["나는", "학교에", "간다"],
                                          key_tokens=["I", "go", "to", "<b>"]),  # fmt: skip
        ],
        "attention_grid": [
            lambda: viz.attention_grid(_weights(rng, 2, 3, T, T), TOKENS),
            lambda: viz.attention_grid(_weights(rng, 1, 1, 3, 3), TOKENS[:3], title="one"),
            lambda: viz.attention_grid(_weights(rng, 2, 2, T, T), TOKENS,
                                       panel_titles=["picture A", "B", "C", "<b>D</b>"]),
        ],
        "attention_grid_page": [lambda: attention_grid_page(_weights(rng, 1, 2, T, T), TOKENS, 2)],
        "attention_row": [
            lambda: viz.attention_row(w[2], TOKENS, "sat", query_index=2),
            lambda: viz.attention_row(_weights(rng, 30), [f"t{i}" for i in range(30)], "t0"),
        ],
        "attention_rows": [
            lambda: viz.attention_rows([w[2], _weights(rng, 3)], [TOKENS, TOKENS[:3]], "sat",
                                       [2, 1], ["A: <i>sat</i>", "B"], title="t"),
            lambda: viz.attention_rows([_weights(rng, 30)], [[f"t{i}" for i in range(30)]], "t0",
                                       [0], ["one"]),
        ],
        "causal_mask_figure": [
            lambda: viz.causal_mask_figure(additive_mask(causal_mask(T)), TOKENS),
            lambda: viz.causal_mask_figure(additive_mask(causal_mask(30)), list("x" * 30)),
        ],
        "cosine_by_layer": [
            lambda: viz.cosine_by_layer(["input", "layer 1"], {"a": [1, 0.5], "b": [1, -0.2]},
                                        "t"),  # fmt: skip
        ],
        "shifted_targets": [
            lambda: viz.shifted_targets(TOKENS, TOKENS, TOKENS, rng.random(T), "t")
        ],
        "similarity_heatmap": [
            lambda: viz.similarity_heatmap(unit @ unit.T, TOKENS, "cosine similarity"),
            lambda: viz.similarity_heatmap(emb @ emb.T, TOKENS, metric="dot product"),
        ],
        "embedding_map": [
            lambda: viz.embedding_map(rng.normal(size=(5, 2)), ["bank", "river", "cash", "<b>",
                                      "shore"], ["s", "s", "n", "s", "n"], "bank"),  # fmt: skip
        ],
        "layer_trajectory": [
            lambda: viz.layer_trajectory(rng.normal(size=(4, 16)), "bank", [1, 0.9, 0.7, 0.6])
        ],
        "attention_beside_attribution": [
            lambda: viz.attention_beside_attribution(TOKENS, w[0], rng.normal(size=T), "t"),
        ],
        "rank_by_layer": [lambda: viz.rank_by_layer(["a", "b", "c"], [30, 4, 1], "cat", "t")],
        "mlp_neurons": [
            lambda: viz.mlp_neurons(rng.normal(size=64).clip(-0.17), [3, 40, 7], "layer 2"),
            lambda: viz.mlp_neurons(-np.ones(4) * 0.1, [], "<b>quiet</b>"),
        ],
        "learning_curve": [
            lambda: learning_curve({"loss": ([0, 1], [2, 1]), "val": ([0, 1], [2.2, float("nan")])},
                                   "t", "loss", log_y=True, mark=1),  # fmt: skip
            lambda: learning_curve({"acc": ([0, 1], [0.2, 0.9])}, "t", "acc", percent=True),
        ],
        "toy_answer": [lambda: toy_answer([1, 2], [2, 2], [2, 1], "t")],
        "translation_answer": [lambda: translation_answer(["나는", "<b>"], ["나는", "집"], "t")],
        "alignment_match": [lambda: alignment_match(["나는", "간다"], ["i", "go"], ["i", "x"], "")],
        "matrix_heatmap": [
            lambda: viz.matrix_heatmap(emb, TOKENS, title="token embeddings"),
            lambda: viz.matrix_heatmap(scores, TOKENS, TOKENS, title="scores"),  # -inf cells
            lambda: viz.matrix_heatmap(rng.random((3, 3)), list("abc"), signed=False,
                                       text_auto=True),  # fmt: skip
        ],
        "binary_table": [
            lambda: viz.binary_table(binary_encoding(T), TOKENS),
            lambda: viz.binary_table(binary_encoding(70)),  # no numbers in the cells
        ],
        "sinusoidal_heatmap": [
            lambda: viz.sinusoidal_heatmap(pe, TOKENS),
            lambda: viz.sinusoidal_heatmap(sinusoidal_encoding(40, 16)),
        ],
        "positional_waves": [
            lambda: viz.positional_waves(pe, [0, 3]),
            lambda: viz.positional_waves(sinusoidal_encoding(10, 8), [0, 1],
                                         curve=sinusoidal_encoding(10, 8, per_position=4)),
        ],  # fmt: skip
        "embedding_plus_position": [lambda: viz.embedding_plus_position(emb, pos, TOKENS)],
        "topk_bar": [
            lambda: viz.topk_bar([("shore", 0.2), ("bank", 0.5), ("<b>x", 0.25)], "fills?"),
            lambda: viz.topk_bar([("a", 0.01), ("b", 0.02)]),
        ],
        "distribution_bar": [
            lambda: viz.distribution_bar(rng.dirichlet(np.ones(30)), [f"t{i}" for i in range(30)])
        ],
        "token_strip": [
            lambda: viz.token_strip(TOKENS, np.array([5, 17, 99, 3, 5, 40]), highlight=[2]),
            lambda: viz.token_strip([f"word{i}" for i in range(60)], list(range(60))),
        ],
        "accuracy_by_length": [
            lambda: viz.accuracy_by_length(range(1, 4), {"a": [1.0, 0.5, None], "<b>": [1, 1, 1]})
        ],
        "image_with_patches": [lambda: viz.image_with_patches(image)],
        "patch_tokens": [lambda: viz.patch_tokens(rng.random((4, 2, 2)), ["p0", "p1", "p2", "p3"])],
        "position_similarity_grid": [lambda: viz.position_similarity_grid(np.eye(4), 2)],
        "attention_over_image": [lambda: viz.attention_over_image(image, rng.random((4, 4)))],
    }


def zoomed_inputs() -> dict[str, Callable[[], viz.Figure]]:
    """Figures zoomed to a window (viz.zoom), as the pages draw long sentences."""
    from model import sinusoidal_encoding

    rng = np.random.default_rng(1)
    tokens = [f"token{i}" for i in range(60)]
    return {
        "attention_heatmap": lambda: viz.zoom(
            viz.attention_heatmap(_weights(rng, 60, 60), tokens), (10, 41)
        ),
        "matrix_heatmap rows": lambda: viz.zoom(
            viz.matrix_heatmap(rng.normal(size=(60, 8)), tokens), (0, 31), cols=False
        ),
        "attention_row cols": lambda: viz.zoom(
            viz.attention_row(_weights(rng, 60), tokens, "x", query_index=3), (0, 31), rows=False
        ),
        "embedding_plus_position rows": lambda: viz.zoom(
            viz.embedding_plus_position(
                rng.normal(size=(60, 8)), sinusoidal_encoding(60, 8), tokens
            ),
            (5, 36),
            cols=False,
        ),
        "token_strip": lambda: viz.zoom(viz.token_strip(tokens, list(range(60))), (0, 31)),
    }


def builders() -> dict[str, Callable[..., viz.Figure]]:
    """Every figure builder of viz/, found by itself: the public functions of viz's modules
    (not its helpers' modules) that return a Figure."""
    found = {}
    for path in sorted((ROOT / "viz").glob("*.py")):
        if path.stem in HELPER_MODULES:
            continue
        module = importlib.import_module(f"viz.{path.stem}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            returns = inspect.signature(function).return_annotation
            if function.__module__ == module.__name__ and not name.startswith("_") and (
                returns in ("Figure", viz.Figure)
            ):
                found[name] = function
    return found


def every_figure() -> dict[str, viz.Figure]:
    """Every builder's figures on their inputs, and the zoomed ones: "name #i" -> figure."""
    out = {}
    for name, calls in builder_inputs().items():
        for i, call in enumerate(calls):
            out[f"{name} #{i}"] = call()
    for name, call in zoomed_inputs().items():
        out[f"zoom: {name}"] = call()
    return out
