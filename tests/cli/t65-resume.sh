#!/usr/bin/env bash
# t65-resume.sh: `egg bench` killed with SIGKILL at random moments, 20 times, then
# resumed to the end: the final store must match an uninterrupted run, with no
# finished LLM call or evaluation repeated and no result lost or duplicated.
# Evaluations are counted where they happen: each worker logs every job it
# finished with a digest of its sources.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
mkdir -p "$TMP/tasks/level1"
cp "$SRC/tests/tasks/bias_relu_scale.py" "$TMP/tasks/level1/a.py"
cp "$SRC/tests/tasks/bias_relu_scale.py" "$TMP/tasks/level1/b.py"
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

check "20 kills and resumes end in the same store as an uninterrupted run" python3 - "$TMP" "$EGG" "$SRC" <<'PY'
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
    """How often each evaluation (op and sources) finished, over every worker log."""
    done = {}
    for path in glob.glob(os.path.join(store, "runs", "*", "worker-*.log")):
        for line in open(path, errors="replace"):
            if line.startswith("egg-worker: job ") and " done " in line:
                key = line.split(" done ")[1].strip() + " " + line.split()[3]
                done[key] = done.get(key, 0) + 1
    return done

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
# a and b are the same task: the same evaluation can run once for each when
# both ask for it at once (neither found it cached yet), never more.
assert ref_done and max(ref_done.values()) <= 2, f"the uninterrupted run repeated an evaluation: {ref_done}"

# The same run, killed 20 times.
store = os.path.join(tmp, "B")
m, url = mock(os.path.join(tmp, "killed.jsonl"))
rng = random.Random(int(os.environ.get("EGG_TEST_SEED", "7")))
kills, run_id = 0, None
while kills < 20:
    cmd = [egg] + (["bench", "--resume", run_id, "-q"] if run_id else args)
    p = subprocess.Popen(cmd, env=env(store, url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    time.sleep(rng.uniform(0.3, 4.0))
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
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
# Beyond once per task, a job can run again only when it finished in the
# worker just before a kill landed, before egg stored its result: at most
# the two jobs in flight per kill.
repeated = sum(max(0, n - 2) for n in done.values())
assert repeated <= kills * 2, f"{repeated} finished evaluations ran again over {kills} kills: {done}"
print(f"# {kills} kills; {extra} LLM requests and {repeated} finished evaluations repeated (in flight when killed); "
      f"{len(done)} evaluations in both runs")
PY

finish
