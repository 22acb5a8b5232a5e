"""Train and evaluate the Vision Transformer on scikit-learn's digits (model/vit.py).

    python -m training.vit train [--minutes M] [--epochs N] [--out DIR]
    python -m training.vit evaluate [--model DIR] [--out FILE]

The data: `sklearn.datasets.load_digits`, 1797 images of 8x8 pixels, 0-16, read from a file
inside scikit-learn (nothing is downloaded). The split is fixed: 20% test (360 images,
stratified, random_state 0); 10% of the rest is the validation set (stratified, seeded),
which picks the epoch to keep (early stopping) and the baselines' settings. The test set is
only read by `evaluate`.

train: AdamW, linear warmup then cosine decay, light augmentation (each image shifted by at
most one pixel in each direction), an exponential moving average of the weights (EMA),
early stopping on validation accuracy (then loss), keeping the best weights; writes the
checkpoint and training.json.
evaluate: test accuracy and confusion matrix of the ViT, of logistic regression and of a
small MLP (both scikit-learn, trained on the same training images), and the misclassified
test images.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from model.registry import MODELS_DIR, pick_device
from model.vit import VisionConfig, VisionModel, VisionTransformer, digits_split, save_vit

DEFAULT_OUT = MODELS_DIR / "vit"
DEFAULT_REPORT = MODELS_DIR / "vit_evaluation.json"
SEED = 0
VALID_FRACTION = 0.1


# ---------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------


@dataclass
class Digits:
    """The fixed split. Images (N, 8, 8) float, 0-16; labels (N,) int."""

    train_x: np.ndarray
    train_y: np.ndarray
    valid_x: np.ndarray
    valid_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray


def load_digits_split(seed: int = SEED) -> Digits:
    """Train / validation / test: test as `train_test_split(X, y, test_size=0.2,
    random_state=0, stratify=y)`; validation, 10% of the training part (seeded)."""
    from sklearn.model_selection import train_test_split

    rest_x, rest_y, test_x, test_y = digits_split()
    train_x, valid_x, train_y, valid_y = train_test_split(
        rest_x, rest_y, test_size=VALID_FRACTION, random_state=seed, stratify=rest_y
    )
    return Digits(train_x, train_y, valid_x, valid_y, test_x, test_y)


def shift(images: Tensor, gen: torch.Generator) -> Tensor:
    """Each image (B, S, S) moved by -1, 0 or +1 pixel down and right (zeros come in)."""
    b, s, _ = images.shape
    padded = F.pad(images, (1, 1, 1, 1))  # (B, S + 2, S + 2)
    dy, dx = torch.randint(0, 3, (2, b), generator=gen)
    rows = (dy[:, None] + torch.arange(s))[:, :, None]  # (B, S, 1)
    cols = (dx[:, None] + torch.arange(s))[:, None, :]  # (B, 1, S)
    return padded[torch.arange(b)[:, None, None], rows, cols]


# ---------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------


@torch.no_grad()
def loss_and_accuracy(module: VisionTransformer, x: Tensor, y: Tensor) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of the [CLS] prediction (module in eval mode)."""
    module.eval()
    logits = module(x)[0][:, 0]  # (N, 10)
    module.train()
    return float(F.cross_entropy(logits, y)), float((logits.argmax(-1) == y).float().mean())


