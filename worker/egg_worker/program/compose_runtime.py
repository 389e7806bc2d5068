# compose_runtime.py: the runtime of a program that egg compose put back
# together: each distinct part's source run once as a module of its own,
# one kernel instance per occurrence (bound once to that occurrence's
# tensors; the Triton functions belong to the source's module, so they
# are compiled and tuned once), each kernel a PyTorch custom operator under
# torch.compile, and the guard that runs the kernels only where they were
# checked.
#
# It is not imported. egg compose (program_compose in src/program/program.c)
# reads this file from the worker's folder and copies its text, less these
# first comment lines, into the composed file after the program's own
# source. There, Model and nn are the program's own. After this text egg
# writes the data it reads: _EGG_PLAN, one JSON document read by json.loads
# ("inputs": the program's input names in get_inputs() order;
# "input_shapes": their shapes at the split, or null for any shape;
# "input_layouts": their dtypes and strides there, null for an input no
# part reads; "checked_shapes": other shapes the composition passed at;
# "device": the device type the kernels were checked on, or null; "parts":
# each part's name, kind, sources, inputs, outputs, tensors and output
# layouts; "output": the program's output as a tree over value names, or
# null for an older plan), _EGG_SOURCES (each distinct source once), and
# then ModelNew: its forward calls the parts in program order as
# straight-line code, each value dropped after its last use.


# ---- egg compose: the parts of the program and how they are put together ----
import hashlib as _egg_hashlib
import inspect as _egg_inspect
import itertools as _egg_itertools
import json as _egg_json
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
    it, its name there, its key in the module): the same key, or else the
    one tensor of the same shape not named by the plan (a kernel may name
    its weights its own way). None when there is none."""
    own = dict(module.state_dict(keep_vars=True))
    if key not in own:
        key = next((k for k, t in own.items() if t.shape == tensor.shape and k not in taken), None)
        if key is None:
            return None
    owner, leaf = _egg_owner(module, key)
    if owner is None or own[key].shape != tensor.shape:
        return None
    return (owner._parameters if leaf in owner._parameters else owner._buffers), leaf, key


def _egg_bind(module, tensors, what):
    """Makes each of the program's tensors (by the part's key) the part's
    own: one tensor, so a buffer the forward updates stays one, and the
    module's own weights are freed. Returns the keys the tensors went to in
    `module`, in `tensors`' order (a rebinding finds the same places)."""
    keys = []
    for key, tensor in tensors.items():
        slot = _egg_slot(module, key, tensor, tensors)
        if slot is None:
            raise RuntimeError("%s has no tensor for the program's %s" % (what, key))
        slot[0][slot[1]] = tensor
        keys.append(slot[2])
    return keys


def _egg_rebind(module, keys, tensors):
    """The program's tensors into the places _egg_bind found for them."""
    for key, tensor in zip(keys, tensors):
        holder, leaf, _ = _egg_slot(module, key, tensor, ())
        holder[leaf] = tensor


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


def _egg_op(index, mutating, outputs):
    """Task `index`'s kernel as a PyTorch custom operator: an opaque call to
    torch.compile (Inductor compiles the program around it, CUDA graphs
    capture it), its outputs' shapes and layouts from the part's fake.
    Defined once per process and task: every occurrence and every ModelNew
    of this file shares it, and the call's `owner` says whose kernel
    instance runs, as a constant of each compiled graph. The `mutating`
    one, called in training mode, declares that the part may update its
    buffers (a batch norm's running statistics); functionalization takes
    such an operator only with a fixed number of outputs (`outputs`), so it
    returns them as a tuple where the other returns a list."""
    op = _egg_ops.get((index, mutating))
    if op is not None:
        return op

    def kernel(xs, params, buffers, owner):
        part = _egg_owners[owner]
        outs = part._egg_call(xs)
        if mutating:
            # The kernel updated the buffers bound to it; functionalization may
            # have passed copies, which must then hold the update too.
            for passed, own in zip(buffers, part._egg_buffers):
                if passed is not own:
                    passed.copy_(own)
        # An operator's outputs may not alias its inputs: a kernel that
        # returns one of them (or a view) gets a copy here.
        held = {t.untyped_storage().data_ptr() for t in list(xs) + list(params) + list(buffers) if t.numel()}
        outs = [o.clone() if o.numel() and o.untyped_storage().data_ptr() in held else o for o in outs]
        return outs if not mutating else outs[0] if outputs == 1 else tuple(outs)

    def fake(xs, params, buffers, owner):
        outs = _egg_owners[owner]._egg_fake(xs, params, buffers)
        return outs if not mutating else outs[0] if outputs == 1 else tuple(outs)

    name = "%s::task%d%s" % (_egg_op_namespace(), index, "_train" if mutating else "")
    returns = "Tensor[]" if not mutating else "Tensor" if outputs == 1 else "(%s)" % ", ".join(["Tensor"] * outputs)
    schema = "(Tensor[] xs, Tensor[] params, Tensor%s[] buffers, SymInt owner) -> %s" % (
        "(a2!)" if mutating else "", returns)
    op = _egg_torch.library.custom_op(name, kernel, mutates_args=("buffers",) if mutating else (), schema=schema)
    op.register_fake(fake)
    _egg_ops[(index, mutating)] = op
    return op


