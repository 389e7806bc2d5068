#!/usr/bin/env bash
# t45-signals.sh: SIGTERM or SIGINT to egg in the middle of an evaluation ends
# egg, its worker and every evaluation process (reference and candidate); so
# does SIGKILL, which egg cannot catch (the worker notices egg is gone).
. "$(dirname "$0")/../lib.sh"

# marked: the processes whose environment holds this test's mark.
marked() {
	local p
	for p in /proc/[0-9]*; do
		cat "$p/environ" 2>/dev/null | tr '\0' '\n' | grep -qx "EGG_TEST_MARK=$MARK" && echo "${p#/proc/}"
	done
}

for sig in TERM INT KILL; do
	MARK=sig$sig$RANDOM$RANDOM
	EGG_TEST_MARK=$MARK "$EGG" eval "$SRC/tests/tasks/argmax.py" "$SRC/tests/tasks/sleepy_kernel.py" \
		--device cpu --no-baseline --timeout 300 >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	# Wait until the candidate is inside its first trial: egg, the worker, the
	# reference, the candidate (and its PID-namespace parent) are alive.
	for _ in $(seq 300); do [ "$(marked | wc -l)" -ge 4 ] && break; sleep 0.1; done
	before=$(marked | wc -l)
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	for _ in $(seq 100); do [ -z "$(marked)" ] && break; sleep 0.1; done
	left=$(marked)
	check "SIG$sig: egg had its worker, reference and candidate running ($before processes)" test "$before" -ge 4
	want=$((128 + $(kill -l "$sig")))
	check "SIG$sig: egg dies of the signal (exit $rc, want $want)" test "$rc" -eq "$want"
	if [ -z "$left" ]; then ok "SIG$sig: no worker or evaluation process is left"; else
		not_ok "SIG$sig: still running: $(ps -o pid,args -p "$(echo $left | tr ' ' ',')" 2>/dev/null | tail -n +2)"
		kill -9 $left 2>/dev/null
	fi
done
finish