def train(
    cfg: VisionConfig | None = None,
    epochs: int = 200,
    minutes: float | None = None,
    batch_size: int = 64,
    lr: float = 2e-3,
    weight_decay: float = 0.05,
    warmup: int = 10,
    patience: int = 60,
    ema: float | None = 0.998,
    label_smoothing: float = 0.0,
    seed: int = SEED,
    device: str | None = None,
    out: str | Path | None = None,
    data: Digits | None = None,
    progress: bool = True,
) -> tuple[VisionTransformer, dict]:
    """Train until `epochs` or `minutes` run out, or `patience` epochs pass without a better
    validation score; keep (and save to `out`) the best epoch's weights. With `ema`, those
    are an exponential moving average of the weights (decay `ema` per step), which smooths
    out the last steps' noise; it is also what the validation set judges."""
    torch.manual_seed(seed)
    dev = pick_device(device)
    cfg = cfg or VisionConfig()
    data = data or load_digits_split(seed)
    module = VisionTransformer(cfg).to(dev).train()
    train_x, train_y = torch.tensor(data.train_x), torch.tensor(data.train_y)
    valid_x, valid_y = (
        torch.tensor(data.valid_x, device=dev),
        torch.tensor(data.valid_y, device=dev),
    )
    opt = torch.optim.AdamW(module.parameters(), lr=lr, weight_decay=weight_decay)
    average = AveragedModel(module, multi_avg_fn=get_ema_multi_avg_fn(ema)) if ema else None
    judged = average.module if average is not None else module  # what validation scores
    gen = torch.Generator().manual_seed(seed)
    budget = minutes * 60 if minutes is not None else math.inf
    start, step, history = time.time(), 0, []
    steps_per_epoch = math.ceil(len(train_x) / batch_size)

    def progress_of(step: int) -> float:
        """How much of the budget (epochs or minutes, whichever runs out first) is spent."""
        return max(step / steps_per_epoch / epochs, (time.time() - start) / budget)

    best = {"score": (-1.0, 0.0), "epoch": 0, "state": None}
    for epoch in range(1, epochs + 1):
        if progress_of(step) >= 1 or epoch - best["epoch"] > patience:
            break
        order = torch.randperm(len(train_x), generator=gen)
        losses = []
        for first in range(0, len(order), batch_size):
            idx = order[first : first + batch_size]
            x, y = shift(train_x[idx], gen).to(dev), train_y[idx].to(dev)
            # warm up linearly over `warmup` epochs, then decay on a cosine over the budget
            ramp = min(1.0, (step + 1) / steps_per_epoch / warmup)
            cosine = 0.5 * (1 + math.cos(math.pi * min(progress_of(step), 1.0)))
            for group in opt.param_groups:
                group["lr"] = lr * ramp * cosine
            loss = F.cross_entropy(module(x)[0][:, 0], y, label_smoothing=label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            opt.step()
            if average is not None:
                average.update_parameters(module)
            step += 1
            losses.append(loss.item())
        valid_loss, valid_acc = loss_and_accuracy(judged, valid_x, valid_y)
        history.append(
            {
                "epoch": epoch,
                "train_loss": round(float(np.mean(losses)), 4),
                "valid_loss": round(valid_loss, 4),
                "valid_accuracy": round(valid_acc, 4),
            }
        )
        if (valid_acc, -valid_loss) > best["score"]:
            best = {
                "score": (valid_acc, -valid_loss),
                "epoch": epoch,
                "state": copy.deepcopy(judged.state_dict()),
            }
        if progress and epoch % 10 == 0:
            print(f"epoch {epoch}: {history[-1]}, best epoch {best['epoch']}", file=sys.stderr)
    module.load_state_dict(best["state"])
    module.eval()
    facts = {
        "kind": "vision",
        "steps": step,
        "epochs": len(history),
        "seconds": round(time.time() - start, 1),
        "device": str(dev),
        "threads": torch.get_num_threads(),
        "best_epoch": best["epoch"],
        "best_valid_accuracy": round(best["score"][0], 4),
        "best_valid_loss": round(-best["score"][1], 4),
        "batch_size": batch_size,
        "lr": lr,
        "weight_decay": weight_decay,
        "warmup_epochs": warmup,
        "patience": patience,
        "ema": ema,
        "label_smoothing": label_smoothing,
        "augmentation": "random shift by -1, 0 or +1 pixel in each direction",
        "seed": seed,
        "split": {
            "train": len(data.train_x),
            "valid": len(data.valid_x),
            "test": len(data.test_x),
        },
        "parameters": sum(p.numel() for p in module.parameters()),
        "config": asdict(cfg),
        "history": history,
    }
    if out is not None:
        save_vit(module.cpu(), out, facts)
    return module, facts


# ---------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------


def scores(predicted: np.ndarray, truth: np.ndarray) -> dict:
    """Accuracy, the 10x10 confusion matrix (rows: true digit, columns: predicted) and the
    misclassified test images (index into the test split, true digit, predicted digit)."""
    confusion = np.zeros((10, 10), dtype=int)
    np.add.at(confusion, (truth, predicted), 1)
    wrong = np.flatnonzero(predicted != truth)
    return {
        "accuracy": round(float((predicted == truth).mean()), 4),
        "errors": int(len(wrong)),
        "confusion": confusion.tolist(),
        "misclassified": {  # column by column: test index, true digit, predicted digit
            "index": wrong.tolist(),
            "true": truth[wrong].tolist(),
            "predicted": predicted[wrong].tolist(),
        },
    }


def baselines(data: Digits) -> dict[str, tuple[object, dict]]:
    """Logistic regression and an MLP (scikit-learn) on the ViT's training images, each with
    its regularization picked on the validation set: name -> (fitted model, settings)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    def flat(x: np.ndarray) -> np.ndarray:
        return x.reshape(len(x), -1) / 16.0

    candidates = {
        "logistic_regression": [
            ({"C": c}, lambda c=c: LogisticRegression(C=c, max_iter=5000))
            for c in (0.1, 0.3, 1.0, 3.0, 10.0)
        ],
        "mlp": [
            (
                {"hidden": 256, "alpha": a},
                lambda a=a: MLPClassifier((256,), alpha=a, max_iter=1000, random_state=SEED),
            )
            for a in (1e-4, 1e-3, 1e-2, 1e-1)
        ],
    }
    fitted = {}
    for name, options in candidates.items():
        best = None
        for settings, make in options:
            clf = make().fit(flat(data.train_x), data.train_y)
            acc = float(clf.score(flat(data.valid_x), data.valid_y))
            if best is None or acc > best[2]:
                best = (clf, settings, acc)
        clf, settings, acc = best
        fitted[name] = (clf, {**settings, "valid_accuracy": round(acc, 4)})
    return fitted


def evaluate(folder: str | Path = DEFAULT_OUT, device: str = "cpu") -> dict:
    """The report: the ViT in `folder` against the baselines, on the test split."""
    start = time.time()
    data = load_digits_split()
    vit = VisionModel.from_folder(folder, Path(folder).name, device)
    vit_pred = vit.probabilities(data.test_x).argmax(-1)
    report: dict = {
        "data": "sklearn.datasets.load_digits; test: train_test_split(test_size=0.2, "
        "random_state=0, stratify=y); validation: 10% of the rest",
        "test_images": len(data.test_x),
        "models": {"vit": {"folder": Path(folder).name, **scores(vit_pred, data.test_y)}},
    }
    for name, (clf, settings) in baselines(data).items():
        pred = clf.predict(data.test_x.reshape(len(data.test_x), -1) / 16.0)
        report["models"][name] = {"settings": settings, **scores(pred, data.test_y)}
    report["seconds"] = round(time.time() - start, 1)
    return report


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m training.vit", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    t = commands.add_parser("train", help="train the ViT, keep the best validation epoch")
    t.add_argument("--minutes", type=float, default=None, help="time budget (default: none)")
    t.add_argument("--epochs", type=int, default=200, help="epoch budget (default: 200)")
    t.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT}")
    t.add_argument("--d-model", type=int, default=VisionConfig.d_model)
    t.add_argument("--layers", type=int, default=VisionConfig.n_layers)
    t.add_argument("--heads", type=int, default=VisionConfig.n_heads)
    t.add_argument("--norm", choices=["pre", "post"], default=VisionConfig.norm)
    t.add_argument("--dropout", type=float, default=VisionConfig.dropout)
    t.add_argument("--lr", type=float, default=2e-3)
    t.add_argument("--ema", type=float, default=0.998, help="EMA decay per step (0: off)")
    t.add_argument("--seed", type=int, default=SEED)
    t.add_argument("--device", default=None, help="cpu | cuda (default: auto)")
    e = commands.add_parser("evaluate", help="test accuracy of the ViT and the baselines")
    e.add_argument("--model", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT}")
    e.add_argument("--out", type=Path, default=DEFAULT_REPORT, help=f"default: {DEFAULT_REPORT}")
    e.add_argument("--device", default="cpu")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.command == "train":
        cfg = VisionConfig(
            d_model=args.d_model,
            n_layers=args.layers,
            n_heads=args.heads,
            d_mlp=2 * args.d_model,
            norm=args.norm,
            dropout=args.dropout,
        )
        _, facts = train(
            cfg,
            args.epochs,
            args.minutes,
            lr=args.lr,
            ema=args.ema or None,
            seed=args.seed,
            device=args.device,
            out=args.out,
        )
        print(json.dumps({k: v for k, v in facts.items() if k != "history"}, indent=2))
        print(f"saved to {args.out}")
    else:
        from training.evaluate import compact_json  # the other report's layout

        report = evaluate(args.model, args.device)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(compact_json(report) + "\n")
        summary = {name: m["accuracy"] for name, m in report["models"].items()}
        print(f"test accuracy: {summary}; wrote {args.out}")


if __name__ == "__main__":
    main()
