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
log=$(mktemp)

run_group() {
	local name=$1; shift
	[ -n "$only" ] && [[ "$name" != *"$only"* ]] && return
	echo "# == $name"
	local t0=$SECONDS
	"$@" >"$log" 2>&1
	local rc=$?
	cat "$log"
	# Each group's wall time, so that a slower CI run shows where it went.
	echo "# $name took $((SECONDS - t0)) s"
	timings+=("$((SECONDS - t0)) $name")
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
}

# `tests/run.sh --selftest`: only a made-up group with one pass, one skip and
# one failure, so that tests/check_harness.sh can check the counting itself.
[ "$only" = "--selftest" ] && run_group --selftest printf 'ok 1 - passes\nok 2 - skipped # SKIP why\nnot ok 3 - fails\n'
[ "$only" = "--selftest-empty" ] && run_group --selftest-empty true
run_group unit "$EGG_BUILD/egg-unit"
run_group harness bash tests/check_harness.sh
run_group layers bash tests/check_layers.sh
for t in tests/cli/t*.sh; do
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
# A fixed few mutations (tests/mutants/catalog.py, ci=True): the suite proves
# on every run that those tests still fail when their code is broken. The
# whole catalog: python3 scripts/mutants.py.
run_group mutants python3 scripts/mutants.py --ci --tap

rm -f "$log"
echo
[ ${#timings[@]} -gt 1 ] && echo "slowest groups: $(printf '%s\n' "${timings[@]}" | sort -rn | head -5 | awk '{printf "%s%s %d s", (NR>1 ? ", " : ""), $2, $1}')"
[ ${#failures[@]} -gt 0 ] && echo "failed groups: ${failures[*]}"
[ ${#skips[@]} -gt 0 ] && echo "skipped (reason on each '# SKIP' line above): ${skips[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
