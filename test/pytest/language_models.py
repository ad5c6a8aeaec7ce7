"""Tiny Hugging Face language models with random weights (nothing is
downloaded), shared by the tests of Lamina's front doors: GPT-2, BERT (with
an attention mask that hides padding) and a Llama-style decoder (rotary
positions, RMSNorm, grouped-query attention, SiLU-gated MLP), two layers of
width 128 each, and their inputs: `input_ids` (int64) of 8 tokens."""

from __future__ import annotations

import logging

import torch

VOCAB = 1000
TOKENS = 8
MODELS = ("gpt2", "bert", "llama")


class LastHiddenState(torch.nn.Module):
    """A model's last hidden state from `input_ids` (and `attention_mask`)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask=None):
        masks = {} if attention_mask is None else {"attention_mask": attention_mask}
        return self.model(input_ids=input_ids, **masks, return_dict=False)[0]


def build(name: str) -> torch.nn.Module:
    """The model `name` (one of MODELS) in eval mode, seeded."""
    import transformers
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.manual_seed(0)
    if name == "gpt2":
        model = transformers.GPT2Model(transformers.GPT2Config(
            n_layer=2, n_embd=128, n_head=4, vocab_size=VOCAB, n_positions=64))
    elif name == "bert":
        model = transformers.BertModel(transformers.BertConfig(
            num_hidden_layers=2, hidden_size=128, num_attention_heads=4,
            intermediate_size=256, vocab_size=VOCAB, max_position_embeddings=64))
    elif name == "llama":
        model = transformers.LlamaModel(transformers.LlamaConfig(
            num_hidden_layers=2, hidden_size=128, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=256, vocab_size=VOCAB, max_position_embeddings=64))
    else:
        raise ValueError(f"unknown model {name!r} (one of {', '.join(MODELS)})")
    model.config.use_cache = False
    return LastHiddenState(model).eval()


def inputs(name: str) -> tuple[torch.Tensor, ...]:
    """`input_ids`, and for BERT an attention mask whose last two tokens
    are padding."""
    ids = torch.randint(0, VOCAB, (1, TOKENS), generator=torch.Generator().manual_seed(1))
    if name == "bert":
        return ids, torch.tensor([[1] * (TOKENS - 2) + [0] * 2])
    return (ids,)
