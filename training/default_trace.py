"""Write the trace the app's first page draws before PyTorch has loaded.

    python -m training.default_trace [--out assets/default_trace.npz]

The app opens on the default sentence (model.examples.DEFAULT_SENTENCE) and the first
model of the catalogue. Its trace on the CPU is computed here, ahead of time, and shipped
(numpy .npz, no pickle) with the SHA-256 of the checkpoint it came from, together with each
of its tokens' NEIGHBOURS nearest vocabulary tokens (the first page's neighbour map needs
the embedding table, and so PyTorch, otherwise). The app uses them only while that
checkpoint is unchanged (ui/cache.py `shipped_trace`, `shipped_neighbours`), and
tests/test_default_trace.py checks they equal fresh ones. Run this again whenever the
shipped models change.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

import model
from model.examples import DEFAULT_SENTENCE
from model.trace import save_npz

OUT = model.MODELS_DIR.parent / "default_trace.npz"
NEIGHBOURS = 20  # the most the tokens page's "Neighbours" slider asks for


def checkpoint_sha(name: str) -> str:
    """SHA-256 of a shipped model's weights file (what the trace depends on)."""
    return hashlib.sha256((model.MODELS_DIR / name / "model.safetensors").read_bytes()).hexdigest()


def write(out: Path = OUT) -> Path:
    """Trace the default sentence through the first shipped model on the CPU; save it."""
    name = next(iter(model.catalogue()))
    m = model.load(name, "cpu")
    m.trace(m.example)  # warm up, so that the recorded time is the pass, not start-up
    trace = m.trace(DEFAULT_SENTENCE)
    meta = {"sentence": DEFAULT_SENTENCE, "model": name, "sha256": checkpoint_sha(name)}
    save_npz(trace, out, neighbours(m, trace.ids), notes="\n".join(m.notes), **meta)
    return out


def neighbours(m: model.Model, ids: np.ndarray) -> dict[str, np.ndarray]:
    """For each token id: its NEIGHBOURS nearest tokens (names, cosines, embeddings)."""
    rows = [m.neighbours(int(i), NEIGHBOURS) for i in ids]
    return {
        "near_of": np.asarray(ids, dtype=np.int64),
        "near_tokens": np.asarray([[t for t, _ in near] for near, _ in rows], dtype=str),
        "near_cosines": np.asarray([[c for _, c in near] for near, _ in rows], dtype=np.float64),
        "near_vectors": np.stack([vectors for _, vectors in rows]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT}")
    args = parser.parse_args()
    print(f"wrote {write(args.out)}")


if __name__ == "__main__":
    main()
