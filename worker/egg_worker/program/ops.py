"""ops.py: what each operation of a traced program is, for the split: an
anchor (a matrix product, a convolution, attention, a recurrent layer, an
embedding, a layer this module does not know), a normalisation, reduction
or pooling ("reduce"), a view, or elementwise; and which standard layers
stay whole when the program is traced (LEAF_TYPES)."""
from __future__ import annotations

import torch
import torch.fx
import torch.nn as nn

ANCHOR_FUNCS = {
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "scaled_dot_product_attention", "embedding",
    "bilinear", "tensordot", "mv", "dot", "outer", "addbmm", "cdist", "unfold", "fold",
}
MATMULS = {"matmul", "mm", "bmm", "baddbmm", "einsum", "__matmul__", "addmm"}
ANCHOR_MODULES = (nn.Linear, nn.Bilinear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                  nn.ConvTranspose3d, nn.RNNBase, nn.RNNCellBase, nn.Embedding, nn.EmbeddingBag,
                  nn.MultiheadAttention, nn.Transformer, nn.TransformerEncoder, nn.TransformerEncoderLayer,
                  nn.TransformerDecoder, nn.TransformerDecoderLayer)
REDUCE_FUNCS = {
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "softmax", "log_softmax", "sum", "mean",
    "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp", "var", "std", "norm", "cumsum", "cumprod",
    "prod", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "normalize", "cross_entropy", "mse_loss", "kl_div",
    "nll_loss", "smooth_l1_loss", "cosine_similarity", "pixel_shuffle", "interpolate", "topk", "sort",
}
REDUCE_MODULES = (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm, nn.modules.instancenorm._InstanceNorm,
                  nn.Softmax, nn.LogSoftmax, nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d, nn.AvgPool1d, nn.AvgPool2d,
                  nn.AvgPool3d, nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d,
                  nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d, nn.PixelShuffle, nn.Upsample)
# Views: a new look at the same memory (or a size), no data moved.
VIEW_NAMES = {
    "view", "reshape", "flatten", "unflatten", "permute", "transpose", "t", "contiguous", "unsqueeze", "squeeze",
    "expand", "expand_as", "getitem", "chunk", "split", "narrow", "view_as", "reshape_as", "movedim", "unbind",
    "select", "as_strided", "swapaxes", "split_with_sizes", "detach", "size", "dim",
}
# Copies: they compute nothing but write new memory (casts, clone, cat,
# pad, ...), so a subgraph of them is work a kernel can do, not glue.
COPY_NAMES = {
    "to", "type", "float", "half", "bfloat16", "double", "clone", "cat", "stack", "concat", "pad", "flip", "roll",
    "repeat", "tile",
}
LEAF_TYPES = ANCHOR_MODULES + REDUCE_MODULES + (
    nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Tanh, nn.Hardtanh, nn.Hardswish, nn.Hardsigmoid,
    nn.LeakyReLU, nn.ELU, nn.SELU, nn.CELU, nn.Mish, nn.Softplus, nn.Softsign, nn.Tanhshrink, nn.Threshold,
    nn.PReLU, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.Identity, nn.Flatten,
    nn.Unflatten, nn.ZeroPad2d, nn.ConstantPad2d, nn.ReflectionPad2d, nn.ChannelShuffle, nn.GLU, nn.LogSigmoid,
    nn.Hardshrink, nn.Softshrink, nn.Softmin, nn.CosineSimilarity, nn.PairwiseDistance)


def op_name(n: torch.fx.Node, mods: dict) -> str:
    """What a node computes, in one word (its layer's type for a layer)."""
    if n.op == "call_module":
        return type(mods[n.target]).__name__.lower()
    if n.op == "call_function":
        name = getattr(n.target, "__name__", str(n.target))
        return {"add": "add", "iadd": "add", "mul": "mul", "imul": "mul", "sub": "sub", "truediv": "div",
                "floordiv": "div", "matmul": "matmul", "neg": "neg", "pow": "pow"}.get(name, name)
    return str(n.target)


def op_kind(n: torch.fx.Node, mods: dict) -> str:
    """anchor, reduce, view, copy, scalar or elementwise."""
    if n.op == "call_module":
        m = mods[n.target]
        if isinstance(m, REDUCE_MODULES):
            return "reduce"
        if isinstance(m, (nn.Identity, nn.Flatten, nn.Unflatten)):
            return "view"
        if isinstance(m, LEAF_TYPES) and not isinstance(m, ANCHOR_MODULES):
            return "elementwise"
        return "anchor"
    name = op_name(n, mods)
    if name in ANCHOR_FUNCS or name == "__matmul__":
        return "anchor"
    if name in REDUCE_FUNCS:
        return "reduce"
    if name in VIEW_NAMES or name in {"getattr", "shape"}:
        return "view"
    if name in COPY_NAMES:
        return "copy"
    return "elementwise"