class _EggKernelPart(nn.Module):
    """One occurrence of a kernel's subgraph: an instance of its task's
    kernel of its own, bound once to this occurrence's tensors (held here
    too, so that torch.compile sees them), and the task's own PyTorch Model
    on the meta device, which says the outputs' shapes and dtypes to
    torch.compile (the custom operator's fake). Nothing is rebound per
    call, so threads may share the drop-in. Called directly in a plain
    forward (nothing between the part and its kernel); under torch.compile
    through the custom operator."""

    def __init__(self, index, spec, tensors):
        super().__init__()
        kernel = _egg_source_module(spec["source"]).ModelNew()
        with _egg_torch.device("meta"):
            reference = _egg_source_module(spec["reference"]).Model()
        # Neither is a submodule: their tensors are the program's, which
        # the program holds and moves (_EggComposed._apply rebinds them).
        object.__setattr__(self, "_egg_kernel", kernel)
        object.__setattr__(self, "_egg_reference", reference)
        self._egg_index = index
        self._egg_name = spec["name"]
        self._egg_single = len(spec["outputs"]) == 1
        self._egg_layouts = [l["stride"] if l else None for l in spec.get("output_layouts") or []]
        self._egg_keys = list(tensors)
        self._egg_kernel_keys = _egg_bind(kernel, tensors, "the kernel of %s" % spec["name"])
        for j, t in enumerate(tensors.values()):
            if isinstance(t, nn.Parameter):
                self.register_parameter("t%d" % j, t)
            else:
                self.register_buffer("t%d" % j, t)
        self._egg_lists()
        _egg_op(index, False, len(spec["outputs"]))
        if self._egg_buffers:
            _egg_op(index, True, len(spec["outputs"]))
        self._egg_own_number()

    def _egg_own_number(self):
        """Its number among every part in this process: the operator, one
        per distinct task, runs the kernel instance of the caller."""
        self._egg_owner_number = next(_egg_owner_numbers)
        _egg_owners[self._egg_owner_number] = self

    def __setstate__(self, state):
        # A copy (copy.deepcopy, pickle) is a part of its own: its compiled
        # forward must run its own kernel instance, not the original's.
        super().__setstate__(state)
        self._egg_own_number()

    def _egg_lists(self):
        tensors = [getattr(self, "t%d" % j) for j in range(len(self._egg_keys))]
        self._egg_params = [t for t in tensors if isinstance(t, nn.Parameter)]
        self._egg_buffers = [t for t in tensors if not isinstance(t, nn.Parameter)]
        self._egg_param_keys = [k for k, t in zip(self._egg_keys, tensors) if isinstance(t, nn.Parameter)]
        self._egg_buffer_keys = [k for k, t in zip(self._egg_keys, tensors) if not isinstance(t, nn.Parameter)]

    def _egg_rebind(self, tensors, fn):
        """The program's tensors (in the part's key order) after the program
        was moved or cast: the kernel's own tensors are moved first, then
        the program's are bound over the ones it held."""
        if fn is not None:
            self._egg_kernel._apply(fn)
        for j, t in enumerate(tensors):
            (self._parameters if isinstance(t, nn.Parameter) else self._buffers)["t%d" % j] = t
        _egg_rebind(self._egg_kernel, self._egg_kernel_keys, tensors)
        self._egg_lists()

    def train(self, mode=True):
        super().train(mode)
        self._egg_kernel.train(mode)
        return self

    def _egg_call(self, xs):
        try:
            out = self._egg_kernel.forward(*xs)
        except RuntimeError as e:
            # Triton with no GPU driver: on the CPU its kernels run only in
            # its interpreter, which TRITON_INTERPRET=1 turns on (read when
            # the kernels are defined: before this file builds its parts).
            if "active drivers" not in str(e):
                raise
            raise RuntimeError("egg drop-in: Triton has no active GPU driver to run the kernel of %s on %s: on the "
                               "CPU set TRITON_INTERPRET=1 before the drop-in is built (TRITON_INTERPRET=1 python3 "
                               "...), or run it on a GPU" % (self._egg_name, xs[0].device if xs else "this device")
                               ) from None
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        return [_egg_laid_out(o, self._egg_layouts[i] if i < len(self._egg_layouts) else None)
                for i, o in enumerate(outs)]

    def _egg_fake(self, xs, params, buffers):
        state = dict(zip(self._egg_param_keys, params))
        state.update(zip(self._egg_buffer_keys, buffers))
        out = _egg_torch.func.functional_call(self._egg_reference, state, tuple(xs))
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        layouts = self._egg_layouts
        return [o.new_empty_strided(o.shape, _egg_dense_strides(o.shape, layouts[i] if i < len(layouts)
                                                                else o.stride()))
                for i, o in enumerate(outs)]

    def forward(self, *xs):
        if _egg_torch.compiler.is_compiling():
            mutating = self.training and bool(self._egg_buffers)
            outs = _egg_ops[(self._egg_index, mutating)](list(xs), self._egg_params, self._egg_buffers,
                                                        self._egg_owner_number)
            if mutating:
                outs = [outs] if self._egg_single else list(outs)
        else:
            outs = self._egg_call(xs)
        return outs[0] if self._egg_single else tuple(outs)


