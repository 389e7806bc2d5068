# model_runtime.py: the runtime of a program that egg wrote from a model
# spec (egg split MODEL DIR, egg optimize MODEL --split): a torchvision,
# timm or transformers model, or one's own, in KernelBench form, run in
# the chosen mode and dtype.
#
# It is not imported. egg (program_write_model in src/program/model.c)
# writes the program file: its docstring, `EGG_MODEL = {...}` (the spec:
# what builds the model, its arguments, the inputs, the mode and dtype),
# then this file's text less these first comment lines. Everything egg
# does with a program (split, compose, eval) then works on that file.
#
# The wrapper's state_dict() is the model's own (its keys carry no prefix),
# so a composed program built on it loads the original model's state_dict.


# ---- egg: the model spec's program ----
import collections.abc as _egg_abc
import importlib as _egg_importlib
import importlib.util as _egg_importlib_util
import os as _egg_os
import sys as _egg_sys

import torch
import torch.fx as _egg_fx
import torch.nn as nn

_EGG_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
_EGG_INT_DTYPES = {"int64": torch.int64, "int32": torch.int32, "bool": torch.bool}


def _egg_import_hint(e):
    """What to install, in one line, when torchvision does not import with
    this torch ("operator torchvision::nms does not exist": a torchvision
    built for another torch, as PyPI's wheel, built for CUDA torch, is for
    the CPU build; timm imports torchvision); None for any other error.
    torchvision 0.N is the release of torch 2.(N-15)."""
    import re

    m = re.search(r"operator (torchvision::\w+) does not exist", str(e))
    if not m:
        return None
    version = torch.__version__
    base, _, local = version.partition("+")
    major, _, rest = base.partition(".")
    minor = rest.partition(".")[0]
    pin = "'torchvision==0.%d.*'" % (int(minor) + 15) if major == "2" and minor.isdigit() else "torchvision"
    index = " --index-url https://download.pytorch.org/whl/%s" % local if local else ""
    return ("torchvision does not import with torch %s (%s does not exist: it was built for another torch); "
            "install the build for this torch: pip install %s%s" % (version, m.group(1), pin, index))


def _egg_load(ref):
    """The object `ref` names: MODULE:NAME or FILE.py:NAME (NAME may be dotted)."""
    where, _, name = ref.rpartition(":")
    try:
        if where.endswith(".py"):
            key = "egg_model_" + _egg_os.path.splitext(_egg_os.path.basename(where))[0]
            mod = _egg_sys.modules.get(key)
            if mod is None or getattr(mod, "__file__", None) != where:
                mod = _egg_file_module(key, where)
        else:
            mod = _egg_importlib.import_module(where)
    except Exception as e:
        hint = _egg_import_hint(e)
        if hint is None:
            raise
        raise ImportError(hint) from None
    obj = mod
    for part in name.split("."):
        if not hasattr(obj, part):
            import difflib

            near = difflib.get_close_matches(part, [n for n in dir(obj) if not n.startswith("_")], n=1)
            raise AttributeError("%s has no %r%s" % (where, part, "; did you mean %r?" % near[0] if near else ""))
        obj = getattr(obj, part)
    return obj


def _egg_file_module(key, path):
    """The module of a FILE.py the spec names: from the text egg copied into
    EGG_MODEL["sources"] when it wrote this program (so the program runs
    where that path is not readable: a sandbox, another machine), else from
    the file."""
    import linecache

    source = (EGG_MODEL.get("sources") or {}).get(path)
    if source is None:
        with open(path) as f:
            source = f.read()
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    mod = _egg_importlib_util.module_from_spec(_egg_importlib_util.spec_from_loader(key, loader=None))
    mod.__file__ = path
    _egg_sys.modules[key] = mod
    try:
        exec(compile(source, path, "exec"), mod.__dict__)
    except BaseException:
        del _egg_sys.modules[key]  # not half a module the next time
        raise
    return mod


def _egg_has_statistics(m):
    """Whether a layer normalises by running statistics (a batch norm)."""
    return getattr(m, "running_var", None) is not None and getattr(m, "running_mean", None) is not None


