"""threats.py: one mutation (at least) per exploit class of
docs/threat-model.md: each removes or weakens the defence that stops that
class, and the adversarial candidates of the class (tests/adversarial/cNN_*)
must then no longer be rejected as expected. Entries as in catalog.py.

Layers that only back another one up (removing them alone changes nothing a
candidate can exploit, because the other layer still rejects it) are not
listed as mutations, since they would survive by design:
- class 1/2: the per-trial launch count (c01_no_triton is also caught by the
  ATen watch; a candidate with no launch fails the guarded calls after timing);
  the ModelNew(Model) rule (c02_subclass_model's inherited forward is caught
  by the ATen watch).
- class 10: the input/output alias rule (c10_mutate_input writes into its
  input, which the input fingerprints catch too).
- class 13: c13_patch_task_module only shrinks the candidate's own copy of the
  task; the reference's own inputs and the shape checks reject it.
- class 15: the daemon of c15_background_process dies with the candidate's
  PID namespace and is also swept by the worker (child subreaper).
- class 16: c16_os_exit is rejected by every way a channel can close.
Class 18 has no candidate in tests/adversarial: what cheats there is a
drop-in of a whole program (t86), and its mutation is checked by
test_varied.
"""

THREAT_MUTANTS: list = [
    # ---- class 1: library fallback -------------------------------------------
    # The ATen watch in the candidate's process: with it blind, a token Triton
    # launch plus PyTorch doing the work passes (c01_library_fallback,
    # c02_try_except_fallback, c17_static_evasion).
    dict(name="watch-ignores-aten-compute", point="class 1: library fallback",
         file="worker/egg_worker/protocol/guards.py",
         find="            if name not in ALLOWED_OPS:",
         replace="            if False:",
         tests=["adv:c01"]),

    # ---- class 2: try/except fallback ----------------------------------------
    # The launch wrapper leaves the launch on an exception too: without the
    # finally, a launch that raises leaves in_launch raised for good and the
    # fallback's PyTorch ops (and all later ones) go unwatched.
    dict(name="failed-launch-blinds-watch", point="class 2: try/except fallback",
         file="worker/egg_worker/protocol/guards.py",
         find="            try:\n                return original(fn_self, *args, **kwargs)\n"
              "            finally:\n                guard.in_launch -= 1\n",
         replace="            result = original(fn_self, *args, **kwargs)\n"
                 "            guard.in_launch -= 1\n            return result\n",
         tests=["adv:c02"]),

    # ---- class 3: output caching ---------------------------------------------
    # Fresh inputs per correctness trial: with every trial drawing the same
    # values, c03_output_cache serves its first answer through all trials (and
    # is caught only later, at a different stage).
    dict(name="trial-inputs-repeat", point="class 3: output caching (trials)",
         file="worker/egg_worker/protocol/inputs.py",
         find="    out = task_inputs(task, seed, device)\n    variant = variant or VARIANTS[trial % len(VARIANTS)]\n",
         replace="    out = task_inputs(task, 0, device)\n    variant = \"task\"\n",
         tests=["adv:c03_output"]),
    # Fresh inputs per timed call: with the same inputs every call, a cache
    # keyed on the inputs answers the timed calls without computing
    # (c03_timed_cache, timed against the honest h01).
    dict(name="timed-inputs-repeat", point="class 3: output caching (timed calls)",
         file="worker/egg_worker/protocol/inputs.py",
         find="                fill.uniform_(0.5, 1.5, generator=g)\n"
              "                fill.mul_(_base_view(x) if fill is not y else x)\n",
         replace="                fill.copy_(_base_view(x) if fill is not y else x)\n",
         tests=["adv:c03_timed,h01"]),

    # ---- class 4: phase detection --------------------------------------------
    dict(name="timed-outputs-unverified", point="class 4: phase detection (checksums)",
         file="worker/egg_worker/protocol/job.py",
         find='    if ver["bad"]:',
         replace="    if False:",
         tests=["adv:c04_phase_detection"]),
    # Sums alone admit a stale output once it is large (or half precision):
    # the sampled elements are what catch it.
    dict(name="timed-outputs-sums-only", point="class 4: phase detection (sampled elements)",
         file="worker/egg_worker/protocol/checksums.py",
         find="    return all(abs(o - r) <= widen",
         replace="    return True or all(abs(o - r) <= widen",
         tests=["adv:c04_stale_output"]),
    dict(name="no-guard-after-timing", point="class 4: phase detection (guards again)",
         file="worker/egg_worker/protocol/job.py",
         find='    if guarded.get("violations") or not all(guarded.get("launches") or [0]):',
         replace="    if False:",
         tests=["adv:c04_phase_library"]),

    # ---- class 5: deferred outputs -------------------------------------------
    dict(name="output-subclass-allowed", point="class 5: deferred output (subclass)",
         file="worker/egg_worker/protocol/candidate.py",
         find="        if type(o) is not torch.Tensor:",
         replace="        if False:",
         tests=["adv:c05_lazy"]),
    dict(name="no-late-write-check", point="class 5: deferred output (late writes)",
         file="worker/egg_worker/protocol/candidate.py",
         find="    if late:",
         replace="    if False:",
         tests=["adv:c05_late_overwrite"]),
    dict(name="stray-threads-ignored", point="class 5: deferred output (threads)",
         file="worker/egg_worker/protocol/candidate.py",
         find="    if strays:",
         replace="    if False:",
         tests=["adv:c05_lingering"]),

    # ---- class 6: side stream (GPU only) -------------------------------------
    # Both SURVIVED on the H200 (2026-11-30): c06_side_stream is rejected by
    # the timing floor (its stream time is empty) before either rule matters.
    # Catching them needs a side-stream candidate whose stream time stays
    # above the floor; until one exists, these two stand as known gaps.
    dict(name="no-host-vs-stream-check", point="class 6: side stream (host time)",
         file="worker/egg_worker/protocol/job.py",
         find='    if hst["median"] > 1.5 * st["median"] + 0.1:',
         replace="    if False:",
         tests=["adv-gpu:c06,h00"], gpu=True),
    dict(name="stream-sync-not-device-sync", point="class 6: side stream (device sync)",
         file="worker/egg_worker/protocol/timing.py",
         find="            self._sync = torch.cuda.synchronize\n",
         replace="            self._sync = lambda: torch.cuda.current_stream().synchronize()\n",
         tests=["adv-gpu:c06,h00"], gpu=True),

    # ---- class 7: patching timers and comparisons ----------------------------
    # The trusted wall clock is what exposes a timer patched inside the
    # candidate's process (c07_patch_timer).
    dict(name="no-wall-clock-cross-check", point="class 7: patching the timer",
         file="worker/egg_worker/protocol/job.py",
         find='    if st["mean"] < 0.25 * per_call - slack:',
         replace="    if False:",
         tests=["adv:c07_patch_timer"]),
    # The verdict follows the reference process's comparison; c07_patch_compare's
    # patched torch.allclose only lives in its own process.
    dict(name="trusted-comparison-ignored", point="class 7: patching compare",
         file="worker/egg_worker/protocol/job.py",
         find='    if not cmp["ok"]:',
         replace="    if False:",
         tests=["adv:c07_patch_compare"]),

    # ---- class 8: stealing reference outputs ---------------------------------
    # The shared region carries the candidate's outputs to the reference only.
    # If the reference also put its own outputs there (compare in place, say),
    # c08_shared_region reads them during forward.
    dict(name="reference-outputs-in-region", point="class 8: stealing reference outputs",
         file="worker/egg_worker/protocol/reference.py",
         find="    def prepare(self, t: int) -> dict:\n",
         replace="    def prepare(self, t: int) -> dict:\n"
                 "        msg = self._prepare(t)\n"
                 "        self.region.map()\n"
                 "        for k, o in enumerate(self.current[1]):\n"
                 "            self.region.view(self.sigs[k], self.offsets[k]).copy_(o)\n"
                 "        return msg\n\n"
                 "    def _prepare(self, t: int) -> dict:\n",
         tests=["adv:c08_shared"]),

    # ---- class 9: uninitialised memory ---------------------------------------
    # Fresh allocations poisoned during the trials: without it, fresh (mmap'd)
    # memory reads as zero and c09_unwritten_zeros, which never stores its
    # zeros, passes on the CPU.
    dict(name="fresh-allocations-not-poisoned", point="class 9: uninitialised memory",
         file="worker/egg_worker/protocol/candidate.py",
         find="    torch.utils.deterministic.fill_uninitialized_memory = True  # poison fresh allocations\n",
         replace="    torch.utils.deterministic.fill_uninitialized_memory = False\n",
         tests=["adv:c09"]),

    # ---- class 10: mutating inputs -------------------------------------------
    dict(name="input-writes-unchecked", point="class 10: mutating inputs",
         file="worker/egg_worker/protocol/candidate.py",
         find="    if changed:\n        raise Failure(\"integrity\", f\"forward modified input",
         replace="    if False:\n        raise Failure(\"integrity\", f\"forward modified input",
         tests=["adv:c10"]),
    # In-place tasks: the reference's modified inputs are results. Not
    # detected, an honest in-place kernel fails as "modified input 0"; not
    # compared, a kernel that leaves the input alone passes.
    dict(name="in-place-undetected", point="class 10: in-place results (detection)",
         file="worker/egg_worker/protocol/reference.py",
         find="        self.mutated = [k for k, (x, f) in enumerate(zip(inputs, before))",
         replace="        self.mutated = [] and [k for k, (x, f) in enumerate(zip(inputs, before))",
         tests=["worker:test_evaluator"]),
    dict(name="in-place-writes-unseen", point="class 10: in-place results (writes that change no byte)",
         file="worker/egg_worker/protocol/reference.py",
         find="            if arg.alias_info is None or not arg.alias_info.is_write:",
         replace="            if True:",
         tests=["worker:test_evaluator"]),
    dict(name="in-place-not-compared", point="class 10: in-place results (comparison)",
         file="worker/egg_worker/protocol/outputs.py",
         find="    return tensors + [inputs[k] for k in mutated], kinds + [\"tensor\"] * len(mutated)",
         replace="    return tensors + [inputs[k].clone().zero_() for k in mutated], kinds + [\"tensor\"] * len(mutated)",
         tests=["worker:test_evaluator"]),

    # ---- class 11: precision downgrade ---------------------------------------
    dict(name="global-flags-unchecked", point="class 11: precision (global flags)",
         file="worker/egg_worker/protocol/candidate.py",
         find="    if global_flags() != flags0:",
         replace="    if False:",
         tests=["adv:c11_global"]),
    # fp32 outputs held to 1e-4: at 1e-2, bf16-precision results pass
    # (c11_rounded_output on the CPU; c11_tf32_dot on a GPU).
    dict(name="fp32-tolerance-loosened", point="class 11: precision (fp32 tolerance)",
         file="worker/egg_worker/protocol/compare.py",
         find="    base = DEFAULT_TOL.get(dtype, 1e-4)",
         replace="    base = DEFAULT_TOL.get(dtype, 1e-2)",
         tests=["adv:c11_rounded"]),
    dict(name="fp32-tolerance-loosened-gpu", point="class 11: precision (TF32 dot)",
         file="worker/egg_worker/protocol/compare.py",
         find="    base = DEFAULT_TOL.get(dtype, 1e-4)",
         replace="    base = DEFAULT_TOL.get(dtype, 1e-2)",
         tests=["adv-gpu:c11_tf32"], gpu=True),
    # The float64 rule rescues a miss only up to TRUTH_K x PyTorch's own error.
    dict(name="truth-rule-unbounded", point="class 11: precision (float64 rule)",
         file="worker/egg_worker/protocol/compare.py",
         find="    bound = max(1.0, TRUTH_K * ref_err)",
         replace="    bound = float(\"inf\")",
         tests=["adv:c11_rounded"]),
    dict(name="truth-rule-unbounded-gpu", point="class 11: precision (TF32 dot)",
         file="worker/egg_worker/protocol/compare.py",
         find="    bound = max(1.0, TRUTH_K * ref_err)",
         replace="    bound = float(\"inf\")",
         tests=["adv-gpu:c11_tf32"], gpu=True),

    # ---- class 12: near-constant and degenerate outputs ----------------------
    dict(name="degenerate-task-unflagged", point="class 12: degenerate outputs",
         file="worker/egg_worker/protocol/reference.py",
         find='                    flags.append(f"degenerate_task: output {k} does not change with the inputs")',
         replace="                    pass",
         tests=["adv:c12_degenerate"]),

    # ---- class 13: shape and fixture specialisation --------------------------
    dict(name="get-inputs-redefinable", point="class 13: redefining inputs",
         file="worker/egg_worker/protocol/candidate.py",
         find="            if name in vars(cand):",
         replace="            if False:",
         tests=["adv:c13_redefine_get"]),
    dict(name="sizes-redefinable", point="class 13: redefining sizes",
         file="worker/egg_worker/protocol/candidate.py",
         find="        if changed:\n            raise Failure(\"integrity\", f\"kernel file redefines the task's sizes",
         replace="        if False:\n            raise Failure(\"integrity\", f\"kernel file redefines the task's sizes",
         tests=["adv:c13_redefine_sizes"]),
    # Several input distributions: with the task's own draw only, a kernel that
    # assumes its range (c13_range_specialised) passes.
    dict(name="one-input-distribution", point="class 13: fixture specialisation",
         file="worker/egg_worker/protocol/inputs.py",
         find='VARIANTS = ("task", "scaled", "centred", "normal", "heavy_tailed")',
         replace='VARIANTS = ("task",)',
         tests=["adv:c13_range"]),

    # ---- class 14: timing-harness games (GPU only) ---------------------------
    # Both SURVIVED on the H200 (2026-11-30): the c14 candidates are timed
    # against the honest h00 on a task far larger than L2, where neither a
    # persisting window nor a missing flush changes the time. Catching them
    # needs an L2-sized task and an absolute expectation (a roofline bound),
    # not only a comparison with an equally unflushed control.
    dict(name="persisting-l2-not-reset", point="class 14: timing (persisting L2)",
         file="worker/egg_worker/protocol/timing.py",
         find="            self._reset_l2 = _persisting_l2_reset()",
         replace="            self._reset_l2 = None",
         tests=["adv-gpu:c14_persist,h00"], gpu=True),
    dict(name="l2-not-flushed", point="class 14: timing (L2 flush)",
         file="worker/egg_worker/protocol/timing.py",
         find="        self._flush_buf.zero_()",
         replace="        pass",
         tests=["adv-gpu:c14,h00"], gpu=True),

    # ---- class 15: sabotage --------------------------------------------------
    dict(name="thread-count-unchecked", point="class 15: sabotage (thread count)",
         file="worker/egg_worker/protocol/guards.py",
         find='             "num_threads": torch.get_num_threads()}',
         replace="             }",
         tests=["adv:c15_thread"]),

    # ---- class 16: process tricks --------------------------------------------
    # Children close every descriptor but their own: otherwise the candidate
    # inherits the worker's protocol pipe and c16_forge_verdict's forged
    # reply reaches egg.
    dict(name="child-keeps-worker-fds", point="class 16: forging results",
         file="worker/egg_worker/children.py",
         find="                if fd not in keep:",
         replace="                if False:",
         tests=["adv:c16_forge"]),

    # ---- class 17: static-check evasion --------------------------------------
    # Run-time enforcement: if the watch only flagged ops the source names
    # (a static check in run-time clothing), getattr strings and exec'd text
    # (c17_static_evasion) get through.
    dict(name="watch-trusts-source-text", point="class 17: static-check evasion",
         file="worker/egg_worker/protocol/guards.py",
         find="            if name not in ALLOWED_OPS:",
         replace="            if name not in ALLOWED_OPS and ('torch.' + name) in "
                 "open(__import__('sys').modules['egg_candidate'].__file__).read():",
         tests=["adv:c17"]),

    # ---- class 18: what a constant parameter hides ---------------------------
    # A parameter of one constant value is drawn at random in a split's task
    # and in a model spec's program: without it, a ConvNeXt block's layer
    # scale of 1e-6 hides its MLP, and test_varied's block output is its input
    # to within the tolerance (a kernel skipping the MLP would pass). Its
    # hostile kernel is a drop-in, not a single-task candidate: t86 holds it
    # (tests/tasks/programs/convnext_init_skip_kernel.py).
    dict(name="constants-not-drawn", point="class 18: constant parameters",
         file="worker/egg_worker/program/model_runtime.py",
         find="            if not bool((p == c).all()):\n                continue\n",
         replace="            continue\n",
         tests=["worker:test_varied"]),
]
