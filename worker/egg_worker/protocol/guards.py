"""guards.py: run-time integrity checks inside the candidate's process.

They record Triton launches, reject PyTorch compute in forward outside a
small allowlist of glue, and snapshot global flags. They run in a hostile
process, so they are one layer only: the verdict, the comparison and the
clock live in processes that never load the candidate.
"""
from __future__ import annotations

import contextlib
import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# ATen ops a forward may call outside Triton kernels: allocation, views,
# layout copies and casts, fills, metadata. Anything else (mm, conv, sum,
# softmax, add, relu, ...) is real work done by PyTorch, not the candidate.
ALLOWED_OPS = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros
ones ones_like new_ones full full_like new_full fill_ zero_ arange lift_fresh
view _unsafe_view reshape _reshape_alias view_as as_strided permute transpose t
expand expand_as squeeze unsqueeze flatten unflatten slice select narrow split
split_with_sizes chunk unbind alias detach contiguous clone copy_ _to_copy to
resize_ set_ sym_size sym_stride sym_numel sym_storage_offset is_contiguous stride
size numel dim _local_scalar_dense item lift _has_compatible_shallow_copy_type
""".split())


class _Watch(TorchDispatchMode):
    def __init__(self, guard: "Guard"):
        super().__init__()
        self.guard = guard

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if not self.guard.in_launch:
            if name not in ALLOWED_OPS:
                self.guard.violations.append(f"aten.{name}")
            elif _crosses_devices(name, args, kwargs):
                # A round trip through host memory hides computation (numpy,
                # Python) from this watch: glue never needs it.
                self.guard.violations.append(f"aten.{name} across devices")
        return func(*args, **kwargs)


def _crosses_devices(name: str, args, kwargs) -> bool:
    if name in ("_to_copy", "to") and args and isinstance(args[0], torch.Tensor):
        dev = kwargs.get("device")
        return dev is not None and torch.device(dev) != args[0].device
    if name == "copy_" and len(args) > 1 and isinstance(args[0], torch.Tensor) and isinstance(args[1], torch.Tensor):
        return args[0].device != args[1].device
    return False


def launch_config(fn_self, args: tuple, kwargs: dict) -> dict:
    """One Triton launch as the tuning stages read it: the kernel's name,
    its grid (a callable grid evaluated as Triton does, on the launch's
    named arguments) and its compile-time values: the block sizes and the
    warps and stages (an autotuned kernel's chosen configuration arrives
    here as keyword arguments)."""
    names = list(getattr(fn_self, "arg_names", None) or [])
    named = dict(zip(names, args))
    named.update({k: v for k, v in kwargs.items() if k not in ("grid", "warmup")})
    grid = kwargs.get("grid")
    if callable(grid):
        try:
            grid = grid(named)
        except Exception:
            grid = None
    if isinstance(grid, int):
        grid = (grid,)
    constexpr = {p.name for p in getattr(fn_self, "params", []) if getattr(p, "is_constexpr", False)}
    values = {k: v for k, v in named.items()
              if (k in constexpr or k in kwargs) and isinstance(v, (bool, int, float, str)) and v is not None}
    fn = getattr(fn_self, "fn", None)
    return {"kernel": str(getattr(fn, "__name__", None) or getattr(fn_self, "__name__", "?"))[:60],
            "grid": [int(g) for g in grid][:3] if isinstance(grid, (tuple, list)) and
            all(isinstance(g, int) for g in grid) else None,
            "config": {str(k)[:40]: v if not isinstance(v, str) else v[:40] for k, v in list(values.items())[:24]}}


class Guard:
    """Counts Triton launches (JIT and interpreter), keeps each kernel's
    last launch configuration, and watches ATen ops."""

    def __init__(self) -> None:
        self.launches = 0
        self.in_launch = 0
        self.violations: list[str] = []
        self.configs: dict = {}
        self._patch()

    def _wrap(self, cls) -> None:
        original = cls.run
        guard = self

        def run(fn_self, *args, **kwargs):
            if not kwargs.get("warmup", False):
                guard.launches += 1
                if len(guard.configs) < 16 or id(fn_self) in guard.configs:
                    try:
                        guard.configs[id(fn_self)] = launch_config(fn_self, args, kwargs)
                    except Exception:
                        pass
            guard.in_launch += 1
            try:
                return original(fn_self, *args, **kwargs)
            finally:
                guard.in_launch -= 1

        cls.run = run

    def _patch(self) -> None:
        from triton.runtime.jit import JITFunction

        self._wrap(JITFunction)
        try:
            from triton.runtime.interpreter import InterpretedFunction

            self._wrap(InterpretedFunction)
        except ImportError:
            pass

    @contextlib.contextmanager
    def watch(self):
        """Watch one forward call: collect violations and count launches."""
        self.violations = []
        self.launches = 0
        with _Watch(self):
            yield


def global_flags() -> dict:
    """Process-wide settings a candidate could flip to change precision or
    to make the allocator or the timer behave differently."""
    flags = {"default_dtype": str(torch.get_default_dtype()),
             "matmul_precision": torch.get_float32_matmul_precision(),
             "deterministic": torch.are_deterministic_algorithms_enabled(),
             "fill_uninitialized": torch.utils.deterministic.fill_uninitialized_memory,
             "num_threads": torch.get_num_threads()}
    for name, getter in (("cuda_matmul_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
                         ("cudnn_tf32", lambda: torch.backends.cudnn.allow_tf32),
                         ("fp16_reduced", lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
                         ("bf16_reduced", lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)):
        try:
            flags[name] = getter()
        except Exception:
            flags[name] = None
    return flags


def apply_precision(precision: str) -> None:
    """fp32 (default): no TF32 anywhere, on both sides. tf32: allowed on both."""
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def candidate_threads(before: set, kernel_path: str) -> list[str]:
    """Threads started since `before` whose code lives in the candidate file."""
    out = []
    for th in threading.enumerate():
        if th in before or not th.is_alive():
            continue
        target = getattr(th, "_target", None) or getattr(type(th), "run", None)
        code = getattr(target, "__code__", None)
        if code is not None and code.co_filename == kernel_path:
            out.append(th.name)
    return out