def _egg_random_statistics(model):
    """In eval mode a normalisation's running statistics and affine values
    are constants a kernel may fold; a new model's are zeros and ones, under
    which a kernel that ignored them would pass. They are drawn here (a
    trained model's own replace them when its state_dict is loaded). The
    subgraph tasks of an eval-mode program carry these two functions too
    (write_tasks.py copies their text)."""
    with torch.no_grad():
        for m in model.modules():
            if not _egg_has_statistics(m):
                continue
            m.running_mean.normal_(0.0, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            if getattr(m, "weight", None) is not None:
                m.weight.uniform_(0.5, 1.5)
            if getattr(m, "bias", None) is not None:
                m.bias.normal_(0.0, 0.2)


def _egg_varied_constants(model):
    """A parameter whose values are all one constant (a new layer's ones
    and zeros, a model's initial layer scale of 1e-6 or gate at 0) hides
    from a check what it scales or shifts: under it, a kernel that ignored
    the parameter, or the branch it multiplies, would pass. Such parameters
    are drawn here: zeros around 0, another constant c within 0.5 to 1.5
    times max(|c|, 1), its sign kept; a single value is left as it is. A
    model spec's program draws them when it builds its model (so that its
    end-to-end check sees them too), and each subgraph task draws those
    still constant in it, a KernelBench file's included (write_tasks.py
    copies this text into the tasks)."""
    with torch.no_grad():
        for p in model.parameters():
            if not p.is_floating_point() or p.numel() < 2 or p.device.type == "meta":
                continue
            c = float(p.reshape(-1)[0])
            if not bool((p == c).all()):
                continue
            if c == 0:
                p.normal_(0.0, 0.2)
            else:
                p.uniform_(0.5, 1.5).mul_(max(abs(c), 1.0) * (1.0 if c > 0 else -1.0))


def _egg_tensors(out):
    """The model's result as tensors: an output object or dict (a
    transformers model's) becomes its tensor values, one of them alone."""
    if isinstance(out, (torch.Tensor, _egg_fx.Proxy)):
        return out
    if isinstance(out, _egg_abc.Mapping):
        out = [v for v in out.values() if v is not None]
        return out[0] if len(out) == 1 else tuple(out)
    if isinstance(out, (tuple, list)):
        return type(out)(_egg_tensors(x) for x in out if x is not None)
    return out


def _egg_model_state_hooks(module, inner="model."):
    """state_dict() without `inner` (and without a composed program's own
    parts), and load_state_dict() of the model's own keys: the wrapper and
    a composed program built on it take the original model's state_dict."""
    def save(mod, state, prefix, meta):
        for k in list(state):
            rest = k[len(prefix):]
            if rest.startswith("_egg_parts."):
                del state[k]
            elif rest.startswith(inner):
                state[prefix + rest[len(inner):]] = state.pop(k)

    def load_pre(mod, state, prefix, meta, strict, missing, unexpected, errors):
        for k in [k for k in state if k.startswith(prefix)]:
            rest = k[len(prefix):]
            if not rest.startswith(inner) and not rest.startswith("_egg_parts."):
                state[prefix + inner + rest] = state.pop(k)

    def load_post(mod, incompatible):
        incompatible.missing_keys[:] = [k for k in incompatible.missing_keys if not k.startswith("_egg_parts.")]

    module._register_state_dict_hook(save)
    module.register_load_state_dict_pre_hook(load_pre)
    module.register_load_state_dict_post_hook(load_post)


class Model(nn.Module):
    """The model EGG_MODEL builds, in its mode and dtype. Its forward takes
    as many inputs as the model's example inputs, by name (tracing needs a
    fixed count): each instance is of the subclass for that count."""

    def __init__(self):
        super().__init__()
        make = _egg_load(EGG_MODEL["model"])
        args = EGG_MODEL.get("args") or []
        if isinstance(args, str):
            args = list(_egg_load(args)())
        model = make(*args, **(EGG_MODEL.get("kwargs") or {}))
        if EGG_MODEL["dtype"] != "fp32":
            model = model.to(_EGG_DTYPES[EGG_MODEL["dtype"]])
        if EGG_MODEL["mode"] == "eval":
            _egg_random_statistics(model)
        # In every mode: an end-to-end check of a new model (ConvNeXt's
        # layer scale of 1e-6) must see each residual branch, as each
        # part's check does. A trained model's state_dict replaces them.
        _egg_varied_constants(model)
        # A model that keeps a cache between calls (transformers' use_cache,
        # on by default in its decoders) runs without it: a split program's
        # parts each start afresh, and the drop-in computes the same logits.
        self._egg_kwargs = _egg_without_cache(model)
        self.model = model
        self.train(EGG_MODEL["mode"] == "train")
        _egg_model_state_hooks(self)
        self.__class__ = _egg_taking(_egg_input_names(model))


_EGG_TAKING = {}


def _egg_taking(names):
    """Model's subclass whose forward takes one input per entry of `names`:
    None passes it by position, a name by that keyword (--inputs NAME=...)."""
    key = tuple(names)
    if key not in _EGG_TAKING:
        params = ", ".join(n or "x%d" % i for i, n in enumerate(names))
        args = ", ".join(("%s=%s" % (n, n)) if n else "x%d" % i for i, n in enumerate(names))
        space = {}
        exec("def forward(self, %s):\n    return _egg_tensors(self.model(%s, **self._egg_kwargs))\n" % (params, args),
             globals(), space)
        _EGG_TAKING[key] = type("Model", (Model,), {"forward": space["forward"], "__module__": __name__,
                                                    "__qualname__": "Model"})
    return _EGG_TAKING[key]


def _egg_without_cache(model):
    """The keyword arguments that run `model` without a cache: use_cache=False
    where its forward takes use_cache (and its config's default off too)."""
    import inspect

    config = getattr(model, "config", None)
    if config is not None and getattr(config, "use_cache", None):
        config.use_cache = False
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return {}
    return {"use_cache": False} if "use_cache" in params else {}


def _egg_input_names(model):
    """The example inputs, each None (by position) or the keyword it goes
    by: the shapes given with their names, else as many as the model's
    forward's parameters without defaults (at least one), by position."""
    if not isinstance(EGG_MODEL["inputs"], str):
        return [s.get("name") for s in EGG_MODEL["inputs"]]
    import inspect

    params = inspect.signature(model.forward).parameters.values()
    return [None] * max(1, sum(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                               for p in params))


def _egg_draw(spec):
    shape, dtype = tuple(spec["shape"]), spec["dtype"]
    if dtype in _EGG_INT_DTYPES:
        if dtype == "bool":
            return torch.rand(shape) < 0.5
        return torch.randint(0, int(spec.get("high") or 2), shape, dtype=_EGG_INT_DTYPES[dtype])
    return torch.randn(shape)


def _egg_rescaled(x, batch, length):
    """An input like `x` at another shape (egg's check of a composed module
    at shapes it was not split at): its first dimension `batch`, and for an
    input that is not floating point (token ids, a mask) of two or more
    dimensions its second `length` (None: as it is); drawn anew as `x` was
    (integers below its largest + 1)."""
    if not isinstance(x, torch.Tensor) or x.dim() == 0:
        return x
    shape = list(x.shape)
    shape[0] = batch
    if not x.is_floating_point() and x.dim() >= 2 and length is not None:
        shape[1] = length
    if x.dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if not x.is_floating_point():
        return torch.randint(0, int(x.max()) + 1 if x.numel() else 2, shape, dtype=x.dtype)
    return torch.randn(shape, dtype=x.dtype)


def get_inputs():
    spec = EGG_MODEL["inputs"]
    xs = list(_egg_load(spec)()) if isinstance(spec, str) else [_egg_draw(s) for s in spec]
    want = _EGG_DTYPES[EGG_MODEL["dtype"]]
    xs = [x.to(want) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs]
    if EGG_MODEL.get("rescale"):
        xs = [_egg_rescaled(x, EGG_MODEL["rescale"]["batch"], EGG_MODEL["rescale"]["length"]) for x in xs]
    return xs


def get_init_inputs():
    return []
