"""The Hugging Face families the adapter reads (model/hf.py), one list: where each keeps
what a trace needs, and the kind of model it makes (the catalogue, model/registry.py, reads
the kind without importing transformers). Plain data: no torch, no transformers."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Family:
    """Where a model family keeps what a trace needs: module paths relative to the stack
    (`base`) or to one layer; and the kind of model it makes. One entry per supported
    `model_type`."""

    kind: str  # "encoder" or "decoder", as the app's own kinds
    layers: str  # the ModuleList of layers, under the base model
    embed: str  # token embedding
    pos: str | None  # learned position embedding (None: rotary or none)
    attn: str  # the self-attention module (its `scaling`), in a layer
    q: str  # the modules whose outputs are Q, K, V (fused: the same module three times)
    k: str
    v: str
    out: str  # W_O: its input is the heads' outputs side by side, its output what attention adds
    mlp: str  # its output is what the MLP adds
    mlp_in: str  # W_in: the MLP's first projection (a gated MLP's "up" one), in a layer
    mlp_down: str  # W_out: its input is the hidden neurons (mlp_post), in a layer
    attn_in: str | None = None  # pre-norm: the norm whose output is X (None: X = resid_pre)
    mid: str | None = None  # post-norm: the add & norm whose output is resid_mid
    rotary: str | None = None  # the rotary embedding module under the base model
    final_norm: str | None = None  # the norm after the last layer, under the base model
    head: tuple[str, ...] = ()  # the output head's modules, applied in order, under the
    # model with its head: the final hidden state -> logits (the logit lens reads with them)
    mlp_gate: str | None = None  # a gated MLP's gate projection (Llama: act(gate) * up)

    @property
    def fused(self) -> bool:
        return self.q == self.k == self.v


BERT = Family(
    kind="encoder", layers="encoder.layer", embed="embeddings.word_embeddings",
    pos="embeddings.position_embeddings", attn="attention.self", q="attention.self.query",
    k="attention.self.key", v="attention.self.value", out="attention.output.dense",
    mlp="output.dense", mlp_in="intermediate.dense", mlp_down="output.dense",
    mid="attention.output", head=("cls",),
)  # fmt: skip
ROBERTA = replace(BERT, head=("lm_head",))
FAMILIES: dict[str, Family] = {
    "bert": BERT,
    "roberta": ROBERTA,
    "xlm-roberta": ROBERTA,
    "distilbert": Family(
        kind="encoder", layers="transformer.layer", embed="embeddings.word_embeddings",
        pos="embeddings.position_embeddings", attn="attention", q="attention.q_lin",
        k="attention.k_lin", v="attention.v_lin", out="attention.out_lin", mlp="ffn",
        mlp_in="ffn.lin1", mlp_down="ffn.lin2", mid="sa_layer_norm",
        head=("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector"),
    ),
    "gpt2": Family(
        kind="decoder", layers="h", embed="wte", pos="wpe", attn="attn", q="attn.c_attn",
        k="attn.c_attn", v="attn.c_attn", out="attn.c_proj", mlp="mlp", mlp_in="mlp.c_fc",
        mlp_down="mlp.c_proj", attn_in="ln_1",
        final_norm="ln_f", head=("lm_head",),
    ),
    "llama": Family(
        kind="decoder", layers="layers", embed="embed_tokens", pos=None, attn="self_attn",
        q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj",
        out="self_attn.o_proj", mlp="mlp", mlp_in="mlp.up_proj", mlp_down="mlp.down_proj",
        mlp_gate="mlp.gate_proj", attn_in="input_layernorm", rotary="rotary_emb",
        final_norm="norm", head=("lm_head",),
    ),
}  # fmt: skip
