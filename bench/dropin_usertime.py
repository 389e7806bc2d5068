"""dropin_usertime.py PROGRAM IDENTITY DROPIN: one network's row of the
drop-in table (bench/dropin-gpu.sh). egg's worker times the original and
each composition every way a user runs a model (its op "usertime", the one
egg optimize --split decides by), and torch._dynamo.explain counts the
graph breaks of each composition. Prints JSON."""
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wclient import Worker  # noqa: E402

prog, identity, dropin = sys.argv[1:4]
src = open(prog).read()
ways = ["eager", "plain", "compile", "compile_cudagraphs"]
out = {}
w = Worker("cuda")
for name, path in (("identity", identity), ("dropin", dropin)):
    r = w.call({"op": "usertime", "device": "cuda", "task_source": src, "kernel_source": open(path).read(),
                "timeout_s": 1200.0, "wall_iters": 100, "ways": ways, "iters": 20, "warmup": 3})
    out[name] = r
w.close() if hasattr(w, "close") else None

import torch  # noqa: E402
import torch._dynamo  # noqa: E402


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


P = load("prog", prog)
torch.manual_seed(0)
ref = P.Model(*P.get_init_inputs()).cuda()
xs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in P.get_inputs()]
for name, path in (("identity", identity), ("dropin", dropin)):
    C = load("c_" + name, path)
    new = C.ModelNew(*P.get_init_inputs()).cuda()
    new.load_state_dict(ref.state_dict())
    new.train(ref.training)
    torch._dynamo.reset()
    with torch.no_grad():
        ex = torch._dynamo.explain(new)(*xs)
        torch._dynamo.reset()
        a = ref(*xs)
        b = torch.compile(new, mode="reduce-overhead")(*xs)
        b = torch.compile(new, mode="reduce-overhead")(*xs)
    a = a if isinstance(a, torch.Tensor) else a[0]
    b = b if isinstance(b, torch.Tensor) else b[0]
    out[name + "_explain"] = {"graphs": ex.graph_count, "breaks": ex.graph_break_count,
                              "reasons": [str(r.reason)[:200] for r in ex.break_reasons][:3],
                              "max_abs_diff_compiled_cudagraphs": float((a.float() - b.float()).abs().max())}
print(json.dumps(out))