def _egg_checked(inputs):
    """Whether the kernels were checked on these inputs: the shapes the
    program was split at (with their dtypes and strides) or shapes egg
    checked the composition at end to end ("checked_shapes", with the
    same dtypes and dense layouts), on the device type they ran on."""
    plan = _EGG_PLAN
    layouts, device = plan["input_layouts"], plan["device"]
    if len(inputs) != len(plan["inputs"]):
        return False
    for x, layout in zip(inputs, layouts):
        if not isinstance(x, _egg_torch.Tensor):
            continue
        if device is not None and x.device.type != device:
            return False
        if layout and str(x.dtype) != "torch." + layout["dtype"]:
            return False
    traced = plan["input_shapes"]
    if traced is None:
        return True
    for shapes in [traced] + list(plan["checked_shapes"]):
        if all(want is None or (isinstance(x, _egg_torch.Tensor) and list(x.shape) == want)
               for x, want in zip(inputs, shapes)):
            return all(not isinstance(x, _egg_torch.Tensor) or not layout or
                       (list(x.stride()) == layout["stride"] if shapes is traced
                        else x.stride() == _egg_dense_strides(x.shape, layout["stride"]))
                       for x, layout in zip(inputs, layouts))
    return False


def _egg_output(values, tree=None):
    """The program's output from the values of the forward's last lines:
    the plan's tree ({"value": NAME}, {"tuple": [...]}, {"list": [...]},
    {"dict": [[KEY, ...], ...]} or {"const": VALUE}) with each value put in."""
    if tree is None:
        tree = _EGG_PLAN["output"]
    if "value" in tree:
        return values[tree["value"]]
    if "tuple" in tree:
        return tuple(_egg_output(values, t) for t in tree["tuple"])
    if "list" in tree:
        return [_egg_output(values, t) for t in tree["list"]]
    if "dict" in tree:
        return {k: _egg_output(values, t) for k, t in tree["dict"]}
    return tree["const"]


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
        # The names the program's forward takes its inputs by (a keyword call
        # of the drop-in, as of an encoder-decoder, is put in that order).
        self._egg_input_names = [p.name for p in
                                 _egg_inspect.signature(type(program).forward).parameters.values()][1:]
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
        parts, tasks, self._egg_bound = [], {}, []
        for i, spec in enumerate(_EGG_PLAN["parts"]):
            tensors = {key: self._egg_tensor(program_key) for key, program_key in spec["params"].items()}
            if spec["kind"] == "kernel":
                part = _EggKernelPart(tasks.setdefault(spec["task"], len(tasks)), spec, tensors)
                self._egg_bound.append((i, None, list(spec["params"].values())))
            else:
                part = _egg_source_module(spec["source"]).Model()
                keys = _egg_bind(part, tensors, "part %d (%s)" % (i, spec["name"]))
                self._egg_bound.append((i, keys, list(spec["params"].values())))
            parts.append(part)
        self._egg_parts = nn.ModuleList(parts)
        self._egg_run = tuple(p.forward for p in parts)
        _egg_composed_state_hooks(self)

    def _egg_tensor(self, key):
        owner, leaf = _egg_owner(self, key)
        return getattr(owner, leaf)

    def _egg_positional(self, inputs, named):
        """A call with inputs by name as the program's inputs in order, or
        None when it names others (the program's own forward then takes it)."""
        want = self._egg_input_names[len(inputs):len(_EGG_PLAN["inputs"])]
        if len(inputs) + len(named) != len(_EGG_PLAN["inputs"]) or any(n not in named for n in want):
            return None
        return tuple(inputs) + tuple(named[n] for n in want)

    def _apply(self, fn, recurse=True):
        # Moving or casting converts the program's tensors and, apart, the
        # copies the parts hold of its buffers: each part is then bound to
        # the program's own again, so that a buffer stays one tensor.
        super()._apply(fn, recurse)
        for i, keys, program_keys in self._egg_bound:
            part, tensors = self._egg_parts[i], [self._egg_tensor(k) for k in program_keys]
            if keys is None:
                part._egg_rebind(tensors, fn)
            else:
                _egg_rebind(part, keys, tensors)
        return self
