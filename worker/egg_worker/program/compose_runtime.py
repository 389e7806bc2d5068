# compose_runtime.py: the runtime of a program that egg compose put back
# together: each part's source run as a module of its own, the program's
# parameters and buffers bound to the parts, and ModelNew, whose forward
# runs the parts in order.
#
# It is not imported. egg compose (program_compose in src/program/program.c)
# reads this file from the worker's folder and copies its text, less these
# first comment lines, into the composed file after the program's own
# source. There, Model and nn are the program's own; after this text egg
# adds the `return` of ModelNew.forward (the plan's output expression over
# v[NAME]), then _EGG_INPUTS (the program's input names, in get_inputs()
# order), _EGG_INPUT_SHAPES (their shapes at the split, or None: any shape),
# _EGG_CHECKED_SHAPES (other shapes the composition passed at) and
# _EGG_PARTS (each part's name, source, inputs, outputs and
# parameters). So this file ends inside ModelNew.forward.


# ---- egg compose: the parts of the program and how they are put together ----
import linecache as _egg_linecache
import sys as _egg_sys
import types as _egg_types

import torch as _egg_torch


def _egg_part_module(i, part):
    """A part's source as a module of its own (its kernels and helpers keep
    their names apart from other parts'), readable by Triton's source
    inspection through linecache."""
    path = "<egg part %d: %s>" % (i, part["name"])
    _egg_linecache.cache[path] = (len(part["source"]), None, part["source"].splitlines(True), path)
    mod = _egg_types.ModuleType("egg_part_%d" % i)
    mod.__file__ = path
    _egg_sys.modules[mod.__name__] = mod
    exec(compile(part["source"], path, "exec"), mod.__dict__)
    return mod


def _egg_bind(part, key, tensor):
    """Makes the part's tensor at `key` the program's own (one tensor: a
    buffer the forward updates stays one); copies the values when the part
    holds it some other way."""
    owner_name, _, leaf = key.rpartition(".")
    try:
        owner = part.get_submodule(owner_name) if owner_name else part
    except AttributeError:
        return False
    if owner._parameters.get(leaf) is not None:
        mine = owner._parameters[leaf]
        if mine.shape == tensor.shape and isinstance(tensor, _egg_torch.nn.Parameter):
            owner._parameters[leaf] = tensor
            return True
    elif owner._buffers.get(leaf) is not None:
        mine = owner._buffers[leaf]
        if mine.shape == tensor.shape:
            owner._buffers[leaf] = tensor
            return True
    else:
        return False
    if mine.shape != tensor.shape:
        return False
    with _egg_torch.no_grad():
        mine.copy_(tensor)
    return True


def _egg_traced_shapes(inputs):
    """Whether the inputs have the shapes the program was split at, or
    shapes egg checked the composition at end to end (_EGG_CHECKED_SHAPES)."""
    if _EGG_INPUT_SHAPES is None:
        return True
    return any(all(want is None or (isinstance(x, _egg_torch.Tensor) and list(x.shape) == want)
                   for x, want in zip(inputs, shapes))
               for shapes in [_EGG_INPUT_SHAPES] + list(_EGG_CHECKED_SHAPES))


def _egg_composed_state_hooks(module):
    """state_dict() of the program's own keys: the parts hold the program's
    tensors, not tensors of their own to save. A model spec's program
    (model_runtime.py, before this text) also maps its wrapper's keys to the
    model's; so ModelNew loads the original model's state_dict (strict)."""
    model_hooks = globals().get("_egg_model_state_hooks")
    if model_hooks is not None:
        model_hooks(module)
        return

    def save(mod, state, prefix, meta):
        for k in [k for k in state if k[len(prefix):].startswith("_egg_parts.")]:
            del state[k]

    def load_post(mod, incompatible):
        incompatible.missing_keys[:] = [k for k in incompatible.missing_keys if not k.startswith("_egg_parts.")]

    module._register_state_dict_hook(save)
    module.register_load_state_dict_post_hook(load_post)


class ModelNew(nn.Module):
    """The program's Model, its subgraphs run by the parts above."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        program = Model(*args, **kwargs)
        self._egg_program_forward = type(program).forward
        # The program's own layers, parameters and buffers, under their names.
        for name, child in program.named_children():
            self.add_module(name, child)
        for name, p in program.named_parameters(recurse=False):
            self.register_parameter(name, p)
        for name, b in program.named_buffers(recurse=False):
            self.register_buffer(name, b, persistent=name not in program._non_persistent_buffers_set)
        for name, value in vars(program).items():
            if not name.startswith("_") and name != "training" and not hasattr(self, name):
                object.__setattr__(self, name, value)
        parts = []
        for i, spec in enumerate(_EGG_PARTS):
            mod = _egg_part_module(i, spec)
            part = mod.ModelNew() if spec["kernel"] else mod.Model()
            own = dict(part.state_dict(keep_vars=True))
            for key, program_key in spec["params"].items():
                tensor = self._egg_tensor(program_key)
                target = key if key in own else next((k for k, t in own.items() if t.shape == tensor.shape
                                                      and k not in spec["params"]), None)
                if target is None or not _egg_bind(part, target, tensor):
                    raise RuntimeError("part %d (%s) has no tensor for the program's %s"
                                       % (i, spec["name"], program_key))
            parts.append(part)
        self._egg_parts = nn.ModuleList(parts)
        _egg_composed_state_hooks(self)

    def _egg_tensor(self, key):
        owner_name, _, leaf = key.rpartition(".")
        owner = self.get_submodule(owner_name) if owner_name else self
        return getattr(owner, leaf)

    def forward(self, *inputs):
        if not _egg_traced_shapes(inputs):
            # The parts are specialised to the shapes the program was split
            # at: at any other, the program's own forward (correct, not faster).
            return self._egg_program_forward(self, *inputs)
        v = dict(zip(_EGG_INPUTS, inputs))
        for part, spec in zip(self._egg_parts, _EGG_PARTS):
            out = part(*[v[name] for name in spec["inputs"]])
            if len(spec["outputs"]) == 1:
                v[spec["outputs"][0]] = out
            else:
                v.update(zip(spec["outputs"], out))
