#!/usr/bin/env bash
# t65-resume.sh: `egg bench` killed with SIGKILL again and again, each time
# resumed, until it ends: the final store must match an uninterrupted run,
# with no finished LLM call or stored evaluation repeated and no result lost
# or duplicated. The kills land at events, not after sleeps, so that what is
# tested does not depend on the machine's speed: in turn, as soon as a new
# request reaches the mock LLM (a call in flight), as soon as a new reply is
# in egg's reply cache (egg has just stored a call), and as soon as a worker
# has finished a new evaluation (egg may not have stored it yet). Every
# worker logs each job it finished with a digest of its sources (and the
# result egg caches carries the same digest): a job may run again only when
# its result was not in egg's cache when its run was killed.
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
import glob, json, os, random, re, signal, sqlite3, subprocess, sys, time
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
    evals = len([f for f in os.listdir(os.path.join(store, "eval-cache")) if f.endswith(".json")])
    return out, evals

def job_lines(store):
    """Every "job N OP done DIGEST at T" line over the worker logs: (log, offset after it, OP DIGEST)."""
    out = []
    for path in sorted(glob.glob(os.path.join(store, "runs", "*", "worker-*.log"))):
        offset = 0
        with open(path, "rb") as f:
            for raw in f:
                offset += len(raw)
                w = raw.decode("utf-8", "replace").split()
                if raw.startswith(b"egg-worker: job ") and len(w) == 8 and w[4] == "done" and w[6] == "at":
                    out.append((path, offset, w[3] + " " + w[5]))
    return out

def jobs_done(store):
    done = {}
    for _, _, key in job_lines(store):
        done[key] = done.get(key, 0) + 1
    return done

def log_sizes(store):
    return {p: os.path.getsize(p) for p in glob.glob(os.path.join(store, "runs", "*", "worker-*.log"))}

def stored_jobs(store):
    """The jobs whose results egg's evaluation cache holds, as OP DIGEST."""
    out = set()
    for path in glob.glob(os.path.join(store, "eval-cache", "*.json")):
        try:
            entry = json.load(open(path))
        except (OSError, ValueError):
            continue
        text = json.dumps(entry)
        kind = os.path.basename(path).split("-")[0]
        op = {"eval": "eval", "baseline": "baseline", "profile": "profile", "calibration": "calibrate"}.get(kind)
        for digest in set(re.findall(r'"job_digest": "([0-9a-f]{16})"', text)):
            out.add(f"{op} {digest}")
    return out

def count(path):
    return sum(1 for _ in open(path)) if os.path.exists(path) else 0

def cached_replies(store):
    d = os.path.join(store, "llm-cache")
    return sum(len(f) for _, _, f in os.walk(d)) if os.path.isdir(d) else 0

# The reference: one uninterrupted run.
m, url = mock(os.path.join(tmp, "ref.jsonl"))
rc = subprocess.run([egg] + args, env=env(os.path.join(tmp, "A"), url), capture_output=True).returncode
m.kill()
assert rc == 0, rc
ref, ref_evals = summary(os.path.join(tmp, "A"))
ref_requests = count(os.path.join(tmp, "ref.jsonl"))
ref_done = jobs_done(os.path.join(tmp, "A"))
assert ref_done and max(ref_done.values()) == 1, f"the uninterrupted run repeated an evaluation: {ref_done}"

# The same run, killed at events until it ends (at most 20 kills, then a
# resume runs it to its end).
store = os.path.join(tmp, "B")
log = os.path.join(tmp, "killed.jsonl")
m, url = mock(log)
rng = random.Random(int(os.environ.get("EGG_TEST_SEED", "7")))
kills, run_id, attempt, unexplained, repeated = 0, None, 0, [], 0
triggers = {0: "a request in flight", 1: "a reply just cached", 2: "an evaluation just finished"}
fired = {t: 0 for t in triggers}

def check_attempt(sizes_before, stored_before):
    """Jobs this attempt ran that egg had stored before it started."""
    global repeated
    for path, offset, key in job_lines(store):
        if offset > sizes_before.get(path, 0) and key in stored_before:
            unexplained.append(key)
        elif offset > sizes_before.get(path, 0) and jobs_done(store)[key] > 1:
            repeated += 1

while kills < 20:
    cmd = [egg] + (["bench", "--resume", run_id, "-q"] if run_id else args)
    sizes, stored = log_sizes(store), stored_jobs(store)
    requests, replies, done = count(log), cached_replies(store), sum(jobs_done(store).values())
    trigger = attempt % 3
    skip = rng.randrange(2)  # let one event of the kind pass, now and then
    p = subprocess.Popen(cmd, env=env(store, url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    attempt += 1
    while p.poll() is None:
        now = (count(log) - requests, cached_replies(store) - replies, sum(jobs_done(store).values()) - done)[trigger]
        if now > skip:
            break
        time.sleep(0.01)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        kills += 1
        fired[trigger] += 1
    if run_id is None and os.path.exists(os.path.join(store, "egg.db")):
        row = sqlite3.connect(os.path.join(store, "egg.db")).execute("select id from runs").fetchone()
        run_id = row[0] if row else None
    check_attempt(sizes, stored)
    if p.returncode == 0 and run_id:
        break  # it finished before the event came
sizes, stored = log_sizes(store), stored_jobs(store)
rc = subprocess.run([egg, "bench", "--resume", run_id, "-q"], env=env(store, url), capture_output=True).returncode
check_attempt(sizes, stored)
m.kill()
assert rc == 0, rc
got, got_evals = summary(store)
assert got == ref, f"stores differ:\n{json.dumps(got, default=str)[:1500]}\nvs\n{json.dumps(ref, default=str)[:1500]}"
assert got_evals == ref_evals, (got_evals, ref_evals)
extra = count(log) - ref_requests
assert extra <= kills * 2, f"{extra} repeated LLM requests for {kills} kills"
done = jobs_done(store)
assert set(done) == set(ref_done), f"other evaluations ran: {sorted(set(done) ^ set(ref_done))[:5]}"
assert stored_jobs(store) >= {k for k in ref_done if not k.startswith("size ")}, "a finished job's result is not stored"
assert not unexplained, f"jobs whose results egg had stored ran again: {unexplained[:6]}"
assert kills >= 3 and all(fired.values()), f"only {kills} kills ({fired}): too few to tell"
print(f"# {kills} kills over {attempt} attempts ({', '.join(f'{n} at {triggers[t]}' for t, n in fired.items())}); "
      f"{extra} LLM requests and {repeated} unstored evaluations repeated; {len(done)} evaluations in both runs")
PY

finish
