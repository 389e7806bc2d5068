#!/usr/bin/env bash
# run.sh: egg's whole test suite (what `make test` and CI run). Every group
# prints TAP lines; this script counts them and ends with "N passed, N failed, N skipped" (a skip is never a pass).
set -u
cd "$(dirname "$0")/.."
export EGG_SOURCE_DIR=$PWD
export EGG_BUILD=${EGG_BUILD:-build}
export EGG_BIN=$PWD/$EGG_BUILD/egg
only=${1:-}

passed=0
failed=0
skipped=0
failures=()
skips=()
timings=()

# Groups run EGG_TEST_JOBS at a time (default: the machine's cores, at
# least 2): most of a group's wall time is a worker starting or a mock
# model's reply, not CPU. Each group has its own log and its own device lock
# folder (EGG_LOCK_DIR), so that one group's timed loops never wait on
# another's; its lines are printed whole when it ends, and tallied then.
jobs=${EGG_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ -n "${EGG_TEST_JOBS:-}" ] || [ "$jobs" -ge 2 ] 2>/dev/null || jobs=2
[ "$jobs" -ge 1 ] 2>/dev/null || { echo "run.sh: EGG_TEST_JOBS must be a number of at least 1" >&2; exit 2; }
work=$(mktemp -d /tmp/egg-run-XXXXXX) && chmod 755 "$work"
declare -A group_of=()  # pid -> group number
names=()
started=()
running=0
# Interrupted: the groups still running go too.
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"; exit 130' INT TERM

run_group() {
	local name=$1; shift
	[ -n "$only" ] && [[ "$name" != *"$only"* ]] && return
	while [ "$running" -ge "$jobs" ]; do reap_one; done
	local i=${#names[@]}
	names+=("$name")
	started+=("$SECONDS")
	# Open to every user as /tmp is (t27 runs egg as another user too).
	mkdir -p "$work/$i.locks" && chmod 1777 "$work/$i.locks"
	( EGG_LOCK_DIR=$work/$i.locks "$@" >"$work/$i.log" 2>&1; echo $? >"$work/$i.rc" ) &
	group_of[$!]=$i
	running=$((running + 1))
}

# reap_one: waits for one running group to end, prints its lines and tallies them.
reap_one() {
	local pid
	wait -n -p pid
	[ -n "${group_of[$pid]+set}" ] || return 0
	local i=${group_of[$pid]} log=$work/${group_of[$pid]}.log
	unset "group_of[$pid]"
	running=$((running - 1))
	local name=${names[$i]} rc took=$((SECONDS - ${started[$i]}))
	rc=$(cat "$work/$i.rc" 2>/dev/null || echo 1)
	echo "# == $name"
	cat "$log"
	# Each group's wall time, so that a slower CI run shows where it went.
	echo "# $name took $took s"
	timings+=("$took $name")
	local p f s
	# A skipped check ("ok N - ... # SKIP why") proved nothing: it is counted
	# and listed as a skip, never as a pass.
	s=$(grep -c '^ok .*# SKIP' "$log")
	p=$(($(grep -c '^ok ' "$log") - s))
	f=$(grep -c '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc"
	elif [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
		# A group that ran nothing proved nothing.
		f=1
		echo "not ok - $name printed no test line"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ "$s" -gt 0 ] && skips+=("$name: $s")
	[ "$f" -gt 0 ] && failures+=("$name")
	return 0
}

# `tests/run.sh --selftest`: only a made-up group with one pass, one skip and
# one failure, so that tests/check_harness.sh can check the counting itself.
[ "$only" = "--selftest" ] && run_group --selftest printf 'ok 1 - passes\nok 2 - skipped # SKIP why\nnot ok 3 - fails\n'
[ "$only" = "--selftest-empty" ] && run_group --selftest-empty true
# The longest groups start first, so that none is left running alone at the
# end. A fixed few mutations (tests/mutants/catalog.py, ci=True): the suite
# proves on every run that those tests still fail when their code is broken.
# The whole catalog: python3 scripts/mutants.py.
run_group mutants python3 scripts/mutants.py --ci --tap
run_group cli/t83-model-matrix bash tests/cli/t83-model-matrix.sh
run_group unit "$EGG_BUILD/egg-unit"
run_group harness bash tests/check_harness.sh
run_group layers bash tests/check_layers.sh
for t in tests/cli/t*.sh; do
	[ "$t" = tests/cli/t83-model-matrix.sh ] && continue
	run_group "cli/$(basename "$t" .sh)" bash "$t"
done
for smoke in "$EGG_BUILD"/fuzz_*-smoke; do
	[ -e "$smoke" ] || continue
	n=$(basename "$smoke" -smoke)
	run_group "fuzz/$n" env FUZZ_ITERS=${FUZZ_ITERS:-3000} "$smoke" tests/fuzz/corpus/"${n#fuzz_}"/*
done
if [ -d tests/worker ] && ls tests/worker/test_*.py >/dev/null 2>&1; then
	for t in tests/worker/test_*.py; do
		run_group "worker/$(basename "$t" .py)" python3 "$t"
	done
fi
while [ "$running" -gt 0 ]; do reap_one; done
rm -rf "$work"
echo
[ ${#timings[@]} -gt 1 ] && echo "slowest groups: $(printf '%s\n' "${timings[@]}" | sort -rn | head -5 | awk '{printf "%s%s %d s", (NR>1 ? ", " : ""), $2, $1}')"
[ ${#failures[@]} -gt 0 ] && echo "failed groups: ${failures[*]}"
[ ${#skips[@]} -gt 0 ] && echo "skipped (reason on each '# SKIP' line above): ${skips[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
