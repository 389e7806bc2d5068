"""A transformers GPT-2 with its configuration in code (tests/cli/t78-models.sh
takes it as `gpt2_tiny.py:gpt2`): small sizes, random weights, no download.
The split's distinct tasks do not grow with `n_layer`."""
from transformers import GPT2Config, GPT2LMHeadModel


def gpt2(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64):
    config = GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_size=vocab_size,
                        n_positions=n_positions, use_cache=False, bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config)
