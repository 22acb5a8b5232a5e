"""Images as a Vision Transformer reads them: patches, patch tokens, position similarity,
attention drawn over the image. Arrays in, Plotly's figure JSON as a dict out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from i18n import _
from viz._common import SIGNED_SCALE, Figure, apply_layout, as_array, escape, update_axes

GREY = [[0.0, "#ffffff"], [1.0, "#111111"]]  # ink is dark, as on paper
HEAT = [[0.0, "rgba(194,24,91,0)"], [1.0, "rgba(194,24,91,0.85)"]]  # attention over the image


def _image_trace(image: np.ndarray, vmax: float) -> dict:
    return {
        "type": "heatmap", "z": image, "zmin": 0.0, "zmax": vmax, "colorscale": GREY,
        "showscale": False,
        "hovertemplate": _("row %{y}, column %{x}: %{z:.0f}<extra>pixel</extra>"),
    }  # fmt: skip


def _square(
    fig: Figure, n_rows: int, n_cols: int, title: str, height: int, **extra: object
) -> Figure:
    apply_layout(
        fig, title, height, **extra,
        xaxis={"showgrid": False, "zeroline": False, "range": [-0.5, n_cols - 0.5],
               "constrain": "domain", "tickmode": "linear", "dtick": 1},
        yaxis={"showgrid": False, "zeroline": False, "range": [n_rows - 0.5, -0.5],
               "scaleanchor": "x", "constrain": "domain", "tickmode": "linear", "dtick": 1},
    )  # fmt: skip
    return fig


def image_with_patches(
    image: npt.ArrayLike,
    patch: int = 2,
    vmax: float = 16.0,
    title: str | None = None,
) -> Figure:
    """The image in grey, with the patch grid drawn over it and each patch's "row,column"
    (the title defaults to "the image, cut into patches")."""
    img = as_array(image, 2, "image")
    h, w = img.shape
    fig = {"data": [_image_trace(img, vmax)]}
    line = {"color": "#C2185B", "width": 2}
    shapes = []  # given to the layout at once: one add_shape per line cost ~1 ms each
    for k in range(0, max(h, w) + 1, patch):
        if k <= w:
            shapes.append({"type": "line", "x0": k - 0.5, "x1": k - 0.5, "y0": -0.5,
                           "y1": h - 0.5, "line": line})  # fmt: skip
        if k <= h:
            shapes.append({"type": "line", "x0": -0.5, "x1": w - 0.5, "y0": k - 0.5,
                           "y1": k - 0.5, "line": line})  # fmt: skip
    annotations = [
        {"x": c * patch - 0.45, "y": r * patch - 0.4, "text": f"{r},{c}", "showarrow": False,
         "xanchor": "left", "yanchor": "top", "font": {"size": 11, "color": "#C2185B"}}
        for r in range(h // patch) for c in range(w // patch)
    ]  # fmt: skip
    title = _("the image, cut into patches") if title is None else title
    return _square(fig, h, w, title, 420, shapes=shapes, annotations=annotations)


def patch_tokens(
    tiles: npt.ArrayLike, labels: Sequence[str], vmax: float = 16.0,
    title: str | None = None,
) -> Figure:
    """Each patch [N, p, p] side by side, a gap between them, labelled like the tokens (the
    title defaults to "the patches as a row of tokens")."""
    tiles = np.asarray(tiles, dtype=np.float64)
    n, p = tiles.shape[:2]
    if len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} patches")
    strip = np.full((p, n * (p + 1) - 1), np.nan)
    for i, tile in enumerate(tiles):
        strip[:, i * (p + 1) : i * (p + 1) + p] = tile
    fig = {"data": [_image_trace(strip, vmax)]}
    frames = [  # a frame around each patch, so white patches show too
        {"type": "rect", "x0": i * (p + 1) - 0.5, "x1": i * (p + 1) - 0.5 + p, "y0": -0.5,
         "y1": p - 0.5, "line": {"color": "#C2185B", "width": 1}}
        for i in range(n)
    ]  # fmt: skip
    centres = [i * (p + 1) + (p - 1) / 2 for i in range(n)]
    return apply_layout(
        fig, _("the patches as a row of tokens") if title is None else title, 190, shapes=frames,
        xaxis={"tickmode": "array", "tickvals": centres, "ticktext": [escape(x) for x in labels],
               "tickangle": -45, "showgrid": False, "zeroline": False},
        yaxis={"visible": False, "range": [p - 0.5, -0.5], "scaleanchor": "x"},
    )  # fmt: skip


def position_similarity_grid(
    cosine: npt.ArrayLike, grid: int, title: str | None = None
) -> Figure:
    """For each patch position (r, c), a grid x grid map of its position embedding's cosine
    with every position's, placed at (r, c): a grid of maps. cosine: [grid², grid²]. The
    title defaults to "position embeddings: cosine similarity"."""
    cos = as_array(cosine, 2, "cosine")
    if cos.shape != (grid * grid, grid * grid):
        raise ValueError(f"cosine must be [{grid * grid}, {grid * grid}], not {cos.shape}")
    size = grid * (grid + 1) - 1
    mosaic = np.full((size, size), np.nan)
    for i in range(grid * grid):
        r, c = divmod(i, grid)
        mosaic[r * (grid + 1) : r * (grid + 1) + grid, c * (grid + 1) : c * (grid + 1) + grid] = (
            cos[i].reshape(grid, grid)
        )
    fig = {"data": [{
        "type": "heatmap", "z": mosaic, "zmin": -1.0, "zmax": 1.0, "colorscale": SIGNED_SCALE,
        "colorbar": {"title": {"text": _("cosine")}}, "hovertemplate": "%{z:.2f}<extra></extra>",
    }]}  # fmt: skip
    title = _("position embeddings: cosine similarity") if title is None else title
    fig = _square(fig, size, size, title, 520)
    ticks = [r * (grid + 1) + (grid - 1) / 2 for r in range(grid)]
    columns = [_("col {c}", c=c) for c in range(grid)]
    rows = [_("row {r}", r=r) for r in range(grid)]
    update_axes(fig["layout"], "x", tickmode="array", tickvals=ticks, ticktext=columns)
    update_axes(fig["layout"], "y", tickmode="array", tickvals=ticks, ticktext=rows)
    return fig


def attention_over_image(
    image: npt.ArrayLike, weights: npt.ArrayLike, title: str | None = None,
    vmax: float = 16.0,
) -> Figure:
    """The image in grey with a patch's attention weight [grid, grid] laid over it (each
    patch's weight covers its pixels); hover gives the weight of the patch. The title
    defaults to "[CLS] attention over the image"."""
    img = as_array(image, 2, "image")
    w = as_array(weights, 2, "weights")
    scale = img.shape[0] // w.shape[0]
    over = np.kron(w, np.ones((scale, scale)))
    rows, cols = np.indices(over.shape) // scale
    overlay = {
        "type": "heatmap", "z": over, "zmin": 0.0, "zmax": max(float(w.max()), 1e-9),
        "colorscale": HEAT, "colorbar": {"title": {"text": _("weight")}},
        "customdata": np.dstack([rows, cols]),
        "hovertemplate": _("patch %{customdata[0]},%{customdata[1]}: %{z:.3f}"
                           "<extra>attention</extra>"),
    }  # fmt: skip
    fig = {"data": [_image_trace(img, vmax), overlay]}
    title = _("[CLS] attention over the image") if title is None else title
    return _square(fig, img.shape[0], img.shape[1], title, 360)
