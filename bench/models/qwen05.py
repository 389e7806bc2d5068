"""qwen05.py: a Qwen2.5-0.5B-shaped decoder built from transformers' Qwen2Config
(24 layers, 896 wide, 14 heads over 2 key/value heads, MLP 4864 wide,
vocabulary 151936), random weights, nothing downloaded: the Llama-style
decoder of bench/where-time-gpu.sh. `build:build` for egg's model spec."""
import transformers as tf


def build():
    return tf.Qwen2ForCausalLM(tf.Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                              num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                                              max_position_embeddings=32768, tie_word_embeddings=True))
