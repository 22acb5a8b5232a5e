"""Train a model: `python -m training.train mlm|clm [--minutes M] [--steps N] [--out DIR]`.

mlm: an encoder (BERT-style). 15% of the tokens are chosen; of those 80% become [MASK],
     10% a random token, 10% stay; the model predicts the original token at each.
clm: a decoder (GPT-style). Causal attention; every position predicts the next token.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from torch import Tensor, nn
from tqdm import tqdm

from model.checkpoint import TRAINING, load_checkpoint, load_config, save_checkpoint
from model.fit import IGNORE, Budget, Fit, run_steps, token_loss
from model.masking import bert_masking
from model.registry import MODELS_DIR, pick_device
from model.tokenizer import BOS_ID, EOS_ID, MASK_ID, PAD_ID, SPECIAL_TOKENS, load_tokenizer
from model.transformer import Config, build
from training.data import load_split

TOKENIZER_PATH = Path(__file__).resolve().parent.parent / "assets" / "data" / "tokenizer.json"
KINDS = {"mlm": "encoder", "clm": "decoder"}


def tokenize(lines: list[str], tokenizer: Tokenizer, kind: str, max_len: int) -> list[list[int]]:
    """Each line as ids: [BOS] text [EOS], cut to max_len (the decoder keeps [EOS] as target)."""
    out = []
    for enc in tokenizer.encode_batch(lines, add_special_tokens=False):
        if enc.ids:
            out.append([BOS_ID, *enc.ids[: max_len - 2], EOS_ID])
    return out


def batches(seqs: list[list[int]], batch_size: int, rng: random.Random):
    """Endless shuffled batches of similar lengths (little padding): (B, T) tensors."""
    while True:
        order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), rng.random()))
        chunks = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        rng.shuffle(chunks)
        for chunk in chunks:
            width = max(len(seqs[i]) for i in chunk)
            yield torch.tensor([seqs[i] + [PAD_ID] * (width - len(seqs[i])) for i in chunk])


def mask_tokens(ids: Tensor, vocab_size: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """BERT's recipe (model.masking) on a batch: 15% of the real tokens chosen; 80% ->
    [MASK], 10% random, 10% unchanged. Returns the inputs and the labels (IGNORE where not
    chosen)."""
    rng = np.random.default_rng(int(torch.randint(2**62, (), generator=gen)))
    ordinary = np.arange(len(SPECIAL_TOKENS), vocab_size)
    drawn = bert_masking(ids.numpy(), ids.numpy() >= len(SPECIAL_TOKENS), MASK_ID, ordinary, rng)
    chosen = torch.from_numpy(drawn.chosen)
    return torch.from_numpy(drawn.inputs), ids.masked_fill(~chosen, IGNORE)


def make_example(kind: str, ids: Tensor, vocab_size: int, gen: torch.Generator):
    """(inputs, labels) for one batch of ids."""
    if kind == "mlm":
        return mask_tokens(ids, vocab_size, gen)
    inputs, labels = ids[:, :-1], ids[:, 1:].clone()
    inputs = inputs.masked_fill(inputs == EOS_ID, PAD_ID)  # [EOS] is a target, not an input
    return inputs, labels.masked_fill(labels == PAD_ID, IGNORE)


@torch.no_grad()
def evaluate_loss(
    model: nn.Module, kind: str, seqs: list[list[int]], device: torch.device, seed: int = 1
) -> float:
    """Mean loss per predicted token over seqs (a fixed masking seed for mlm)."""
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    total, count = 0.0, 0
    for start in range(0, len(seqs), 128):
        chunk = seqs[start : start + 128]
        width = max(len(s) for s in chunk)
        ids = torch.tensor([s + [PAD_ID] * (width - len(s)) for s in chunk])
        inputs, labels = make_example(kind, ids, model.cfg.vocab_size, gen)
        n = int((labels != IGNORE).sum())
        total += float(token_loss(model, inputs.to(device), labels.to(device))) * n
        count += n
    model.train()
    return total / max(count, 1)


def _previous_training(init: str | Path | None) -> dict | None:
    """The training facts of the checkpoint a run continues from, without its config."""
    path = Path(init) / TRAINING if init else None
    if path is None or not path.is_file():
        return None
    return {k: v for k, v in json.loads(path.read_text()).items() if k != "config"}


def train(
    kind: str,
    train_lines: list[str],
    valid_lines: list[str],
    tokenizer: Tokenizer,
    cfg: Config | None = None,
    steps: int | None = None,
    minutes: float | None = None,
    batch_size: int = 64,
    lr: float = 1e-3,
    warmup: int = 300,
    seed: int = 0,
    device: str | None = None,
    out: str | Path | None = None,
    progress: bool = True,
    train_len: int = 64,
    init: str | Path | None = None,
) -> tuple[nn.Module, dict]:
    """Train until `steps` or `minutes` run out (whichever first); return model and facts."""
    if steps is None and minutes is None:
        raise ValueError("give steps or minutes")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    dev = pick_device(device)
    cfg = cfg or Config(kind=KINDS[kind], vocab_size=tokenizer.get_vocab_size())
    model = build(cfg)
    if init is not None:  # continue from a checkpoint (weights only; a fresh schedule)
        model.load_state_dict(load_checkpoint(init)[0].state_dict())
    model = model.to(dev).train()
    train_seqs = tokenize(train_lines, tokenizer, kind, train_len)
    valid_seqs = tokenize(valid_lines, tokenizer, kind, train_len)
    fit = Fit(model, lr, warmup=warmup, decay="cosine")
    gen, rng = torch.Generator().manual_seed(seed), random.Random(seed)
    budget = Budget(steps=steps, seconds=minutes * 60 if minutes is not None else None)
    examples = (
        make_example(kind, ids, cfg.vocab_size, gen) for ids in batches(train_seqs, batch_size, rng)
    )
    bar = tqdm(total=steps, disable=not progress, desc=f"train {kind}", unit="step")

    def report(fit: Fit, done: float) -> None:
        if fit.step_count % 50 == 0:
            bar.set_postfix(loss=f"{np.mean(fit.losses[-50:]):.3f}", done=f"{done:.0%}")
        bar.update(1)

    seconds = run_steps(fit, ((x.to(dev), y.to(dev)) for x, y in examples), budget, report)
    bar.close()
    step, history = fit.step_count, fit.losses
    model.eval()
    facts = {
        "kind": kind,
        "steps": step,
        "seconds": round(seconds, 1),
        "device": str(dev),
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "init": str(init) if init else None,
        "init_training": _previous_training(init),
        "train_sentences": len(train_seqs),
        "first_loss": history[0] if history else None,
        "final_train_loss": float(np.mean(history[-min(100, len(history) // 10 + 1) :]))
        if history
        else None,
        "valid_loss": evaluate_loss(model, kind, valid_seqs, dev) if valid_seqs else None,
        "parameters": sum(p.numel() for p in model.parameters()),
        "config": asdict(cfg),
    }
    if out is not None:
        save_checkpoint(model, cfg, tokenizer, out, facts)
    return model, facts


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training.train", description=__doc__.splitlines()[0]
    )
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("--minutes", type=float, default=None, help="time budget")
    parser.add_argument("--steps", type=int, default=None, help="step budget")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="cpu | cuda (default: auto)")
    parser.add_argument("--out", default=None, help="checkpoint folder (default: assets/models)")
    parser.add_argument("--init", default=None, help="start from this checkpoint's weights")
    parser.add_argument("--d-model", type=int, default=Config.d_model)
    parser.add_argument("--layers", type=int, default=Config.n_layers)
    parser.add_argument("--heads", type=int, default=Config.n_heads)
    parser.add_argument("--norm", choices=["post", "pre"], default=Config.norm)
    parser.add_argument("--positional", choices=["sinusoidal", "learned"], default="sinusoidal")
    args = parser.parse_args()
    if args.minutes is None and args.steps is None:
        args.minutes = 20.0
    tokenizer = load_tokenizer(TOKENIZER_PATH)
    cfg = Config(
        kind=KINDS[args.kind],
        vocab_size=tokenizer.get_vocab_size(),
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
        d_mlp=4 * args.d_model,
        norm=args.norm,
        positional=args.positional,
    )
    if args.init:  # the architecture comes from the checkpoint we continue
        cfg = load_config(args.init)
    out = Path(args.out) if args.out else MODELS_DIR / args.kind
    _, facts = train(
        args.kind,
        load_split("train"),
        load_split("valid"),
        tokenizer,
        cfg,
        steps=args.steps,
        minutes=args.minutes,
        batch_size=args.batch_size,
        lr=args.lr,
        seed=args.seed,
        device=args.device,
        out=out,
        init=args.init,
    )
    print(json.dumps({k: v for k, v in facts.items() if k != "config"}, indent=2))
    print(f"saved to {out}")


if __name__ == "__main__":
    main()
