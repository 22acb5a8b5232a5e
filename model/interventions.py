"""Experiments as options of the forward pass (torch): model.RunOptions turned into the
tensors a pass reads (`Edits`), and attribution by gradients.

    edits = edits_of([RunOptions(ablate=[(0, 1)]), RunOptions(ablate=[(0, 2)])], "", 4, 4, "cpu")
    # one batched pass of two rows: row 0 without layer 0's head 1, row 1 without its head 2

Gradient x input and integrated gradients (Sundararajan et al., 2017) are written here
with torch: a few lines, no extra package. Both score each input token's embedding for
one output (the log-probability of a token at a position).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from model.options import RunOptions
from model.transformer import Edits, Record

RECORDED = {  # where each patch site's activation is in a LayerRecord
    "resid_pre": lambda layer: layer.resid_pre,
    "attn_out": lambda layer: layer.self_attn.attn_out,
    "mlp_out": lambda layer: layer.mlp_out,
}
BATCH = 64  # rows of one batched pass at most (more runs: several passes)


def same_settings(runs: Sequence[RunOptions]) -> RunOptions:
    """The first of `runs`, once every row agrees on what one batch must share (positions,
    the kind of ablation, the patch's source and site)."""
    first = runs[0]
    for run in runs:
        if run.positions != first.positions or (run.knocks and run.ablation != first.ablation):
            raise ValueError("one batched pass needs the same positions and ablation in every row")
        if run.patch is not None and first.patch is not None and (
            (run.patch.source, run.patch.site) != (first.patch.source, first.patch.site)
        ):
            raise ValueError("one batched pass patches from one source at one site")
    return first


Source = Callable[[str, int], Tensor]  # (site, layer) -> the source run's activation (1, T, D)


def recorded(record: Record) -> Source:
    """A record's activations by (site, layer): what a patch copies."""
    return lambda site, layer: RECORDED[site](record.layers[layer])


def edits_of(
    runs: Sequence[RunOptions],
    stack: str,
    n_heads: int,
    device: torch.device | str,
    source: Source | None = None,
    cross: str | None = None,
    d_mlp: int = 0,
) -> Edits:
    """The Edits of one batched pass through `stack` ("" for a model with one stack,
    "encoder", "decoder"): row b knocks out runs[b]'s heads of that stack (and of `cross`,
    the decoder's cross-attention), MLPs of that stack and neurons (of `d_mlp` a layer; one
    stack only), and patches runs[b]'s (layer, position)s with `source`'s activations."""
    first = same_settings(runs)
    mean = any(run.knocks for run in runs) and first.ablation == "mean"
    edits = Edits(positions=first.positions, mean=mean)
    b = len(runs)
    for row, run in enumerate(runs):
        for layer, neurons in (run.knocked_neurons().items() if stack == "" else ()):
            mask = edits.knocked_neurons.setdefault(
                layer, torch.zeros(b, d_mlp, dtype=torch.bool, device=device)
            )
            mask[row, list(neurons)] = True
        for layer in run.knocked_mlps(stack):
            rows = edits.knocked_mlp.setdefault(
                layer, torch.zeros(b, dtype=torch.bool, device=device)
            )
            rows[row] = True
        for name, table in ((stack, edits.knocked), (cross, edits.knocked_cross)):
            for layer, heads in (run.knocked(name).items() if name is not None else ()):
                mask = table.setdefault(
                    layer, torch.zeros(b, n_heads, dtype=torch.bool, device=device)
                )
                mask[row, list(heads)] = True
        if run.patch is None or source is None:
            continue
        for layer, position in run.patch.at:
            key = (run.patch.site, layer)
            if key not in edits.patches:
                values = source(run.patch.site, layer)  # (1, T, D)
                where = torch.zeros(b, values.shape[1], dtype=torch.bool, device=device)
                edits.patches[key] = (where, values)
            edits.patches[key][0][row, position] = True
    return edits


def chunks(runs: Sequence[RunOptions], size: int = BATCH) -> list[Sequence[RunOptions]]:
    """`runs` cut into batches of at most `size` rows."""
    return [runs[i : i + size] for i in range(0, len(runs), size)]


# --- attribution --------------------------------------------------------------------------


Output = Callable[[Tensor], Tensor]  # embeddings (B, T, D) -> one number per row (B,)


def gradient_x_input(output: Output, x: Tensor) -> tuple[Tensor, float]:
    """Each token's embedding x (T, D) times the output's gradient there, summed over D:
    scores (T,), and the output."""
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        value = output(x[None])[0]
        (grad,) = torch.autograd.grad(value, x)
    return (grad * x).sum(-1).detach(), float(value.detach())


def integrated_gradients(
    output: Output, x: Tensor, baseline: Tensor, steps: int = 64, batch: int = 32
) -> tuple[Tensor, float, float]:
    """Integrated gradients of the output from `baseline` to x (both (T, D)): each token's
    (x - baseline) times the output's gradient averaged along the straight path between
    them (the midpoint rule, `steps` points, `batch` at a time). Returns the scores (T,),
    the output at x and at the baseline; the scores sum to their difference (completeness)
    up to the rule's error."""
    x, baseline = x.detach(), baseline.detach()
    total = torch.zeros_like(x)
    alphas = (torch.arange(steps, dtype=x.dtype, device=x.device) + 0.5) / steps
    with torch.enable_grad():
        for start in range(0, steps, batch):
            a = alphas[start : start + batch, None, None]  # (b, 1, 1)
            path = (baseline + a * (x - baseline)).requires_grad_(True)  # (b, T, D)
            (grad,) = torch.autograd.grad(output(path).sum(), path)
            total += grad.sum(0)
        ends = output(torch.stack([x, baseline])).detach()
    scores = ((x - baseline) * total / steps).sum(-1)
    return scores.detach(), float(ends[0]), float(ends[1])
