"""The training corpus: WordNet's glosses plus a small seeded grammar of the lecture's topics.

Two sources, one sentence per line:

- WordNet 3.0 (Debian's `wordnet-base`): every synset's definitions ("a slope beside a body
  of water.") and example sentences ("they pulled the canoe up on the bank").
- A seeded random grammar over the lecture's vocabulary (training/grammar.py, its tables in
  training/grammar.json): river banks and money banks, researchers and their experiments,
  doors, dogs biting men and men biting dogs, cats on mats, schools, materials, programming
  languages and industrial AI.

The lecture's own sentences (PROBES) are what the app shows the models doing; they are never
training data: any corpus sentence whose normalized form contains a probe is dropped.

    python -m training.data [--out DIR] [--vocab-size N] [--wordnet DIR]

writes {train,valid,test}.txt.gz, tokenizer.json, README.md and LICENSE-WordNet.txt into
assets/data/ (or DIR).
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from model.examples import PROBES
from training.grammar import grammar_sentences
from training.probes import contains_probe, normalize
from training.tokenizer import VOCAB_SIZE, train_tokenizer

DATA_DIR = Path(__file__).resolve().parent.parent / "assets" / "data"
WORDNET_ROOT = "/usr/share/wordnet"
WORDNET_COPYRIGHT = "/usr/share/doc/wordnet-base/copyright"
GRAMMAR_N = 60_000  # how many unique grammar sentences the shipped corpus asks for
GRAMMAR_SEED = 0
SPLITS = ("train", "valid", "test")
HELD_OUT = 0.05  # the share of the corpus in each of valid and test

# --- Normalization and the probe rule ----------------------------------------------------


# --- WordNet ---------------------------------------------------------------------------


WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
_JUNK = re.compile(r"[_<>{}|\\@#*=\[\]]")
_EXAMPLE = re.compile(r'"([^"]*)"')


def _split_gloss(gloss: str) -> list[str]:
    """Split a gloss on the semicolons that are outside double quotes."""
    parts, current, quoted = [], [], False
    for ch in gloss:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _clean(text: str) -> str | None:
    """Tidy one definition or example; None when it is junk or outside 3..40 words."""
    text = " ".join(text.replace("`", "'").split()).strip(" ,")
    if not text or _JUNK.search(text) or '"' in text:
        return None
    if text.count("(") != text.count(")") or not re.search(r"[A-Za-z]{2}", text):
        return None
    if not 3 <= len(text.split()) <= 40:
        return None
    return text


def _wordnet_items(root: str | Path = WORDNET_ROOT) -> list[tuple[str, str]]:
    """(sentence, "definition" | "example") for every usable gloss part, in file order."""
    items: list[tuple[str, str]] = []
    for name in WORDNET_FILES:
        with open(Path(root) / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue  # the licence header, or a synset without a gloss
                for part in _split_gloss(line.split(" | ", 1)[1]):
                    if part.startswith('"'):
                        for example in _EXAMPLE.findall(part):
                            if text := _clean(example):
                                items.append((text, "example"))
                    elif text := _clean(part.rstrip(".:")):
                        items.append((text[0].upper() + text[1:] + ".", "definition"))
    return items


def wordnet_sentences(root: str | Path = WORDNET_ROOT) -> list[str]:
    """WordNet's definitions (capitalised, with a full stop) and example sentences."""
    return [text for text, _ in _wordnet_items(root)]


# --- The corpus ------------------------------------------------------------------------


def _sources(seed: int = 0, wordnet_root: str | Path = WORDNET_ROOT) -> list[tuple[str, str]]:
    """Every corpus sentence with its source, deduplicated, probe-filtered and shuffled."""
    items = _wordnet_items(wordnet_root)
    items += [(s, "grammar") for s in grammar_sentences(GRAMMAR_N, GRAMMAR_SEED + seed)]
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    for text, source in items:
        key = normalize(text)
        if key and key not in seen and not contains_probe(text):
            seen.add(key)
            kept.append((text, source))
    random.Random(seed).shuffle(kept)
    return kept


def _split(items: list, frac: float = HELD_OUT) -> dict[str, list]:
    """The first ~90% for train, then ~5% valid and ~5% test."""
    n_held = round(len(items) * frac)
    n_train = len(items) - 2 * n_held
    return {
        "train": items[:n_train],
        "valid": items[n_train : n_train + n_held],
        "test": items[n_train + n_held :],
    }


def build_corpus(seed: int = 0, wordnet_root: str | Path = WORDNET_ROOT) -> dict[str, list[str]]:
    """WordNet + grammar sentences split ~90/5/5 into "train", "valid" and "test"; no two
    splits share a sentence (after normalization) and none holds a probe."""
    parts = _split(_sources(seed, wordnet_root))
    return {name: [text for text, _ in part] for name, part in parts.items()}


def load_split(name: str) -> list[str]:
    """The sentences of a shipped split ("train", "valid" or "test")."""
    with gzip.open(DATA_DIR / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


# --- python -m training.data --------------------------------------------------------------


def _write_gz(path: Path, lines: Iterable[str]) -> None:
    """One line per sentence, gzip with a fixed header so the bytes are reproducible."""
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f,
    ):
        f.write("".join(line + "\n" for line in lines).encode("utf-8"))


def _wordnet_licence(path: str | Path = WORDNET_COPYRIGHT) -> str:
    """WordNet's licence as Debian ships it (its `Files: *` stanza)."""
    text = Path(path).read_text(encoding="utf-8")
    stanza = text.split("\nFiles: *\n", 1)[-1].split("\nFiles: debian/*", 1)[0]
    return (
        "The WordNet sentences in train.txt.gz, valid.txt.gz and test.txt.gz are taken from\n"
        "WordNet 3.0 (Princeton University), as packaged by Debian (wordnet-base). Its\n"
        f"licence, copied from {path}:\n\nFiles: *\n{stanza.rstrip()}\n"
    )


