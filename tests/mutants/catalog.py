"""catalog.py: the mutations scripts/mutants.py applies, one at a time.

Each entry:
  name     short, unique
  point    what it breaks, in a few words (a threat class, an issue point)
  file     the product file it changes (relative to the repository root)
  find     text that occurs exactly once in that file
  replace  what the mutation puts there instead
  tests    the tests that must notice: "unit:SUITE", "cli:tNN-name",
           "worker:test_name [ARGS]", "adv:PREFIX[,PREFIX]" (adversarial
           candidates whose names start so), "layers", "harness"
  ci       true for the small fixed subset `make test` runs on every change
  gpu      true when its tests need a GPU (scripts/mutants.py --gpu runs them there)
"""
from threats import THREAT_MUTANTS

OWN_MUTANTS = [
    # Secrets: each layer that keeps keys from candidates, tested with keys present.
    dict(name="worker-keeps-secret-env", point="secrets: worker scrub",
         file="worker/egg_worker/sandbox.py", find="            del os.environ[name]", replace="            pass",
         tests=["worker:test_worker"]),
    dict(name="launch-passes-secret-env", point="secrets: egg's child env",
         file="src/eval/launch.c", find="if (!config_env_is_secret(name))", replace="if (name)",
         tests=["cli:t25-secrets"], ci=True),
    dict(name="egg-environ-keeps-key", point="secrets: egg's own env",
         file="src/config/config.c", find="		memset(v, 0, strlen(v));\n", replace="",
         tests=["cli:t25-secrets"]),

    # The harness itself: skips, and a fuzz run that fuzzed nothing.
    dict(name="skips-count-as-passes", point="harness: skips",
         file="tests/run.sh", find="s=$(grep -c '^ok .*# SKIP' \"$log\")", replace="s=0",
         tests=["harness"], ci=True),
    dict(name="fuzz-without-seeds-passes", point="harness: fuzz driver",
         file="tests/fuzz/driver.c", find="if (!nseeds || iters <= 0) {", replace="if (0) {",
         tests=["harness"]),

    # Resume: an evaluation that finished is not run again.
    dict(name="eval-cache-never-answers", point="resume: no repeated eval",
         file="src/eval/cache.c", find="	json_object_del(o, \"mac_format\");\n	return o;",
         replace="	json_decref(o);\n	return NULL;", tests=["cli:t65-resume", "cli:t42-cache"]),

    # Logs are trimmed, keeping the tail where the error is.
    dict(name="logs-never-trimmed", point="logs: trimming",
         file="worker/egg_worker/logs.py", find="    if len(text) <= limit:\n        return text",
         replace="    if True:\n        return text", tests=["worker:test_worker"]),

    # The second witness (ncu's GPU time against the measured time).
    dict(name="witness-ignored", point="second witness: branch",
         file="src/pipeline/cand.c", find="if (pipeline_timing_plausible(c->ms, pipe_profile(p, c), &ncu_ms))",
         replace="if (pipeline_timing_plausible(c->ms, pipe_profile(p, c), &ncu_ms) || 1)", tests=["cli:t52-witness"]),
    dict(name="witness-always-plausible", point="second witness: rule",
         file="src/pipeline/cand.c", find="return *ncu_ms <= 1.25 * kernel_ms + 0.010;", replace="return 1;",
         tests=["unit:reply", "cli:t52-witness"]),

    # Speedups beyond the bound are measured again; the slower time is kept.
    dict(name="no-remeasure", point="speedup bound: re-measure",
         file="src/eval/eval.c", find="eager / k > o->speedup_bound", replace="eager / k > 1e300",
         tests=["cli:t40-eval"]),
    dict(name="remeasure-keeps-faster", point="speedup bound: slower kept",
         file="src/eval/eval.c", find="			if (k2 > k) {", replace="			if (k2 < k) {",
         tests=["cli:t40-eval"]),
    # A worker that died during a job: restarted, the job retried once.
    dict(name="no-retry-after-worker-death", point="worker death: retry",
         file="src/eval/worker.c", find="	if (!res && w->lost) {\n		/* The worker itself died",
         replace="	if (0) {\n		/* The worker itself died", tests=["cli:t71-worker-loss"]),

    # Budgets.
    dict(name="task-cost-budget-ignored", point="budget: --max-cost",
         file="src/agents/agents.c", find="if (a->max_cost > 0 && a->used.cost_usd >= a->max_cost) {",
         replace="if (0) {", tests=["cli:t60-bench"]),
    dict(name="run-token-budget-ignored", point="budget: --run-max-tokens",
         file="src/agents/agents.c", find="if (b->max_tokens && b->tokens >= b->max_tokens) {",
         replace="if (0) {", tests=["cli:t60-bench"]),
    dict(name="run-cost-budget-ignored", point="budget: --run-max-cost",
         file="src/agents/agents.c", find="} else if (b->max_cost > 0 && b->cost >= b->max_cost) {",
         replace="} else if (0) {", tests=["cli:t60-bench"]),
    # The providers' rules (issue: real providers' rules).
    dict(name="gpt5-gets-max-tokens", point="providers: request rules",
         file="src/llm/rules.c",
         find='{ "openai", "gpt-5", "OpenAI reasoning models (gpt-5*, o1*, o3*, o4*)", "max_completion_tokens", NOT_SENT,',
         replace='{ "openai", "gpt-5", "OpenAI reasoning models (gpt-5*, o1*, o3*, o4*)", "max_tokens", NOT_SENT,',
         tests=["cli:t21-providers"]),
    dict(name="no-adaptation-to-refusals", point="providers: adapt on a 400",
         file="src/llm/llm.c", find="	pthread_mutex_unlock(&c->lock);\n	/* Kept for the next runs",
         replace="	pthread_mutex_unlock(&c->lock);\n	again = 0;\n	/* Kept for the next runs",
         tests=["cli:t21-providers"]),
    dict(name="refused-key-as-outage", point="providers: a refused key is a setting (exit 2)",
         file="src/llm/llm.c", find="	if (r->status == 401 || r->status == 403)\n		return ATTEMPT_KEY_REFUSED;\n",
         replace="", tests=["cli:t20-chat-faults"]),
    dict(name="cache-below-its-minimum", point="providers: a saving only from the least cacheable length",
         file="src/llm/llm.c", find="	return tokens < c->rules.cache_min_tokens ? 0 : tokens;",
         replace="	(void)c;\n	return tokens;", tests=["cli:t84-prompt-cache"]),
    dict(name="cut-reply-same-limit", point="providers: a cut reply's retry",
         file="src/agents/agents.c", find="	long raised = limit * 2, ceiling", replace="	long raised = limit, ceiling",
         tests=["cli:t21-providers"]),
    dict(name="llm-gate-open", point="budget: --llm-concurrency",
         file="src/llm/llm.c", find="	while (c->in_flight >= limit)\n		pthread_cond_wait(&c->slot_free, &c->lock);\n",
         replace="\t(void)limit;\n", tests=["unit:llm"], ci=True),

    # The checks on a timed loop, at their boundaries.
    dict(name="wall-clock-factor-8", point="timing: wall-clock 4x",
         file="worker/egg_worker/protocol/job.py", find='if st["mean"] < 0.25 * per_call - slack:',
         replace='if st["mean"] < 0.125 * per_call - slack:', tests=["worker:test_timing_rules"], ci=True),
    dict(name="wall-clock-slack-doubled", point="timing: wall-clock slack",
         file="worker/egg_worker/protocol/job.py", find='if st["mean"] < 0.25 * per_call - slack:',
         replace='if st["mean"] < 0.25 * per_call - 2 * slack:', tests=["worker:test_timing_rules"]),
    dict(name="timing-floor-lowered", point="timing: floor",
         file="worker/egg_worker/protocol/job.py", find='if st["median"] < 0.0015 and device != "cpu":',
         replace='if st["median"] < 0.0012 and device != "cpu":', tests=["worker:test_timing_rules"]),
    dict(name="host-time-rule-loosened", point="timing: outside the stream",
         file="worker/egg_worker/protocol/job.py", find='if hst["median"] > 1.5 * st["median"] + 0.1:',
         replace='if hst["median"] > 1.5 * st["median"] + 0.2:', tests=["worker:test_timing_rules"]),
    dict(name="launch-bound-never-flagged", point="timing: launch_bound",
         file="worker/egg_worker/protocol/job.py", find="launch_med is not None and launch_med > spin:",
         replace="launch_med is not None and launch_med > spin + 1e9:", tests=["worker:test_timing_rules"]),
    # The one-read summary kernel must sum what the PyTorch path sums.
    dict(name="fused-sums-weights-wrong", point="timing: one-read summaries",
         file="worker/egg_worker/protocol/fastsums.py", find="    w = k.to(tl.float32) * (1.0 / 1048576.0) + 0.5",
         replace="    w = k.to(tl.float32) * (1.0 / 1048576.0) + 0.25", tests=["worker:test_timing_rules"]),
    dict(name="fused-sums-last-row-lost", point="timing: one-read summaries",
         file="worker/egg_worker/protocol/fastsums.py", find="    mask = offs < n\n",
         replace="    mask = offs < n - n % ROW\n", tests=["worker:test_timing_rules"]),
    # A run's outcome: a store failure is never a success, a broken store never "no run".
    dict(name="commit-failure-dropped", point="outcome: COMMIT",
         file="src/store/store.c", find="	rc = end_transaction(s, rc);\n",
         replace="	end_transaction(s, rc);\n", tests=["unit:store", "cli:t69-store-faults"]),
    dict(name="task-end-unrecorded-is-done", point="outcome: the task's final write",
         file="src/run/task.c", find="	if (rc->store && store_task_finish(rc->store, rc->run_id, ts->task_id, status, result) < 0) {",
         replace="	if (rc->store && store_task_finish(rc->store, rc->run_id, ts->task_id, status, result) < -1) {",
         tests=["cli:t69-store-faults"]),
    dict(name="unreadable-store-is-empty", point="outcome: store reads",
         file="src/store/store.c", find='	return rc == SQLITE_DONE ? out : read_failed(s, "cannot read its runs", out);',
         replace="	return out;", tests=["unit:store", "cli:t69-store-faults"]),
    dict(name="waiting-counts-as-stopped", point="outcome: one ladder",
         file="src/run/outcome.c", find="		case TASK_WAITING:\n			o->waiting++;\n			break;",
         replace="		case TASK_WAITING:\n			o->stopped++;\n			break;", tests=["cli:t67-spool"]),
    # One stop record per task, one owner of the verdicts.
    dict(name="stop-join-mixes-records", point="stop: a join takes one branch's record whole",
         file="src/pipeline/stop.c", find="	*into = *from;\n", replace="	into->cause = from->cause;\n",
         tests=["unit:run"]),
    dict(name="dropin-ignores-the-clock", point="outcome: a whole program's verdict",
         file="src/run/outcome.c", find="	return v->judged && !v->faster;", replace="	return (void)v, 0;", tests=["unit:run"]),
    dict(name="refused-run-reads-stopped", point="outcome: a run ended on its input",
         file="src/run/outcome.c", find='	return k == ERR_INPUT ? "refused" :', replace='	return k == ERR_INPUT ? "stopped" :',
         tests=["cli:t79-new-user-runs"]),
    dict(name="amdahl-reads-the-why", point="data, not words: Amdahl",
         file="src/run/whole.c",
         find='		enum subgraph_outcome oc = subgraph_outcome_of(json_string_value(json_object_get(sg, "status")));',
         replace='		enum subgraph_outcome oc = subgraph_outcome_of(json_string_value(json_object_get(sg, "why")));',
         tests=["unit:run"]),
    dict(name="prompt-reads-the-log", point="data, not words: decisions",
         file="src/agents/decisions.c", find="				tmpl = kinds[k].prompt;",
         replace='				tmpl = "{text}";', tests=["unit:run"]),
    dict(name="prompt-default-tolerance", point="the tolerance in force",
         file="src/agents/context.c", find="		tolerance_entry(&t, e, atol, rtol);",
         replace="		tolerance_entry(&t, e, -1, -1);", tests=["unit:reply", "cli:t50-optimize"]),
    # One's own network: a candidate in its reference's mode; the drop-in's keys.
    dict(name="candidate-in-train-mode", point="models: the mode rule",
         file="worker/egg_worker/protocol/candidate.py", find="            model.train(reference.training)",
         replace="            pass", tests=["cli:t78-models"]),
    dict(name="composed-keeps-part-keys", point="models: the drop-in's state_dict",
         file="worker/egg_worker/program/model_runtime.py", find="            if rest.startswith(\"_egg_parts.\"):\n                del state[k]\n            elif",
         replace="            if", tests=["cli:t78-models"]),
    dict(name="composed-ignores-other-shapes", point="models: unseen shapes fall back",
         file="src/program/program.c", find="if xs is None or not _egg_checked(xs):\\n",
         replace="if xs is None:\\n", tests=["cli:t78-models"]),
    dict(name="other-shapes-taken-unjudged", point="models: a shape the whole failed at is not run through kernels",
         file="src/run/shapes.c", find="	if (eval_passed(res)) {\n		json_array_append(checked,",
         replace="	if (1) {\n		json_array_append(checked,", tests=["cli:t78-models"]),
    dict(name="wrong-result-called-specialised", point="models: a kernel's wrong result at another shape",
         file="src/run/shapes.c", find="	const char *key = wrong_result(res) ? \"wrong\" : \"refuses\";",
         replace="	const char *key = \"refuses\";", tests=["cli:t78-models"]),
    # Timing and profiling drain the device of other jobs' trials.
    dict(name="timing-beside-other-trials", point="exclusivity: work lock",
         file="worker/egg_worker/locks.py",
         find=', _flock(_path(held.key, "work-gate"), fcntl.LOCK_EX), \\\n            _flock(_path(held.key, "work"), fcntl.LOCK_EX):',
         replace=":",
         tests=["worker:test_exclusive"], ci=True),
    dict(name="baseline-loads-beside-timing", point="exclusivity: a baseline's loading is device work",
         file="worker/egg_worker/protocol/job.py",
         find="        work.acquire()\n        b = spawn(reference.baseline,",
         replace="        work.start = time.time()\n        b = spawn(reference.baseline,",
         tests=["worker:test_exclusive"]),
    dict(name="worker-starts-beside-timing", point="exclusivity: a worker's start is device work",
         file="worker/egg_worker/main.py",
         find="    with locks.startup(key, 60.0) if key else contextlib.nullcontext():",
         replace="    with contextlib.nullcontext():", tests=["worker:test_exclusive"]),
    dict(name="store-error-after-last-step-ignored", point="store: a refused write in the last steps stops the task",
         file="src/pipeline/pipeline.c", find="	 * final decisions) stops the task too: nothing may end as done whose\n	 * record is not whole. */\n	pipe_store_broken(p);",
         replace="	 * final decisions) stops the task too. */", tests=["cli:t66-store-full"]),
    # A shorter chain per task: the rules on the profile, the tuning stages side by side.
    dict(name="mapping-rule-ignores-busy", point="chain: a rule settles a stage only on its figures",
         file="src/pipeline/ask.c", find="	return !has_any || any;", replace="	return !has_any || any || has_any;",
         tests=["cli:t81-tuning"]),
    dict(name="judge-counts-noise", point="chain: a combination must beat the best change by the rule",
         file="src/pipeline/improve.c",
         find="	better = pipeline_faster(c->ms, c->cv, parent->ms, parent->cv, p->env->eval.iters);",
         replace="	better = c->ms < parent->ms;", tests=["cli:t81-tuning"]),
]

MUTANTS = OWN_MUTANTS + THREAT_MUTANTS
