"""Pure Plotly figure builders for Transformer Glassbox: numpy arrays in, Plotly's figure
JSON as a dict out (`Figure`: {"data": [traces], "layout": {...}}, validated against
Plotly's schema in the tests); `to_json` writes it as the app sends it to the browser.

No plotly objects at run time (building and validating them cost most of a figure's time),
no Streamlit, no torch, no model: pages pass in the numbers of a Trace (and of
`analysis`) and lay out what comes back. Token axes are integer positions with the tokens
as tick labels, so repeated tokens keep their own rows and columns. The language is an input
too: every word a figure shows (titles, axes, legends, colour bars, hovers) goes through
`i18n._` in the current language; tokens and numbers stay as they are.
"""

from viz._common import Figure, TokenLabel, to_json
from viz.attention import (
    attention_grid,
    attention_heatmap,
    attention_row,
    causal_mask_figure,
)
from viz.compare import attention_rows, cosine_by_layer, shifted_targets
from viz.embeddings import embedding_map, layer_trajectory, similarity_heatmap
from viz.export import matrix_to_csv
from viz.interventions import attention_beside_attribution, rank_by_layer
from viz.matrix import matrix_heatmap
from viz.mlp import mlp_neurons
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
    "Figure",
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
    "attention_rows",
    "binary_table",
    "causal_mask_figure",
    "cosine_by_layer",
    "distribution_bar",
    "embedding_map",
    "embedding_plus_position",
    "layer_trajectory",
    "matrix_heatmap",
    "mlp_neurons",
    "matrix_to_csv",
    "positional_waves",
    "rank_by_layer",
    "shifted_targets",
    "similarity_heatmap",
    "sinusoidal_heatmap",
    "to_json",
    "token_strip",
    "topk_bar",
    "zoom",
]
