"""transformers decoders and encoders with their configurations in code, as
a user builds them (small sizes, random weights, no download), for the
model matrix of tests/cli/t83-model-matrix.sh: `decoders.py:llama`,
`:mistral`, `:qwen2`, `:bert`, `:t5`. Each keeps its library's default
configuration but for the sizes (use_cache too: egg runs a model that takes
it without its cache)."""
import transformers as tf

SMALL = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, vocab_size=512,
             max_position_embeddings=128)


def _sized(defaults: dict, kw: dict) -> dict:
    """The small sizes, any of them replaced by the caller's (--model-kwargs)."""
    return dict(defaults, **kw)


def llama(**kw):
    return tf.LlamaForCausalLM(tf.LlamaConfig(**_sized(dict(SMALL, num_key_value_heads=2), kw)))


def mistral(**kw):
    return tf.MistralForCausalLM(tf.MistralConfig(**_sized(dict(SMALL, num_key_value_heads=2), kw)))


def qwen2(**kw):
    return tf.Qwen2ForCausalLM(tf.Qwen2Config(**_sized(dict(SMALL, num_key_value_heads=2), kw)))


def bert(**kw):
    return tf.BertModel(tf.BertConfig(**_sized(dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                                    num_attention_heads=4, vocab_size=512), kw)))


def t5(**kw):
    return tf.T5Model(tf.T5Config(**_sized(dict(d_model=64, d_ff=128, num_layers=2, num_heads=4, d_kv=16,
                                                vocab_size=512), kw)))


def gpt2(**kw):
    return tf.GPT2LMHeadModel(tf.GPT2Config(**_sized(dict(n_layer=2, n_embd=64, n_head=4, vocab_size=512,
                                                          n_positions=128), kw)))
