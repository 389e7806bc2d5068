# compose_runtime.py: the runtime of a program that egg compose put back
# together: each distinct part's source run once as a module of its own,
# one kernel instance per distinct task that runs each occurrence on that
# occurrence's tensors, each kernel a PyTorch custom operator under
# torch.compile, and the guard that runs the kernels only where they were
# checked.
#
# It is not imported. egg compose (program_compose in src/program/program.c)
# reads this file from the worker's folder and copies its text, less these
# first comment lines, into the composed file after the program's own
# source. There, Model and nn are the program's own; after this text egg
# writes the tables it reads (_EGG_INPUTS, the program's input names in
# get_inputs() order; _EGG_INPUT_SHAPES, their shapes at the split, or None:
# any shape; _EGG_INPUT_LAYOUTS, their dtypes and strides there;
# _EGG_CHECKED_SHAPES, other shapes the composition passed at; _EGG_DEVICE,
# the device type the kernels were checked on, or None; _EGG_SOURCES, each
# distinct source once; _EGG_PARTS, each part's name, kind, sources,
# inputs, outputs, tensors and output layouts) and then ModelNew: its
# forward calls the parts in program order as straight-line code, each
# value dropped after its last use.


# ---- egg compose: the parts of the program and how they are put together ----
import hashlib as _egg_hashlib
import itertools as _egg_itertools
import linecache as _egg_linecache
import sys as _egg_sys
import types as _egg_types
import weakref as _egg_weakref

import torch as _egg_torch

_egg_modules = {}


def _egg_source_module(index):
    """_EGG_SOURCES[index] as a module of its own, made once however many
    parts run it (so a kernel is one Triton function, compiled and tuned
    once), readable by Triton's source inspection through linecache."""
    mod = _egg_modules.get(index)
    if mod is not None:
        return mod
    source = _EGG_SOURCES[index]
    tag = _egg_hashlib.sha256(source.encode()).hexdigest()[:12]
    path = "<egg part source %d %s>" % (index, tag)
    _egg_linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    mod = _egg_types.ModuleType("egg_part_%s_%d" % (tag, index))
    mod.__file__ = path
    _egg_sys.modules[mod.__name__] = mod
    exec(compile(source, path, "exec"), mod.__dict__)
    _egg_modules[index] = mod
    return mod


def _egg_owner(module, key):
    """(the submodule that holds `key`, the tensor's own name in it), or
    (None, None) when the module has no such submodule."""
    owner_name, _, leaf = key.rpartition(".")
    try:
        return (module.get_submodule(owner_name) if owner_name else module), leaf
    except AttributeError:
        return None, None


def _egg_slot(module, key, tensor, taken):
    """Where in `module` a tensor of the program goes: (the dict that holds
    it, its name there): the same key, or else the one tensor of the same
    shape not named by the plan (a kernel may name its weights its own
    way). None when there is none."""
    own = dict(module.state_dict(keep_vars=True))
    if key not in own:
        key = next((k for k, t in own.items() if t.shape == tensor.shape and k not in taken), None)
        if key is None:
            return None
    owner, leaf = _egg_owner(module, key)
    if owner is None or own[key].shape != tensor.shape:
        return None
    return (owner._parameters if leaf in owner._parameters else owner._buffers), leaf


def _egg_bind(module, tensors, what):
    """Makes each of the program's tensors (by the part's key) the part's
    own: one tensor, so a buffer the forward updates stays one, and the
    module's own weights are freed. Returns the slots, in `tensors`' order."""
    slots = []
    for key, tensor in tensors.items():
        slot = _egg_slot(module, key, tensor, tensors)
        if slot is None:
            raise RuntimeError("%s has no tensor for the program's %s" % (what, key))
        slot[0][slot[1]] = tensor
        slots.append(slot)
    return slots


def _egg_dense_strides(shape, like):
    """Dense strides for `shape` in the dimension order of the strides
    `like` (a channels-last layout stays channels last at another batch)."""
    order = sorted(range(len(shape)), key=lambda d: (like[d] if d < len(like) else 0, -d))
    strides, step = [0] * len(shape), 1
    for d in order:
        strides[d] = step
        step *= max(1, shape[d])
    return tuple(strides)


def _egg_laid_out(out, like):
    """A kernel's output in the layout the program gives that value (dense,
    in the order of the plan's strides `like`): a later part was judged on
    that layout. The output itself when it already has it."""
    if like is None or not isinstance(out, _egg_torch.Tensor) or out.dim() != len(like):
        return out
    want = _egg_dense_strides(out.shape, like)
    if out.stride() == want or out.numel() <= 1:
        return out
    fixed = _egg_torch.empty_strided(out.shape, want, dtype=out.dtype, device=out.device)
    return fixed.copy_(out)


