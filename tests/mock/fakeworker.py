#!/usr/bin/env python3
"""fakeworker.py: a trivially fast stand-in for the eval worker (protocol of
worker/PROTOCOL.md), for measuring egg's own orchestration overhead and for
driving branches of egg that need a GPU's answers on a machine without one.
Every candidate passes; its time is derived from a hash of its source, so
that different kernels get different, repeatable times (a line `# fake-ms: X`
in the source sets it to X ms). It reports one fake
GPU. Faults and answers a test can ask for, through the environment:
  FAKEWORKER_PROFILE_NS=N    the profile op returns an Nsight Compute report
                             of one kernel that ran N ns (else: no profiler)
  FAKEWORKER_PROFILE_METRICS=waves_per_sm=12,sm_throughput_pct=70,...
                             that report's figures (waves_per_sm,
                             sm_throughput_pct, dram_throughput_pct; the
                             others keep the report's own)
  FAKEWORKER_SLOWER_AGAIN=1  a kernel evaluated again takes twice as long
  FAKEWORKER_DIE_ONCE=FILE   the first eval job kills the worker (creating
                             FILE, so that the restarted worker lives)
  FAKEWORKER_JOBS=FILE       appends each job's op to FILE
  FAKEWORKER_ROOFLINE_MS=X   the baseline counts a task whose least traffic
                             takes X ms at the fake GPU's calibrated 1 TB/s
  FAKEWORKER_FLOPS=N         ... and N FLOPs (fp32 peak: 1e14/3 as tf32x3)
  FAKEWORKER_PRACTICAL=1     the calibration has a practical bound (egg's own
                             Triton matrix products: fp32 best 5 TFLOP/s as
                             tf32x3; =no-cublas: without cuBLAS's figures)
  FAKEWORKER_FAIL_MARK=TEXT  a kernel containing TEXT fails to compile
  FAKEWORKER_COMPILE_CODE=FILE  the baseline carries torch.compile's output
                             code from FILE (a recorded one) and its summary
                             (the worker's own inductor.summarize), each
                             launch at the ms of FAKEWORKER_COMPILE_MS=a,b,...
  FAKEWORKER_SPLIT=FILE      the split op answers the plan in FILE (a scripted
                             network), each subgraph's and block's "source"
                             read from its "source_file" beside FILE
  FAKEWORKER_PROGRESS=1      an eval job says three progress steps first
A task's source may set its own baseline: `# fake-eager-ms: X`,
`# fake-compile-ms: Y`, `# fake-roofline-ms: Z` (least traffic taking Z ms
at the fake 1 TB/s). The usertime op answers the drop-in at half the
original's time, every way, in three rounds.
                             (at 3 s, 12 s and 41.5 s, as if it had taken that
                             long)"""
import hashlib
import json
import os
import sys

# ncu's raw CSV page for one kernel (the columns egg asks for).
PROFILE_CSV = """"ID","Kernel Name","Block Size","Grid Size","dram__throughput.avg.pct_of_peak_sustained_elapsed",\
"gpu__time_duration.sum","launch__grid_size","launch__registers_per_thread","lts__t_sector_hit_rate.pct",\
"sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active",\
"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct","launch__block_size","launch__waves_per_multiprocessor"
"","","","","%","ns","","register/thread","%","%","%","%","",""
"0","brs_kernel","(128, 1, 1)","(64, 1, 1)","{dram_throughput_pct}","{ns}","64","32","40.00","{sm_throughput_pct}",\
"60.00","30.00","128","{waves_per_sm}"
"""
PROFILE_FIGURES = {"dram_throughput_pct": "50.00", "sm_throughput_pct": "20.00", "waves_per_sm": "0.50"}


def source_marks(source: str) -> dict:
    """The `# fake-NAME: X` lines of a source, {NAME: X}."""
    marks = {}
    for line in source.splitlines():
        if line.startswith("# fake-") and ":" in line:
            name, _, value = line[len("# fake-"):].partition(":")
            marks[name.strip()] = float(value)
    return marks


def scripted_split(path: str) -> dict:
    """The plan of FAKEWORKER_SPLIT with each part's text read in."""
    plan = json.load(open(path))
    for part in plan.get("subgraphs", []) + plan.get("blocks", []):
        part["source"] = open(os.path.join(os.path.dirname(path), part.pop("source_file"))).read()
    return plan


