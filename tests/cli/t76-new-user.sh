#!/usr/bin/env bash
# t76-new-user.sh: what a first-time user trips on (issue 39). A figure that
# does not exist prints "-", never nan (a batch judged with --no-timing, a
# selfcheck of a task that never ran); a stopped task is its own category in
# the HTML report, its reason said once; a run id may be given by its
# beginning, and a wrong one says what to do; egg eval's help lists the batch
# forms' options, and options that cannot apply are refused up front.
. "$(dirname "$0")/../lib.sh"

T=$SRC/tests/tasks
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none"
LIST=$TMP/pairs.txt
echo "$T/bias_relu_scale.py $T/bias_relu_scale_kernel.py" >"$LIST"
echo "$T/row_sum.py $T/argmax_wrong_kernel.py" >>"$LIST"
no_nan() { ! grep -Eiqw 'nan|nanx|-?inf' "$1"; }

# --- no figure: "-"
run_egg eval --batch "$LIST" $FAST --no-timing --json
expect_rc 1 "a batch judged without timing (one pair passes, one fails)"
RUN1=$(json_get "$OUT" 'j["run"]')
run_egg report "$RUN1"
check "the text report of an untimed batch prints no nan" no_nan "$OUT"
check "the passing pair's kernel ms and speedup read '-'" \
	grep -Eq '^tasks__bias_relu_scale__bias_relu_s[^ ]* +done( +[0-9.-]+){5} +- +- +- +-' "$OUT"
run_egg report "$RUN1" --html "$TMP/untimed.html"
check "nor does its HTML report" no_nan "$TMP/untimed.html"
check "where the untimed kernel is 'not timed' in the chart, not 'failed'" \
	grep -q '<title>not timed: 1</title>.*<title>failed: 1</title>' "$TMP/untimed.html"
run_egg selfcheck --device cpu -q "$TMP/no_such_task.py"
expect_rc 1 "a selfcheck of a task that cannot be read"
check "its summary has no evaluation seconds to give: '-'" \
	grep -q '^selfcheck: 0/1 ok; evaluation seconds median -, max - ' "$OUT"
check "and no nan anywhere" no_nan "$OUT"

# --- a stopped task in the HTML report
one=$TMP/one.txt
head -1 "$LIST" >"$one"
EGG_FAULT=task_finish run_egg eval --batch "$one" $FAST --no-timing --json
expect_rc 3 "a pair whose end the store refused is stopped"
RUN2=$(json_get "$OUT" 'j["run"]')
run_egg report "$RUN2" --html "$TMP/stopped.html"
check "the chart counts it as stopped, not failed" \
	grep -q '<title>failed: 0</title>.*<title>stopped: 1</title>' "$TMP/stopped.html"
check "its cell says 'stopped' once, then why" \
	bash -c "grep -q '<td class=\"stopped\">stopped: the run store could not record' '$TMP/stopped.html' &&
		! grep -q 'stopped: stopped:' '$TMP/stopped.html'"

# --- run ids: a prefix of one, of several, of none
common=$(python3 -c 'import os, sys; print(os.path.commonprefix(sys.argv[1:]))' "$RUN1" "$RUN2")
run_egg report "${RUN1:0:$((${#common} + 1))}" --json
expect_rc 0 "egg report takes the beginning of a run id"
check "and reports that run" test "$(json_get "$OUT" 'j["run"]["id"]')" = "$RUN1"
run_egg report "$common"
expect_rc 2 "a beginning that two runs share is a usage error"
check "in one line that lists them" \
	bash -c "test \$(wc -l <'$ERR') -eq 1 && grep -q 'ambiguous' '$ERR' && grep -q '$RUN1' '$ERR' && grep -q '$RUN2' '$ERR'"
run_egg report 19990101-000000-nope
expect_rc 2 "an unknown run id is a usage error"
check "in one line naming the store and 'egg runs'" \
	bash -c "test \$(wc -l <'$ERR') -eq 1 && grep -q \"no run '19990101-000000-nope' in the store '$EGG_STORE/egg.db'\" '$ERR' &&
		grep -q 'egg runs' '$ERR'"
run_egg eval --resume "${RUN2:0:$((${#common} + 1))}" --json
expect_rc 0 "egg eval --resume takes the beginning of a run id too (the shared lookup)"
check "and finishes that run, making no new one" \
	test "$(sqlite3 "$EGG_STORE/egg.db" "SELECT COUNT(*) || ' ' || (SELECT status FROM runs WHERE id = '$RUN2') FROM runs")" = "2 done"
run_egg report abc --store "$TMP/no-store"
expect_rc 2 "egg report of a store that does not exist is a usage error"
check "naming the store, and creating nothing" bash -c "grep -q \"no store at '$TMP/no-store'\" '$ERR' && [ ! -e '$TMP/no-store' ]"
run_egg runs --store "$TMP/no-store"
expect_rc 0 "egg runs of a store that does not exist lists no run"
check "and creates nothing" test ! -e "$TMP/no-store"
run_egg bench --resume 19990101-000000-nope
expect_rc 2 "egg bench --resume of an unknown run is a usage error"
expect_err "no run '19990101-000000-nope'.*egg runs" "naming 'egg runs'"

# --- egg eval's help and its refusals
run_egg eval --help
expect_rc 0 "egg eval --help"
check "lists the batch forms' --devices, --jobs and --resume" \
	bash -c "grep -q -- '^  --devices LIST' '$OUT' && grep -q -- '^  -j, --jobs N' '$OUT' && grep -q -- '^  --resume RUN' '$OUT'"
run_egg eval --batch "$LIST" --no-baseline $FAST
expect_rc 2 "--no-baseline with --batch is refused"
check "up front, in one line saying why" \
	bash -c "test \$(wc -l <'$ERR') -eq 1 && grep -q '^egg: error: --no-baseline goes with one pair' '$ERR'"
for jobs in 0 -2; do
	run_egg eval --batch "$LIST" --jobs "$jobs" $FAST
	expect_rc 2 "egg eval --batch --jobs $jobs is refused"
	expect_err "^egg: error: --jobs takes 1 or more" "saying what it takes"
done
run_egg bench --jobs 0 "$T/row_sum.py"
expect_rc 2 "so is egg bench --jobs 0 (the same flag)"
expect_err "^egg: error: --jobs takes 1 or more" "with the same words"
finish
