"""The arithmetic the pages show, in plain numpy: no Streamlit, no torch.

Similarities and PCA (similarity.py), which tokens to pick and how to name the stages
(tokens.py), one attention head recomputed step by step (steps.py). Inputs are Traces and
arrays; outputs are arrays, numbers and small dataclasses that viz draws.
"""

from analysis.similarity import (
    cosine_matrix,
    cosine_to_first,
    cosines_by_stage,
    neighbour_map,
    order_table,
    pca_2d,
    shared_word_cosines,
    shared_words,
    word_pairs,
)
from analysis.steps import AttentionSteps, attention_steps
from analysis.tokens import (
    default_token,
    head_pattern,
    head_weights,
    is_special,
    prediction_probs,
    softmax_rows,
    stage_names,
    word_of,
    word_positions,
)
from analysis.vision import as_grid, attention_rollout, layout_similarity, patches

__all__ = [
    "AttentionSteps",
    "as_grid",
    "attention_rollout",
    "patches",
    "attention_steps",
    "cosine_matrix",
    "cosine_to_first",
    "cosines_by_stage",
    "default_token",
    "head_pattern",
    "head_weights",
    "is_special",
    "layout_similarity",
    "neighbour_map",
    "order_table",
    "pca_2d",
    "prediction_probs",
    "shared_word_cosines",
    "shared_words",
    "softmax_rows",
    "stage_names",
    "word_of",
    "word_pairs",
    "word_positions",
]
