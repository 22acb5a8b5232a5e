"""What the experiments find on the lecture's sentences (issue 29, section 4), measured and
written to assets/models/interventions.json:

    .venv/bin/python -m training.interventions [--out assets/models/interventions.json]

For the shipped encoder (mlm: "bank" behind [MASK]) and decoder (clm: the guess after "the
other" / "from the") on the river and the cash sentences:
- heads: the three whose knockout alone lowers log p(bank) most, and every head's effect;
- lens: every layer's rank of "bank" and the first readout from which it stays first;
- patch: the river sentence's activations written into the cash sentence's run, one layer
  and position at a time (each site), and the share of the logit difference between the two
  guesses each restores: the best cell, and the best away from the predicted position;
- attribution: integrated gradients' completeness and Spearman's correlation with each
  head's attention over the words.
The numbers come from the same contract calls and the same analysis the pages use; docs
and the lecture quote this file, never numbers typed in.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from analysis.interventions import (
    agreement,
    first_guess,
    head_name,
    layer_guesses,
    ranked_heads,
    restored,
    score,
    single_heads,
    two_guesses,
)
from analysis.tokens import word_positions
from model import CLEAN, MODELS_DIR, SITES, Patch, RunOptions, load
from model.examples import MONEY_BANK, RIVER_BANK

OUT = MODELS_DIR / "interventions.json"
PROMPTS = {  # the decoder reads up to the word before "bank"
    "river": RIVER_BANK.removesuffix(" bank."),
    "cash": MONEY_BANK.removesuffix(" bank."),
}
MASKED = {"river": RIVER_BANK.replace("bank.", "[MASK]."),
          "cash": MONEY_BANK.replace("bank.", "[MASK].")}  # fmt: skip


def question(m, sentence: str) -> tuple[list[int], int]:  # noqa: ANN001
    """The ids a model reads and the position whose guess is "bank"."""
    ids = m.encode(sentence).ids
    if m.kind == "encoder":
        return ids, ids.index(m.special_ids()["[MASK]"])
    return ids, len(ids) - 1


def heads_for_bank(m, ids: list[int], at: int, bank: int) -> dict:  # noqa: ANN001
    heads = single_heads(m.heads())
    runs = [CLEAN, *(RunOptions(ablate=[h[1:]]) for h in heads)]
    scores = score(m.log_probs(ids, runs, [at]), [bank])
    moved, clean = scores[1:] - scores[0], float(scores[0])
    top = ranked_heads(heads, moved, 3)
    return {
        "p_bank": float(np.exp(clean)),
        "top": [{"head": head_name(h), "log_p_change": float(e),
                 "p_after": float(np.exp(clean + e))} for h, e in top],  # fmt: skip
        "all": {head_name(h): float(e) for h, e in zip(heads, moved, strict=True)},
    }


def lens_of(m, ids: list[int], at: int, bank: int) -> dict:  # noqa: ANN001
    specials = list(m.special_ids().values())
    lens = m.logit_lens(ids, [at])[:, 0]
    g = layer_guesses(lens, [i for i in specials if i != bank])
    lp = lens.astype(np.float64).copy()
    lp[:, specials] = -np.inf
    ranks = (1 + (lp > lp[:, [bank]]).sum(axis=1)).tolist()
    first = next((n for n in range(len(ranks)) if all(r == 1 for r in ranks[n:])), None)
    return {"final_guess": m.tokens_of([g.final])[0], "bank_rank_by_readout": ranks,
            "bank_first_from_readout": first,  # 0: the input stream; n: after layer n
            "top3_by_readout": [[m.tokens_of([i])[0] for i, _ in top] for top in g.top]}


def patching(m, a: list[int], b: list[int], at: int) -> dict:  # noqa: ANN001
    specials = list(m.special_ids().values())
    lp_a = m.log_probs(a, [CLEAN], [at])[0, 0]
    n_layers = next(iter(m.heads().values()))[0]
    tokens_a, tokens_b = m.tokens_of(a), m.tokens_of(b)
    out: dict = {}
    for site in SITES:
        runs = [CLEAN, *(RunOptions(patch=Patch(tuple(a), ((layer, p),), site))
                         for layer in range(n_layers) for p in range(len(b)))]  # fmt: skip
        lp = m.log_probs(b, runs, [at])[:, 0]
        ga, gb = two_guesses(lp_a, lp[0], specials)
        share = restored(lp[1:, ga] - lp[1:, gb], lp_a[ga] - lp_a[gb], lp[0, ga] - lp[0, gb])
        share = share.reshape(n_layers, len(b))
        best = np.unravel_index(np.nanargmax(share), share.shape)
        away = share.copy()
        away[:, at] = np.nan
        best_away = np.unravel_index(np.nanargmax(away), away.shape)

        def cell(layer: int, p: int, table: np.ndarray = share) -> dict:
            return {"layer": layer + 1, "position": p, "token_b": tokens_b[p],
                    "token_a": tokens_a[p], "share": float(table[layer, p])}  # fmt: skip

        out[site] = {"guess_a": m.tokens_of([ga])[0], "guess_b": m.tokens_of([gb])[0],
                     "both_first": m.tokens_of([first_guess(lp_a, specials)])[0]
                     if first_guess(lp_a, specials) == first_guess(lp[0], specials) else None,
                     "best": cell(*map(int, best)), "best_away": cell(*map(int, best_away)),
                     "share": share.round(4).tolist()}  # fmt: skip
    return out


def attribution(m, ids: list[int], at: int, bank: int) -> dict:  # noqa: ANN001
    got = m.attribute(ids, at, bank)
    t = m.trace_ids(ids)
    words = [i for i in word_positions(t.tokens) if i != at]
    rhos = {f"L{n + 1}H{h + 1}": agreement(layer.attention[h, at], got.scores, words)
            for n, layer in enumerate(t.layers) for h in range(t.n_heads)}  # fmt: skip
    top = [t.tokens[i] for i in np.argsort(-np.abs(got.scores))[:3]]
    return {"sum_of_scores": float(got.scores.sum()), "output_change": got.value - got.baseline,
            "top_tokens": top, "spearman_by_head": rhos,
            "spearman_range": [float(np.nanmin(list(rhos.values()))),
                               float(np.nanmax(list(rhos.values())))]}  # fmt: skip


def measure() -> dict:
    report: dict = {"note": "python -m training.interventions; see the module's doc"}
    for name, sentences in (("mlm", MASKED), ("clm", PROMPTS)):
        m = load(name, "cpu")
        bank = m.vocabulary().index("bank")
        entry: dict = {"sentences": sentences}
        for which, text in sentences.items():
            ids, at = question(m, text)
            entry[which] = {"position": at, "tokens": m.tokens_of(ids),
                            "heads": heads_for_bank(m, ids, at, bank),
                            "lens": lens_of(m, ids, at, bank),
                            "attribution": attribution(m, ids, at, bank)}  # fmt: skip
        a, at_a = question(m, sentences["river"])
        b, at_b = question(m, sentences["cash"])
        entry["patch_river_into_cash"] = (
            patching(m, a, b, at_b) if len(a) == len(b) and at_a == at_b
            else {"skipped": f"{len(a)} and {len(b)} tokens"}
        )  # fmt: skip
        report[name] = entry
    return report


def summary(report: dict) -> str:
    """The report in a few lines of Markdown, for docs/MODELS.md (pasted from this output)."""
    lines = []
    for name, what in (("mlm", "behind [MASK]"), ("clm", "as the next token")):
        for which in ("river", "cash"):
            e = report[name][which]
            top = "; ".join(f"{t['head']} {t['log_p_change']:+.3f} (p {e['heads']['p_bank']:.2f} "
                            f"→ {t['p_after']:.2f})" for t in e["heads"]["top"])  # fmt: skip
            ranks = " → ".join(f"{r:,}" for r in e["lens"]["bank_rank_by_readout"])
            a = e["attribution"]
            lines.append(
                f"- {name}, {which} sentence, “bank” {what}: p(bank) {e['heads']['p_bank']:.3f}. "
                f"Heads whose knockout lowers it most: {top}. Lens rank of “bank”, input then "
                f"after each layer: {ranks} (first from readout "
                f"{e['lens']['bank_first_from_readout']}). Integrated gradients: scores sum "
                f"{a['sum_of_scores']:.3f}, output moved {a['output_change']:.3f}; largest "
                f"{', '.join(a['top_tokens'])}; Spearman with the heads' attention "
                f"{a['spearman_range'][0]:.2f} to {a['spearman_range'][1]:.2f}."
            )  # fmt: skip
        patch = report[name]["patch_river_into_cash"]
        for site, p in patch.items():
            share = np.array(p["share"])
            b, w = p["best"], p["best_away"]
            cols = [n for n, (x, y) in enumerate(zip(
                report[name]["river"]["tokens"], report[name]["cash"]["tokens"], strict=True))
                if x != y]  # fmt: skip
            changed = ", ".join(f"{report[name]['cash']['tokens'][n]} ← "
                                f"{report[name]['river']['tokens'][n]} "
                                f"{np.nanmax(share[:, n]):.0%}" for n in cols)  # fmt: skip
            lines.append(
                f"- {name}, river patched into cash, {site}: guesses followed "
                f"{p['guess_a']} (river) and {p['guess_b']} (cash)"
                f"{' (both first guess ' + p['both_first'] + ')' if p['both_first'] else ''}; "
                f"most restored: layer {b['layer']} at {b['token_b']} ← {b['token_a']} "
                f"{b['share']:.0%}; away from the predicted position: layer {w['layer']} at "
                f"{w['token_b']} ← {w['token_a']} {w['share']:.0%}; the words that differ, "
                f"best layer each: {changed}."
            )  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the JSON report goes")
    args = parser.parse_args()
    report = measure()
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(summary(report))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
