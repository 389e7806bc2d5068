# lib.sh: helpers for egg's shell tests: TAP output, running egg, the mock LLM server.
# Source it; call `finish` at the end.
set -u
n=0
fails=0
EGG=${EGG_BIN:?EGG_BIN not set (run through tests/run.sh)}
SRC=${EGG_SOURCE_DIR:?}
TMP=$(mktemp -d /tmp/egg-test-XXXXXX)
MOCK_PID=
export XDG_CONFIG_HOME=$TMP/xdg
export EGG_STORE=$TMP/store
unset EGG_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY EGG_BASE_URL OPENAI_BASE_URL EGG_MODEL EGG_CONFIG EGG_PROVIDER

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
diag() { sed 's/^/#   /' "$@"; }

# run_egg ARGS...: runs egg, leaving $OUT, $ERR (file paths) and $RC.
OUT=$TMP/out; ERR=$TMP/err; RC=0
run_egg() {
	"$EGG" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}
expect_rc() { # expect_rc CODE DESCRIPTION
	if [ "$RC" -eq "$1" ]; then ok "$2 (exit $1)"; else
		not_ok "$2 (exit $RC, want $1)"; diag "$ERR"; fi
}
expect_err() { # expect_err PATTERN DESCRIPTION (grep -E on stderr)
	if grep -Eq -- "$1" "$ERR"; then ok "$2"; else not_ok "$2"; diag "$ERR"; fi
}
expect_out() {
	if grep -Eq -- "$1" "$OUT"; then ok "$2"; else not_ok "$2"; diag "$OUT"; fi
}
json_get() { # json_get FILE EXPR: prints the Python expression over the parsed JSON `j`
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# start_mock SCRIPT_FILE [MOCK_OPTION...]: starts the mock LLM server; sets MOCK_URL, MOCK_LOG.
start_mock() {
	stop_mock
	mock_seq=$(( ${mock_seq:-0} + 1 )); MOCK_LOG=$TMP/mock-$mock_seq.jsonl
	rm -f "$TMP/port"
	local script=$1; shift
	python3 "$SRC/tests/mock/mockllm.py" --script "$script" --log "$MOCK_LOG" --port-file "$TMP/port" "$@" \
		>/dev/null 2>"$TMP/mock.err" &
	MOCK_PID=$!
	for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
	MOCK_URL=http://127.0.0.1:$(cat "$TMP/port")
	export EGG_BASE_URL=$MOCK_URL
}
stop_mock() {
	if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; MOCK_PID=; fi
}
mock_requests() { [ -f "$MOCK_LOG" ] && wc -l <"$MOCK_LOG" | tr -d ' ' || echo 0; }

finish() {
	stop_mock
	rm -rf "$TMP"
	echo "1..$n"
	[ "$fails" -eq 0 ]
}
trap 'stop_mock' EXIT
