"""sandbox_layers.py: which layer of the candidate sandbox a device driver
needs changed. Tries CUDA (or the CPU) in a freshly forked child after
sandbox.confine() with the layers switched on one by one, and prints one
line per combination. Run on a GPU machine from the repository root:
    python3 bench/sandbox_layers.py [cuda|cpu]
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "worker"))
import torch  # noqa: E402  (imported before forking, as the worker does)

from egg_worker import sandbox  # noqa: E402

OFF = {"namespaces": False, "seccomp": False, "drop_capabilities": False}
LAYERS = [
    ("nothing", OFF),
    ("seccomp only", dict(OFF, seccomp=True)),
    ("capabilities dropped only", dict(OFF, drop_capabilities=True)),
    ("namespaces, no mounts", dict(OFF, namespaces=True, mounts=False)),
    ("namespaces + hidden folders", dict(OFF, namespaces=True, proc=False, dev=False, read_only=False)),
    ("+ private /proc", dict(OFF, namespaces=True, dev=False, read_only=False)),
    ("+ minimal /dev", dict(OFF, namespaces=True, read_only=False)),
    ("+ read-only root", dict(OFF, namespaces=True)),
    ("+ capabilities dropped", dict(OFF, namespaces=True, drop_capabilities=True)),
    ("everything (+ seccomp)", {}),
    ("everything but seccomp", {"seccomp": False}),
    ("everything but the minimal /dev", {"dev": False}),
    ("everything but read-only", {"read_only": False}),
    ("everything, /proc writable", {"also_writable": ["/proc"]}),
    ("everything, NVIDIA devices writable", {"also_writable": "NVIDIA"}),
    ("everything, /sys writable", {"also_writable": ["/sys"]}),
    ("everything, HOME in scratch", {"home_in_scratch": True}),
    ("everything, /dev writable", {"also_writable": ["/dev"]}),
]


def attempt(spec: dict, device: str) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out: dict = {}
        try:
            if spec.get("also_writable") == "NVIDIA":
                import glob
                spec["also_writable"] = sorted(glob.glob("/dev/nvidia*"))
            if spec.get("home_in_scratch"):
                os.environ["HOME"] = spec["writable"][0]
                os.environ["CUDA_CACHE_PATH"] = spec["writable"][0]
            out["facts"] = sandbox.confine(spec)
            x = torch.ones(1024, device=device)
            out["sum"] = float((x * 2).sum())
        except BaseException as e:
            out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data or b'{"error": "no answer"}')


def main() -> int:
    device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    scratch = tempfile.mkdtemp(prefix="egg-layers-")
    base = dict(sandbox.policy_paths(), writable=[scratch])
    for name, spec in LAYERS:
        res = attempt(dict(base, **spec), device)
        verdict = "ok" if "sum" in res else f"FAILS: {res.get('error')}"
        keys = ("pid_namespace", "mount_namespace", "private_proc", "read_only_root", "seccomp", "capabilities")
        facts = {k: res.get("facts", {}).get(k) for k in keys}
        print(f"{name:34s} {verdict}  {facts}", flush=True)
    os.rmdir(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
