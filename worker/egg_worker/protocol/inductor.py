"""inductor.py: what torch.compile does with a task, told to the model.

A kernel for a part is worth its place only when it beats what the user
runs, most often torch.compile; the model aims better when it knows what
Inductor made of the part: which launches it runs, which operations each
generated kernel fuses, which calls it leaves to a library (cuBLAS, cuDNN,
or PyTorch's own kernels), and the time of each. The baseline process
captures Inductor's output code on its first compiled call (capture), reads
it here (summarize: no code is run or imported) and, on a GPU, times each
launch with the profiler (launch_times). egg writes the summary into the
task's prompts, as a reference (its library calls are not open to a
kernel), never as a seed.
"""
from __future__ import annotations

import re

# A generated kernel's definition: NAME = async_compile.triton('NAME', ...)
# on a GPU, async_compile.cpp_pybinding(...) on the CPU.
_DEFINITION = re.compile(r"^(\w+) = async_compile\.(triton|cpp_pybinding|cpp|cuda|halide)\(", re.M)
# A launch inside call(): a generated kernel (NAME.run(...) or NAME(...)), a
# library call (extern_kernels.mm(...)) or a PyTorch fallback
# (torch.ops.aten.sort.default(...)).
_LIBRARY = re.compile(r"\b(extern_kernels\.\w+|torch\.ops\.\w+\.\w+(?:\.\w+)?)\(")
_ORIGIN = re.compile(r"#.*Source Nodes: \[([^\]]*)\], Original ATen: \[([^\]]*)\]")
# What each library call is (the library the device runs it in).
_LIBRARIES = {"mm": "cuBLAS", "bmm": "cuBLAS", "addmm": "cuBLAS", "baddbmm": "cuBLAS", "_int_mm": "cuBLAS",
              "_scaled_mm": "cuBLAS", "convolution": "cuDNN", "_convolution": "cuDNN"}
# Names Inductor gives its kernels: triton_{poi,red,per,tem}_fused_OPS_N.
_FUSED = re.compile(r"^(?:triton|cpp)_(?:(poi|red|per|tem|for|mm)_)?fused_(.*?)_\d+$")
_KIND_WORDS = {"poi": "pointwise", "red": "reduction", "per": "persistent reduction", "tem": "template (matmul)"}


def capture(compiled, args: list) -> tuple:
    """(the outputs of the compiled call on `args`, Inductor's output code as
    one text, or None when it could not be captured: that is no failure of
    the baseline)."""
    try:
        from torch._inductor.utils import run_and_get_code
    except ImportError:
        return compiled(*args), None
    out, codes = run_and_get_code(compiled, *args)
    return out, "\n\n".join(codes) if codes else None


def _call_body(code: str) -> str:
    """The text of the generated call() (the launches, in order)."""
    at = code.find("def call(")
    if at < 0:
        return ""
    end = code.find("\nrunner = ", at)
    if end < 0:
        end = code.find("\ndef get_args(", at)
    return code[at:end if end > 0 else len(code)]


def _ops_of(name: str) -> tuple:
    """(the fused operations, the kernel's kind) as Inductor's name says them."""
    m = _FUSED.match(name)
    if not m:
        return [], "generated"
    ops = [op for op in m.group(2).split("_") if op]
    # Inductor joins the operations' names with _; rejoin its known pieces.
    joined, out = "_".join(ops), []
    for known in ("native_layer_norm", "native_batch_norm", "scaled_dot_product", "_native_batch_norm_legit",
                  "native_group_norm", "log_softmax", "_log_softmax", "_softmax", "leaky_relu", "gelu",
                  "silu", "sigmoid", "tanh", "softmax", "mean", "var_mean", "rsqrt", "convolution", "addmm",
                  "clone", "permute", "view", "add", "mul", "div", "sub", "pow", "relu", "sum", "max",
                  "exp", "neg", "cat", "copy", "embedding", "where", "mm", "bmm", "sqrt", "erf"):
        joined = joined.replace(known, known.replace("_", "\x00"))
    out = [op.replace("\x00", "_") for op in joined.split("_") if op]
    return out, _KIND_WORDS.get(m.group(1) or "", "generated")