def _readme(counts: dict[str, Counter], vocab_size: int) -> str:
    """assets/data/README.md: what the corpus is, where it came from, and how big."""
    sources = ("definition", "example", "grammar")
    rows = "\n".join(
        f"| {name} | {sum(c.values()):,} | " + " | ".join(f"{c[s]:,}" for s in sources) + " |"
        for name, c in counts.items()
    )
    total = sum(counts.values(), Counter())
    rows += (
        f"\n| all | {sum(total.values()):,} | "
        + " | ".join(f"{total[s]:,}" for s in sources)
        + " |"
    )
    probes = "\n".join(f"- {p}" for p in PROBES)
    return f"""# Training corpus

Made by `python -m training.data` (see `training/data.py`; `--help` lists its options).
The sentences are the same on every run for a given WordNet; a retrained tokenizer can differ
in a piece or two, because the `tokenizers` trainer breaks some ties differently each run.

- `train.txt.gz`, `valid.txt.gz`, `test.txt.gz`: one sentence per line, gzip.
- `tokenizer.json`: the WordPiece tokenizer ({vocab_size:,} entries, special tokens
  `[PAD] [UNK] [BOS] [EOS] [MASK]` = ids 0..4), trained on `train.txt.gz` only.
- `LICENSE-WordNet.txt`: WordNet's licence.

## Sources

- **WordNet 3.0** (Princeton University; Debian package `wordnet-base`): the gloss of every
  synset in `data.noun`, `data.verb`, `data.adj` and `data.adv`, cut at its semicolons into
  definitions (given a capital letter and a full stop) and quoted example sentences; only
  parts of 3 to 40 words, without markup, are kept.
- **Grammar**: {GRAMMAR_N:,} unique sentences (seed {GRAMMAR_SEED}) from a small random grammar,
  `training/grammar.py` with its tables in `training/grammar.json`, over the lecture's
  topics: rivers and river banks, money banks, a researcher and an assistant running
  experiments, doors, dogs and men (in both directions), cats on mats, schools, materials,
  programming languages and industrial AI, with pronouns and subordinate clauses.

Sentences are deduplicated by their normalized form (lowercase, punctuation removed,
whitespace collapsed), shuffled with a fixed seed and split about 90/5/5; the splits share
no sentence.

| split | sentences | WordNet definitions | WordNet examples | grammar |
|---|---:|---:|---:|---:|
{rows}

## The probe rule

The app demonstrates the models on the lecture's own sentences, so those are never training
data: a sentence is dropped when its normalized form equals or contains the normalized form
of any of these probes:

{probes}

## Licence

The WordNet sentences are derived from WordNet 3.0, Copyright 2006 by Princeton University,
used under the WordNet 3.0 licence (`LICENSE-WordNet.txt`, which must accompany every copy).
The grammar sentences are this project's own.
"""


def missing_wordnet(root: str | Path = WORDNET_ROOT) -> str | None:
    """One line saying how to install WordNet when its files are missing, else None."""
    hint = "install it with `sudo apt-get install wordnet-base`"
    if not all((Path(root) / name).is_file() for name in WORDNET_FILES):
        return f"WordNet 3.0 not found in {root}: {hint}"
    if not Path(WORDNET_COPYRIGHT).is_file():
        return f"WordNet's licence not found at {WORDNET_COPYRIGHT}: {hint}"
    return None


def build(out: Path, vocab_size: int, wordnet_root: str | Path = WORDNET_ROOT) -> None:
    """Write the corpus, the tokenizer, the licence and the README into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    splits = _split(_sources(0, wordnet_root))
    counts: dict[str, Counter] = {}
    for name, items in splits.items():
        _write_gz(out / f"{name}.txt.gz", (text for text, _ in items))
        counts[name] = Counter(source for _, source in items)
        print(
            f"{name:>5}: {len(items):7,} sentences  "
            + "  ".join(f"{s}={c:,}" for s, c in sorted(counts[name].items()))
        )
    (out / "LICENSE-WordNet.txt").write_text(_wordnet_licence(), encoding="utf-8")

    tokenizer = train_tokenizer((text for text, _ in splits["train"]), vocab_size)
    tokenizer.save(str(out / "tokenizer.json"))
    print(f"tokenizer: {tokenizer.get_vocab_size():,} entries -> {out / 'tokenizer.json'}")
    (out / "README.md").write_text(_readme(counts, tokenizer.get_vocab_size()), encoding="utf-8")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line of `python -m training.data`."""
    parser = argparse.ArgumentParser(
        prog="python -m training.data",
        description="Build the training corpus (WordNet 3.0 glosses plus the sentences of "
        "training/grammar.json), split it 90/5/5 and train the WordPiece tokenizer on the "
        "training split.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DATA_DIR,
        metavar="DIR",
        help="where to write {train,valid,test}.txt.gz, tokenizer.json, README.md and "
        "LICENSE-WordNet.txt (default: assets/data)",
    )
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=VOCAB_SIZE,
        metavar="N",
        help="tokenizer entries, special tokens included (default: %(default)s)",
    )
    parser.add_argument(
        "--wordnet",
        default=WORDNET_ROOT,
        metavar="DIR",
        help="WordNet 3.0's dictionary folder (default: %(default)s)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Check that WordNet is there, then build; 2 (with one line on stderr) when it is not."""
    args = _parse_args(argv)
    if problem := missing_wordnet(args.wordnet):
        print(problem, file=sys.stderr)
        return 2
    build(args.out, args.vocab_size, args.wordnet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