class _EggKernelTask:
    """One distinct task's kernel: one instance of its ModelNew, run on each
    occurrence's tensors (set into it before the call), and the task's own
    PyTorch Model on the meta device, which says the outputs' shapes and
    dtypes to torch.compile (the custom operator's fake)."""

    def __init__(self, index, spec, tensors):
        self.kernel = _egg_source_module(spec["source"]).ModelNew()
        self.keys = list(tensors)
        self.slots = _egg_bind(self.kernel, tensors, "the kernel of %s" % spec["name"])
        with _egg_torch.device("meta"):
            self.reference = _egg_source_module(spec["reference"]).Model()
        self.reference_keys = list(spec["params"])
        self.layouts = [l["stride"] if l else None for l in spec.get("output_layouts") or []]
        self.index = index
        self._egg_own_number()
        self.op = _egg_op(index)

    def _egg_own_number(self):
        """Its number among every ModelNew's tasks in this process: the
        operator, one per distinct task, runs the instance of the caller."""
        self.owner = next(_egg_owner_numbers)
        _egg_owners[self.owner] = self

    def __getstate__(self):
        # The operator is the process's, shared: a copy finds it again.
        state = dict(self.__dict__)
        del state["op"]
        return state

    def __setstate__(self, state):
        # A copy (copy.deepcopy, pickle) is an instance of its own: its
        # compiled forward must run its own kernel, not the original's.
        self.__dict__.update(state)
        self.op = _egg_op(self.index)
        self._egg_own_number()

    def run(self, xs, tensors):
        for (held, name), t in zip(self.slots, tensors):
            held[name] = t
        out = self.kernel.forward(*xs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [_egg_laid_out(o, self.layouts[i] if i < len(self.layouts) else None) for i, o in enumerate(outs)]

    def fake(self, xs, tensors):
        state = dict(zip(self.reference_keys, tensors))
        out = _egg_torch.func.functional_call(self.reference, state, tuple(xs))
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [o.new_empty_strided(o.shape, _egg_dense_strides(o.shape, self.layouts[i] if i < len(self.layouts)
                                                                else o.stride()))
                for i, o in enumerate(outs)]


def _egg_taken(name):
    """Whether an operator of that name is registered in this process."""
    try:
        _egg_torch._C._dispatch_find_schema_or_throw(name, "")
        return True
    except RuntimeError:
        return False


_egg_namespace = []


def _egg_op_namespace():
    """This file's own operator namespace: named by its sources' hash, and
    the next free one when the same file is loaded again in one process."""
    if not _egg_namespace:
        tag = _egg_hashlib.sha256("\0".join(_EGG_SOURCES).encode()).hexdigest()[:12]
        n = 0
        while _egg_taken("egg_%s_%d::task0" % (tag, n)):
            n += 1
        _egg_namespace.append("egg_%s_%d" % (tag, n))
    return _egg_namespace[0]


_egg_ops = {}
_egg_owners = _egg_weakref.WeakValueDictionary()
_egg_owner_numbers = _egg_itertools.count()


def _egg_op(index):
    """Task `index`'s kernel as a PyTorch custom operator: an opaque call to
    torch.compile (Inductor compiles the program around it, CUDA graphs
    capture it), its outputs' shapes and layouts from the task's fake.
    Defined once per process: every ModelNew of this file shares it, and
    the call's `owner` says whose kernel instance runs (its device, its
    mode), as a constant of each instance's compiled graph."""
    op = _egg_ops.get(index)
    if op is not None:
        return op

    def kernel(xs: list[_egg_torch.Tensor], tensors: list[_egg_torch.Tensor], owner: int) -> list[_egg_torch.Tensor]:
        outs = _egg_owners[owner].run(xs, tensors)
        # An operator's outputs may not alias its inputs: a kernel that
        # returns one of them (or a view) gets a copy here.
        held = {t.untyped_storage().data_ptr() for t in list(xs) + list(tensors) if t.numel()}
        return [o.clone() if o.numel() and o.untyped_storage().data_ptr() in held else o for o in outs]

    op = _egg_torch.library.custom_op("%s::task%d" % (_egg_op_namespace(), index), kernel, mutates_args=())
    op.register_fake(lambda xs, tensors, owner: _egg_owners[owner].fake(xs, tensors))
    _egg_ops[index] = op
    return op


class _EggKernelPart(nn.Module):
    """One occurrence of a kernel's subgraph: its task's kernel on this
    occurrence's tensors (held here too, so that moving the program moves
    them). Called directly in a plain forward (nothing between the part and
    its kernel); under torch.compile through the custom operator."""

    def __init__(self, task, tensors, single):
        super().__init__()
        self._egg_task = task
        self._egg_single = single
        self._egg_names = []
        for j, t in enumerate(tensors):
            name = "t%d" % j
            if isinstance(t, nn.Parameter):
                self.register_parameter(name, t)
            else:
                self.register_buffer(name, t)
            self._egg_names.append(name)
        self._egg_list = list(tensors)

    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        self._egg_list = [getattr(self, n) for n in self._egg_names]
        return self

    def forward(self, *xs):
        if _egg_torch.compiler.is_compiling():
            outs = self._egg_task.op(list(xs), self._egg_list, self._egg_task.owner)
        else:
            outs = self._egg_task.run(xs, self._egg_list)
        return outs[0] if self._egg_single else tuple(outs)


def _egg_checked(inputs):
    """Whether the kernels were checked on these inputs: the shapes the
    program was split at (with their dtypes and strides) or shapes egg
    checked the composition at end to end (_EGG_CHECKED_SHAPES, with the
    same dtypes and dense layouts), on the device type they ran on."""
    if len(inputs) != len(_EGG_INPUTS):
        return False
    for i, x in enumerate(inputs):
        if not isinstance(x, _egg_torch.Tensor):
            continue
        if _EGG_DEVICE is not None and x.device.type != _EGG_DEVICE:
            return False
        layout = _EGG_INPUT_LAYOUTS[i] if i < len(_EGG_INPUT_LAYOUTS) else None
        if layout and str(x.dtype) != "torch." + layout["dtype"]:
            return False
    if _EGG_INPUT_SHAPES is None:
        return True
    for shapes in [_EGG_INPUT_SHAPES] + list(_EGG_CHECKED_SHAPES):
        if all(want is None or (isinstance(x, _egg_torch.Tensor) and list(x.shape) == want)
               for x, want in zip(inputs, shapes)):
            traced = shapes is _EGG_INPUT_SHAPES
            return all(not isinstance(x, _egg_torch.Tensor) or not layout or
                       (list(x.stride()) == layout["stride"] if traced
                        else x.stride() == _egg_dense_strides(x.shape, layout["stride"]))
                       for x, layout in zip(inputs, _EGG_INPUT_LAYOUTS))
    return False


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


class _EggComposed(nn.Module):
    """The program's Model, its subgraphs run by the parts above; egg
    compose writes ModelNew, this class with its forward."""

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
        # Its plain attributes too (and a model spec program's own _egg_
        # settings, which its forward reads: the fallback runs it).
        for name, value in vars(program).items():
            if (not name.startswith("_") or name.startswith("_egg_")) and name != "training" and \
                    not hasattr(self, name):
                object.__setattr__(self, name, value)
        parts, tasks = [], {}
        for i, spec in enumerate(_EGG_PARTS):
            tensors = {key: self._egg_tensor(program_key) for key, program_key in spec["params"].items()}
            if spec["kind"] == "kernel":
                task = tasks.get(spec["task"])
                if task is None:
                    task = tasks[spec["task"]] = _EggKernelTask(len(tasks), spec, tensors)
                part = _EggKernelPart(task, [tensors[k] for k in task.keys], len(spec["outputs"]) == 1)
            else:
                part = _egg_source_module(spec["source"]).Model()
                _egg_bind(part, tensors, "part %d (%s)" % (i, spec["name"]))
            parts.append(part)
        self._egg_parts = nn.ModuleList(parts)
        # One kernel instance per distinct task, moved and put in eval mode
        # with the program (its own weights were let go: it runs on each
        # occurrence's).
        self._egg_kernels = [t.kernel for t in tasks.values()]
        self._egg_run = tuple(p.forward for p in parts)
        _egg_composed_state_hooks(self)

    def _egg_tensor(self, key):
        owner, leaf = _egg_owner(self, key)
        return getattr(owner, leaf)

    def _apply(self, fn, recurse=True):
        super()._apply(fn, recurse)
        for k in self._egg_kernels:
            k._apply(fn, recurse)
        return self

    def train(self, mode=True):
        super().train(mode)
        for k in self._egg_kernels:
            k.train(mode)
        return self