def summarize(code: str | None, device: str = "cuda") -> dict | None:
    """Inductor's output code read as launches in call order:
    {"launches": [{"name", "kind": "generated" | "library", "what", "ops",
    "aten"}], "generated": N, "library": N, "device"}; None without code.
    `device` is the device type it was compiled for: a library call is
    cuBLAS's or cuDNN's on a GPU, PyTorch's own CPU library elsewhere."""
    if not code:
        return None
    generated = {m.group(1): m.group(2) for m in _DEFINITION.finditer(code)}
    launches, origin = [], None
    for line in _call_body(code).splitlines():
        o = _ORIGIN.search(line)
        if o:
            origin = [a.strip() for a in o.group(2).split(",") if a.strip()]
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        m = re.match(r"^(?:\w+ = )?(\w+)(?:\.run)?\(", stripped)
        if m and m.group(1) in generated:
            name = m.group(1)
            ops, kind = _ops_of(name)
            launches.append({"name": name, "kind": "generated", "what": "Triton " + kind if
                             generated[name] == "triton" else "C++" if generated[name].startswith("cpp") else
                             generated[name], "ops": ops, "aten": origin or []})
            origin = None
            continue
        lib = _LIBRARY.search(stripped)
        if lib:
            call = lib.group(1)
            leaf = call.split(".")[1] if call.startswith("extern_kernels.") else call.split(".")[3] \
                if call.count(".") >= 3 else call
            what = _LIBRARIES.get(leaf, "PyTorch") if device == "cuda" else "PyTorch's CPU library"
            launches.append({"name": call, "kind": "library", "what": what, "ops": [leaf], "aten": origin or []})
            origin = None
    return {"launches": launches, "generated": sum(x["kind"] == "generated" for x in launches),
            "library": sum(x["kind"] == "library" for x in launches), "device": device}


def launch_times(summary: dict | None, compiled, args: list, calls: int = 5) -> None:
    """Each launch's device time per call (ms), measured with the profiler
    over `calls` calls on a GPU, into the summary ("ms" per launch,
    "device_kernels" for a library call: the kernels the library ran, by
    their names), and "device_ms", their sum; nothing on the CPU, where
    Inductor's kernels are not profiled by name."""
    import torch

    if not summary or not summary["launches"] or not torch.cuda.is_available():
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            compiled(*args)
        torch.cuda.synchronize()
    events = list(prof.events())
    kernels = [(e.name, e.device_time_total / 1000.0) for e in events
               if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time_total > 0]
    # A library call is a PyTorch operator on the host that launched the
    # device's kernels: the top-level aten operators, in order, call by call.
    ops = sorted((e for e in events if e.device_type == torch.autograd.DeviceType.CPU and
                  e.name.startswith("aten::") and (e.cpu_parent is None or
                                                   not e.cpu_parent.name.startswith("aten::"))
                  and e.device_time_total > 0), key=lambda e: e.time_range.start)
    library = [(e.device_time_total / 1000.0, [k.name for k in getattr(e, "kernels", [])]) for e in ops]
    assign_times(summary, kernels, library, calls)


def assign_times(summary: dict, kernels: list, library: list, calls: int) -> None:
    """The profile put to the launches: each generated kernel's time by its
    name from `kernels` ((name, ms) of every device kernel); each library
    call's from `library` ((ms, [kernel names]) of the host operators that
    launched device work, in order over `calls` calls), when they are as
    many as the library calls; else every device kernel that is no
    generated one goes to the first library call (one sum, said so)."""
    launches = summary["launches"]
    generated = {x["name"]: x for x in launches if x["kind"] == "generated"}
    lib_launches = [x for x in launches if x["kind"] == "library"]
    for x in launches:
        x["ms"] = 0.0
    for name, ms in kernels:
        if name in generated:
            generated[name]["ms"] += ms / calls
    if lib_launches and len(library) == calls * len(lib_launches):
        for i, (ms, names) in enumerate(library):
            x = lib_launches[i % len(lib_launches)]
            x["ms"] += ms / calls
            seen = x.setdefault("device_kernels", [])
            for name in names:
                short = name if len(name) <= 80 else name[:77] + "..."
                if short not in seen and len(seen) < 3:
                    seen.append(short)
    elif lib_launches:
        other = [(n, ms) for n, ms in kernels if n not in generated]
        lib_launches[0]["ms"] = sum(ms for _, ms in other) / calls
        lib_launches[0]["device_kernels"] = sorted({n[:80] for n, _ in other})[:3]
        summary["library_times_summed"] = True
    summary["device_ms"] = sum(x["ms"] for x in launches)
