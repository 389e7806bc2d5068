"""probe.py: report the worker's Python, library versions, GPUs and sandboxing as JSON."""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys

from .. import sandbox
from . import sizes

# worker/, the folder that holds egg-worker.py (this file is worker/egg_worker/device/probe.py).
WORKER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version(module: str) -> tuple[str | None, str | None]:
    try:
        mod = __import__(module)
        return getattr(mod, "__version__", "unknown"), None
    except Exception as e:  # report, do not fail: doctor prints it
        return None, f"{type(e).__name__}: {e}"


def device_facts(torch, index: int) -> dict:
    """Facts about one GPU that prompts and reports use."""
    p = torch.cuda.get_device_properties(index)
    free, _ = torch.cuda.mem_get_info(index)
    return {
        "index": index,
        "free_bytes": int(free),
        "name": p.name,
        "sm_count": p.multi_processor_count,
        "l2_bytes": int(getattr(p, "L2_cache_size", 0)),
        "memory_bytes": int(p.total_memory),
        "compute_capability": f"{p.major}.{p.minor}",
        "smem_per_sm_bytes": int(getattr(p, "shared_memory_per_multiprocessor", 0)),
        "smem_per_block_optin_bytes": int(getattr(p, "shared_memory_per_block_optin", 0)),
        "regs_per_sm": int(getattr(p, "regs_per_multiprocessor", 0)),
    }


def _run(argv: list[str], timeout: float) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, str(e)


def find_ncu() -> str | None:
    path = shutil.which("ncu")
    if path:
        return path
    for candidate in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def ncu_facts(with_gpu: bool) -> dict:
    """Whether ncu exists and may read hardware counters (tried on a tiny kernel)."""
    ncu = find_ncu()
    if not ncu:
        return {"ncu": None}
    out: dict = {"ncu": ncu}
    rc, text = _run([ncu, "--version"], 30)
    out["ncu_version"] = text.strip().splitlines()[-1] if rc == 0 and text.strip() else None
    if not with_gpu:
        out["ncu_counters"] = "untested (no GPU)"
        return out
    launcher = os.path.join(WORKER_DIR, "egg-worker.py")
    rc, text = _run([ncu, "--clock-control", "none", "--metrics", "sm__cycles_elapsed.avg", "--csv",
                     sys.executable, "-I", launcher, "ncu-selftest"], 240)
    if "ERR_NVGPUCTRPERM" in text:
        out["ncu_counters"] = "not permitted (ERR_NVGPUCTRPERM)"
    elif "sm__cycles_elapsed.avg" in text and rc == 0:
        out["ncu_counters"] = "permitted"
    else:
        tail = " ".join(text.strip().splitlines()[-3:])[:300]
        out["ncu_counters"] = f"failed (exit {rc}): {tail}"
    return out


def driver_version() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    rc, text = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], 30)
    return text.strip().splitlines()[0] if rc == 0 and text.strip() else None


def selftest_kernel() -> int:
    """A tiny CUDA workload for the ncu permission check."""
    import torch

    x = torch.ones(1024, device="cuda")
    (x * 2).sum().item()
    return 0


def probe(with_ncu: bool = True) -> dict:
    out: dict = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "host_available_bytes": sizes.available_host_bytes(),  # the CPU's admission budget
    }
    for name in ("numpy", "torch", "triton"):
        ver, err = _version(name)
        out[name] = ver
        if err:
            out[f"{name}_error"] = err
    out["gpus"] = []
    if out["torch"]:
        import torch

        out["cuda_runtime"] = torch.version.cuda
        try:
            if torch.cuda.is_available():
                out["gpus"] = [device_facts(torch, i) for i in range(torch.cuda.device_count())]
        except Exception as e:
            out["cuda_error"] = f"{type(e).__name__}: {e}"
    out["driver"] = driver_version() if out["gpus"] else None
    if with_ncu:
        out.update(ncu_facts(bool(out["gpus"])))
    out["root"] = os.getuid() == 0
    drop = False
    if out["root"]:
        import tempfile

        paths = [os.path.dirname(os.__file__), sys.executable, WORKER_DIR]
        for name in ("torch", "triton", "numpy"):
            try:
                paths.append(os.path.dirname(__import__(name).__file__))
            except Exception:
                pass
        why = sandbox.can_drop_privileges(paths, tempfile.gettempdir())
        out["privilege_drop"] = drop = why is None
        if why:
            out["privilege_note"] = why
    out["sandbox"] = sandbox_facts(drop)
    out["network_isolation"] = bool(out["sandbox"].get("network_isolated"))
    if not out["network_isolation"]:
        out["network_isolation_error"] = out["sandbox"].get("namespace_error") or out["sandbox"].get("error")
    return out


def sandbox_facts(drop_to_nobody: bool) -> dict:
    """What a candidate's sandbox holds here (sandbox.confine, tried in a
    throwaway child)."""
    import tempfile

    probe_dir = tempfile.mkdtemp(prefix="egg-sandbox-probe-")
    try:
        facts = sandbox.probe(dict(sandbox.policy_paths(), writable=[probe_dir], drop_to_nobody=drop_to_nobody))
    finally:
        os.rmdir(probe_dir)
    facts["writable"] = ["(its scratch folder)" if p == os.path.realpath(probe_dir) else p
                         for p in facts.get("writable", [])]
    return facts


def main(argv: list[str]) -> int:
    sys.stdout.write(json.dumps(probe(with_ncu="--no-ncu" not in argv)) + "\n")
    return 0
