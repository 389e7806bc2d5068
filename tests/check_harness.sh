#!/usr/bin/env bash
# check_harness.sh: the test harness can fail. tests/run.sh counts a skip as
# a skip (never a pass) and a failure as a failure; the fuzz smoke driver
# fails when it fuzzed nothing.
set -u
cd "$(dirname "$0")/.."
out=$(bash tests/run.sh --selftest 2>&1)
rc=$?
last=$(tail -1 <<<"$out")
if [ $rc -ne 0 ] && [ "$last" = "1 passed, 1 failed, 1 skipped" ]; then
	echo "ok - run.sh counts a pass, a skip and a failure as such, and exits non-zero"
else
	echo "not ok - run.sh counted '$last' (exit $rc) for a pass, a skip and a failure"
fi
out=$(bash tests/run.sh --selftest-empty 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q '^not ok - --selftest-empty printed no test line' <<<"$out"; then
	echo "ok - run.sh fails a group that exits 0 having printed no test line"
else
	echo "not ok - run.sh let a group that ran nothing pass: '$(tail -1 <<<"$out")' (exit $rc)"
fi
smoke=${EGG_BUILD:-build}/fuzz_ncu-smoke
if [ ! -x "$smoke" ]; then
	echo "ok - the fuzz driver fails on no seeds # SKIP $smoke is not built"
else
	out=$("$smoke" /nonexistent/seed 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && grep -q '^not ok .*nothing was fuzzed' <<<"$out"; then
		echo "ok - the fuzz smoke driver fails when it read no seed"
	else
		echo "not ok - the fuzz smoke driver said '$out' (exit $rc) without seeds"
	fi
fi
