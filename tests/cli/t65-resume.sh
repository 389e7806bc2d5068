#!/usr/bin/env bash
# t65-resume.sh: `egg bench` killed with SIGKILL again and again (at random
# moments, and just after an evaluation finished), each time resumed, until it
# ends: the final store must match an uninterrupted run, with no finished LLM
# call or evaluation repeated and no result lost or duplicated. Evaluations are
# counted where they happen: each worker logs every job it finished with a
# digest of its sources and the time. An evaluation may run again only when a
# kill landed within moments of its finishing (egg had not stored it yet).
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
mkdir -p "$TMP/tasks/level1"
cp "$SRC/tests/tasks/bias_relu_scale.py" "$TMP/tasks/level1/a.py"
# b is a with one more comment line: another task to the caches (no answer
# shared between them), the same scripted replies fit it.
(cat "$SRC/tests/tasks/bias_relu_scale.py"; echo "# task b") >"$TMP/tasks/level1/b.py"
python3 - "$SRC/tests/pipeline/bench.json" "$TMP/slow.json" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
base = os.path.dirname(os.path.abspath(sys.argv[1]))
for e in s:
    e["delay"] = 0.25
    if "reply_file" in e:
        e["reply_file"] = os.path.join(base, e["reply_file"])
json.dump(s, open(sys.argv[2], "w"))
PY

check "kills and resumes end in the same store as an uninterrupted run, no evaluation repeated" python3 - "$TMP" "$EGG" "$SRC" <<'PY'
import glob, json, os, random, signal, sqlite3, subprocess, sys, time
tmp, egg, src = sys.argv[1], sys.argv[2], sys.argv[3]
args = ["bench", "--device", "cpu", "--jobs", "2", "--stages", "mapping", "--iters", "10", "--warmup", "1",
        "--compile-mode", "none", "-q", "--dir", os.path.join(tmp, "tasks")]

def mock(log):
    port = os.path.join(tmp, "port-" + os.path.basename(log))
    p = subprocess.Popen([sys.executable, os.path.join(src, "tests/mock/mockllm.py"), "--script",
                          os.path.join(tmp, "slow.json"), "--log", log, "--port-file", port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(port):
            break
        time.sleep(0.05)
    return p, "http://127.0.0.1:" + open(port).read().strip()

def env(store, url):
    return dict(os.environ, EGG_STORE=store, EGG_BASE_URL=url)

def summary(store):
    db = sqlite3.connect(os.path.join(store, "egg.db"))
    run = db.execute("select id from runs").fetchone()[0]
    out = {}
    for task, status, result in db.execute("select task_id, status, result from tasks where run_id = ?", (run,)):
        r = json.loads(result)
        steps = [json.loads(d) for (d,) in db.execute(
            "select data from steps where run_id = ? and task_id = ? order by seq", (run, task))]
        ncand = db.execute("select count(*) from candidates where run_id = ? and task_id = ?", (run, task)).fetchone()[0]
        kernel = open(r["final_kernel"]).read() if r.get("final_kernel") else None
        out[task] = (status, r["found"], kernel, ncand,
                     [(s["stage"], s["candidate"], s["kind"], s["verdict"], s["accepted"]) for s in steps])
    evals = len(os.listdir(os.path.join(store, "eval-cache")))
    return out, evals

def jobs_done(store):
    """When each evaluation (op and sources) finished, over every worker log."""
    done = {}
    for path in glob.glob(os.path.join(store, "runs", "*", "worker-*.log")):
        for line in open(path, errors="replace"):
            w = line.split()
            if line.startswith("egg-worker: job ") and len(w) == 8 and w[4] == "done" and w[6] == "at":
                done.setdefault(w[3] + " " + w[5], []).append(float(w[7]))
    return {k: sorted(v) for k, v in done.items()}

def n_done(store):
    return sum(len(v) for v in jobs_done(store).values())

def requests(log):
    return sum(1 for _ in open(log)) if os.path.exists(log) else 0

# The reference: one uninterrupted run.
m, url = mock(os.path.join(tmp, "ref.jsonl"))
rc = subprocess.run([egg] + args, env=env(os.path.join(tmp, "A"), url), capture_output=True).returncode
m.kill()
assert rc == 0, rc
ref, ref_evals = summary(os.path.join(tmp, "A"))
ref_requests = requests(os.path.join(tmp, "ref.jsonl"))
ref_done = jobs_done(os.path.join(tmp, "A"))
assert ref_done and max(len(v) for v in ref_done.values()) == 1, \
    f"the uninterrupted run repeated an evaluation: {ref_done}"

# The same run, killed until it ends: odd attempts at a random moment, even
# ones a while after a new evaluation finished (so that finished evaluations
# exist to be repeated if resuming forgot them).
store = os.path.join(tmp, "B")
m, url = mock(os.path.join(tmp, "killed.jsonl"))
rng = random.Random(int(os.environ.get("EGG_TEST_SEED", "7")))
kills, run_id, kill_times, attempt = 0, None, [], 0
while kills < 20:
    cmd = [egg] + (["bench", "--resume", run_id, "-q"] if run_id else args)
    before = n_done(store)
    p = subprocess.Popen(cmd, env=env(store, url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    attempt += 1
    if attempt % 2:
        time.sleep(rng.uniform(0.3, 4.0))
    else:
        t_end = time.time() + 120
        while p.poll() is None and n_done(store) <= before and time.time() < t_end:
            time.sleep(0.05)
        time.sleep(rng.uniform(2.5, 3.5))
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        kill_times.append(time.time())
        p.wait()
        kills += 1
    if run_id is None and os.path.exists(os.path.join(store, "egg.db")):
        row = sqlite3.connect(os.path.join(store, "egg.db")).execute("select id from runs").fetchone()
        run_id = row[0] if row else None
    if p.returncode == 0 and run_id:
        break  # it finished before we could kill it again
rc = subprocess.run([egg, "bench", "--resume", run_id, "-q"], env=env(store, url), capture_output=True).returncode
m.kill()
assert rc == 0, rc
got, got_evals = summary(store)
assert got == ref, f"stores differ:\n{json.dumps(got, default=str)[:1500]}\nvs\n{json.dumps(ref, default=str)[:1500]}"
assert got_evals == ref_evals, (got_evals, ref_evals)
extra = requests(os.path.join(tmp, "killed.jsonl")) - ref_requests
assert extra <= kills * 2, f"{extra} repeated LLM requests for {kills} kills"
done = jobs_done(store)
assert set(done) == set(ref_done), f"other evaluations ran: {sorted(set(done) ^ set(ref_done))[:5]}"
# A job may run again only when it finished in the worker just before a kill
# landed, before egg stored its result (within WINDOW seconds), or just after
# it (the worker sees egg gone within 0.1 s and stops).
WINDOW = 2.0
repeated, unexplained = 0, []
for key, times in done.items():
    for prev, again in zip(times, times[1:]):
        repeated += 1
        if not any(prev - 0.5 <= k <= prev + WINDOW for k in kill_times):
            after = [round(k - prev, 2) for k in kill_times if k >= prev]
            unexplained.append((key, f"again after {again - prev:.2f} s", f"next kill after {min(after or [None])} s"))
assert not unexplained, f"finished evaluations ran again with no kill just after them: {unexplained[:6]}"
assert kills >= 3, f"only {kills} kills: too few to tell"
print(f"# {kills} kills over {attempt} attempts; {extra} LLM requests and {repeated} finished evaluations "
      f"repeated (each within moments of a kill); {len(done)} evaluations in both runs")
PY

finish
