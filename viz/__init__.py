"""Pure Plotly figure builders for Transformer Glassbox: numpy arrays in, go.Figure out.

No Streamlit, no torch, no model: pages pass in the numbers of a Trace (and of
`analysis`) and lay out what comes back. Token axes are integer positions with the tokens
as tick labels, so repeated tokens keep their own rows and columns. The language is an input
too: every word a figure shows (titles, axes, legends, colour bars, hovers) goes through
`i18n._` in the current language; tokens and numbers stay as they are.
"""

from viz._common import TokenLabel
from viz.attention import (
    attention_grid,
    attention_heatmap,
    attention_row,
    causal_mask_figure,
)
from viz.compare import cosine_by_layer, shifted_targets
from viz.embeddings import embedding_map, layer_trajectory, similarity_heatmap
from viz.export import matrix_to_csv
from viz.interventions import attention_beside_attribution, rank_by_layer
from viz.matrix import matrix_heatmap
from viz.positional import (
    binary_table,
    embedding_plus_position,
    positional_waves,
    sinusoidal_heatmap,
)
from viz.predictions import distribution_bar, topk_bar
from viz.tokens import token_strip
from viz.translation import accuracy_by_length
from viz.vision import (
    attention_over_image,
    image_with_patches,
    patch_tokens,
    position_similarity_grid,
)
from viz.zoom import zoom

__all__ = [
    "TokenLabel",
    "accuracy_by_length",
    "attention_over_image",
    "image_with_patches",
    "patch_tokens",
    "position_similarity_grid",
    "attention_grid",
    "attention_beside_attribution",
    "attention_heatmap",
    "attention_row",
    "binary_table",
    "causal_mask_figure",
    "cosine_by_layer",
    "distribution_bar",
    "embedding_map",
    "embedding_plus_position",
    "layer_trajectory",
    "matrix_heatmap",
    "matrix_to_csv",
    "positional_waves",
    "rank_by_layer",
    "shifted_targets",
    "similarity_heatmap",
    "sinusoidal_heatmap",
    "token_strip",
    "topk_bar",
    "zoom",
]
