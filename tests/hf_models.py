"""Tiny random-weight Hugging Face models (BERT, DistilBERT, RoBERTa, GPT-2, Llama) with a
word-level tokenizer built here: no downloads. Used by tests/test_hf.py and bench/bench_hf.py.

    folder = save(tmp / "gpt2", "gpt2")      # model.safetensors, config.json, tokenizer.json
"""

from __future__ import annotations

from pathlib import Path

import torch
import transformers

WORDS = (
    "the a dog cat man boy bit sat on mat river bank cash near to get walked and slept "
    "warm school morning steel is strong light door opened smiled at"
).split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<mask>"]


def tokenizer(family: str) -> transformers.PreTrainedTokenizerFast:
    """A word-level fast tokenizer with the special tokens of `family` (bert, roberta, gpt2,
    llama)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    roles: dict[str, str] = {"unk_token": "[UNK]", "pad_token": "[PAD]"}
    if family == "bert":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
        roles |= {"cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}
    elif family == "roberta":  # its own names: <s> text </s>, <mask>
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", 5), ("</s>", 6)]
        )
        roles |= {"bos_token": "<s>", "eos_token": "</s>", "cls_token": "<s>",
                  "sep_token": "</s>", "mask_token": "<mask>"}  # fmt: skip
    elif family == "llama":
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", 5)]
        )
        roles |= {"bos_token": "<s>", "eos_token": "</s>"}
    else:
        roles |= {"bos_token": "</s>", "eos_token": "</s>"}
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **roles)


def build(family: str, layers: int = 2) -> torch.nn.Module:
    """A tiny random model of `family`: bert, distilbert, roberta (MLM heads), bert-base
    (none), gpt2, llama (grouped-query attention)."""
    torch.manual_seed(0)
    n = len(SPECIALS) + len(WORDS)
    small = dict(vocab_size=n, num_hidden_layers=layers, num_attention_heads=4)
    if family in ("bert", "bert-base"):
        cfg = transformers.BertConfig(
            **small, hidden_size=32, intermediate_size=64, max_position_embeddings=64
        )
        cls = transformers.BertForMaskedLM if family == "bert" else transformers.BertModel
        return cls(cfg)
    if family == "distilbert":
        cfg = transformers.DistilBertConfig(
            vocab_size=n, dim=32, n_layers=layers, n_heads=4, hidden_dim=64,
            max_position_embeddings=64,
        )  # fmt: skip
        return transformers.DistilBertForMaskedLM(cfg)
    if family == "roberta":
        cfg = transformers.RobertaConfig(
            **small, hidden_size=32, intermediate_size=64, max_position_embeddings=66,
            pad_token_id=0,
        )  # fmt: skip
        return transformers.RobertaForMaskedLM(cfg)
    if family == "gpt2":
        cfg = transformers.GPT2Config(
            vocab_size=n, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=6,
            eos_token_id=6,
        )  # fmt: skip
        return transformers.GPT2LMHeadModel(cfg)
    cfg = transformers.LlamaConfig(
        **small, hidden_size=32, intermediate_size=64, num_key_value_heads=2,
        max_position_embeddings=64, bos_token_id=5, eos_token_id=6,
    )  # fmt: skip
    return transformers.LlamaForCausalLM(cfg)


FAMILIES = ("bert", "distilbert", "roberta", "bert-base", "gpt2", "llama")
TOKENIZER = {"bert-base": "bert", "distilbert": "bert", "deep": "llama"}


def save(folder: Path, family: str, layers: int = 2) -> Path:
    """A tiny model of `family` ("deep": a 14-layer Llama) saved as safetensors with its
    tokenizer in `folder`."""
    build("llama" if family == "deep" else family, layers).eval().save_pretrained(
        folder, safe_serialization=True
    )
    tokenizer(TOKENIZER.get(family, family)).save_pretrained(folder)
    return folder