def main() -> int:
    kind = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cpu"
    out = sys.stdout
    out.write(json.dumps({"event": "hello", "protocol": 3, "device_kind": kind, "torch": "fake", "triton": "fake"}) + "\n")
    out.flush()
    seen: dict = {}
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if os.environ.get("FAKEWORKER_JOBS"):
            with open(os.environ["FAKEWORKER_JOBS"], "a") as f:
                f.write(f"{op}\n")
        die = os.environ.get("FAKEWORKER_DIE_ONCE")
        if op == "eval" and die and not os.path.exists(die):
            open(die, "w").close()
            os._exit(1)
        if op == "shutdown":
            out.write(json.dumps({"id": req["id"], "ok": True, "result": {}}) + "\n")
            break
        if op == "probe":
            res = {"platform": "fake", "driver": "fake", "gpus": [
                {"name": "Fake GPU", "sms": 1, "l2_bytes": 1 << 20, "memory_bytes": 80 << 30}]}
        elif op == "split" and os.environ.get("FAKEWORKER_SPLIT"):
            res = scripted_split(os.environ["FAKEWORKER_SPLIT"])
        elif op == "usertime":
            res = {side: {way: {"device_ms": ms, "device_cv": 0.0, "wall_ms": ms, "wall_rounds_ms": [ms] * 3}
                          for way in ways}
                   for side, ways, ms in (("original", ("eager", "compile", "compile_cudagraphs"), 2.0),
                                          ("dropin", ("plain", "compile", "compile_cudagraphs"), 1.0))}
        elif op == "baseline":
            res = {"eager_ms": 1.0, "compile_ms": 0.8, "eager": {"median": 1.0}}
            marks = source_marks(req.get("task_source") or "")
            if "eager-ms" in marks:
                res.update(eager_ms=marks["eager-ms"], eager={"median": marks["eager-ms"]})
            if "compile-ms" in marks:
                res["compile_ms"] = marks["compile-ms"]
            if "roofline-ms" in marks:
                res["work"] = {"flops": 0.0, "bytes": marks["roofline-ms"] * 1e9, "flops_by_op": {}, "half": False}
            if os.environ.get("FAKEWORKER_COMPILE_CODE"):
                sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
                from egg_worker.protocol import inductor
                code = open(os.environ["FAKEWORKER_COMPILE_CODE"]).read()
                res["compile_code"] = code
                res["compile_summary"] = inductor.summarize(code, "cuda")
                times = [float(x) for x in os.environ.get("FAKEWORKER_COMPILE_MS", "").split(",") if x]
                for launch, ms in zip(res["compile_summary"]["launches"], times):
                    launch["ms"] = ms
                if times:
                    res["compile_summary"]["device_ms"] = sum(times)
            if os.environ.get("FAKEWORKER_ROOFLINE_MS"):
                res["work"] = {"flops": float(os.environ.get("FAKEWORKER_FLOPS", 0)), "bytes": float(os.environ["FAKEWORKER_ROOFLINE_MS"]) * 1e9,
                               "flops_by_op": {}, "half": False}
        elif op == "calibrate":
            res = {"device": req.get("device"), "bandwidth_bytes_s": 1e12, "copy_bytes_s": 1e12,
                   "fp32_flops_s": 1e13, "tf32_flops_s": 1e14, "bf16_flops_s": 2e14, "method": {}}
            if os.environ.get("FAKEWORKER_PRACTICAL"):
                res["practical"] = {"flops_s": {"fp32_ieee": 4e12, "fp32_tf32x3": 5e12, "fp32_presplit": 4.5e12,
                                                "tf32": 8e12, "bf16": 5e13},
                                    "kernels": {"fp32_ieee": "pointer 128x128x32, 8 warps, 3 stages",
                                                "tf32": "tma 128x256x32, 8 warps, 3 stages"},
                                    "cublas_flops_s": {"tf32": 9e12, "bf16": 1e14},
                                    "fp32_best": "fp32_tf32x3", "size": 4096, "method": "fake"}
                if os.environ.get("FAKEWORKER_PRACTICAL") == "no-cublas":
                    del res["practical"]["cublas_flops_s"]
        elif op == "profile" and os.environ.get("FAKEWORKER_PROFILE_NS"):
            ns = int(os.environ["FAKEWORKER_PROFILE_NS"])
            figures = dict(PROFILE_FIGURES)
            for item in filter(None, os.environ.get("FAKEWORKER_PROFILE_METRICS", "").split(",")):
                name, value = item.split("=")
                figures[name] = value
            res = {"rc": 0, "stderr_tail": "", "seconds": 0.1, "csv": PROFILE_CSV.format(ns=f"{ns:,}", **figures)}
        elif op == "profile":
            res = {"rc": None, "csv": "", "error": "fake worker: no profiler"}
        else:
            h = int(hashlib.sha256((req.get("kernel_source") or "").encode()).hexdigest()[:8], 16)
            ms = 0.2 + (h % 1000) / 1000
            for line in (req.get("kernel_source") or "").splitlines():
                if line.startswith("# fake-ms:"):
                    ms = float(line.split(":")[1])
            seen[h] = seen.get(h, 0) + 1
            if os.environ.get("FAKEWORKER_SLOWER_AGAIN") and seen[h] > 1:
                ms *= 2
            res = {"verdict": "pass", "stage": "done", "reason": None, "log": "", "trials": 5, "correct_trials": 5,
                   "kernel_ms": ms, "timing": {"median": ms, "cv": 0.0, "iters": 100}, "flags": [],
                   "triton_launches": 1, "device": req.get("device")}
            mark = os.environ.get("FAKEWORKER_FAIL_MARK")
            if mark and mark in (req.get("kernel_source") or ""):
                res.update(verdict="fail", stage="compile", reason=f"fake compile error: {mark}", log=mark,
                           correct_trials=0, kernel_ms=None, timing=None)
        if op == "eval" and os.environ.get("FAKEWORKER_PROGRESS"):
            for step, t in (("correctness trial 1/5", 3.0), ("correctness trial 2/5", 12.0),
                            ("timing: 1 warm-up calls, 5 timed calls", 41.5)):
                out.write(json.dumps({"id": req["id"], "event": "progress", "step": step, "elapsed_s": t}) + "\n")
        out.write(json.dumps({"id": req["id"], "ok": True, "result": res}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
