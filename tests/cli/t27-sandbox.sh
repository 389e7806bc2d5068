#!/usr/bin/env bash
# t27-sandbox.sh: a hostile candidate (an honest kernel plus attacks) cannot
# steal egg's API key through /proc, write outside its scratch folder (the
# task file, $HOME, the store, the caches, /tmp, /dev/shm, /var/tmp), or
# reach a listener on 127.0.0.1, and its honest kernel still passes. As root,
# and as an ordinary user (created here when the suite runs as root). On a GPU
# machine: EGG_SANDBOX_DEVICE=cuda bash tests/run.sh t27.
. "$(dirname "$0")/../lib.sh"

PY=$(python3 -c 'import sys; print(sys.executable)')
USER_NAME=egg-sandbox-test
restore=()

# grant_traverse PATH: let every user traverse the folders above PATH (the
# Python installation may live under /root); undone at the end.
grant_traverse() {
	local d
	d=$(dirname "$1")
	while [ "$d" != "/" ]; do
		if [ "$(stat -c %A "$d" | cut -c10)" != "x" ] && [ "$(stat -c %A "$d" | cut -c10)" != "t" ]; then
			restore+=("$(stat -c %a "$d") $d")
			chmod o+x "$d"
		fi
		d=$(dirname "$d")
	done
}

# attack WHO: the whole attack as root ("root") or as the user WHO.
attack() {
	local who=$1 dir=$TMP/sbx-$1 mark key port runner=() rc
	mark=m$RANDOM$RANDOM$RANDOM
	key=sk-egg-sandbox-$mark
	mkdir -p "$dir/home" "$dir/store/llm-cache" "$dir/task"
	cp "$SRC/tests/tasks/argmax.py" "$dir/task/argmax.py"
	python3 - "$dir" >"$dir/listener.log" 2>&1 <<'PY' &
import socket, sys
d = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(d + "/port", "w").write(str(s.getsockname()[1]))
s.settimeout(120)
try:
    while True:
        c, _ = s.accept()
        open(d + "/net", "ab").write(b"connected\n" + c.recv(1 << 20))
except OSError:
    pass
PY
	local listener=$!
	for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
	port=$(cat "$dir/port")
	sed -e "s|@MARK@|$mark|g" -e "s|@PORT@|$port|g" -e "s|@HOME@|$dir/home|g" -e "s|@STORE@|$dir/store|g" \
		-e "s|@CACHE@|$dir/store/llm-cache|g" -e "s|@TASK@|$dir/task/argmax.py|g" \
		"$SRC/tests/sandbox/hostile_kernel.py.in" >"$dir/kernel.py"
	if [ "$(id -u)" -eq 0 ] && [ "$who" != root ]; then
		chown -R "$who" "$dir"
		runner=(runuser -u "$who" --)
	fi
	local before
	before=$(sha256sum <"$dir/task/argmax.py")
	# The key reaches egg's environment as a user's would: exported, never
	# on a command line (which any process could read in /proc).
	printf '%s' "$key" >"$TMP/key-$who"
	[ "$who" != root ] && chown "$who" "$TMP/key-$who"
	chmod 600 "$TMP/key-$who"
	"${runner[@]}" sh -c 'EGG_API_KEY=$(cat "$0") && export EGG_API_KEY && exec "$@"' "$TMP/key-$who" \
		env HOME="$dir/home" EGG_STORE="$dir/store" EGG_PYTHON="$PY" XDG_CONFIG_HOME="$dir/home/.config" \
		"$EGG" eval "$dir/task/argmax.py" "$dir/kernel.py" --device "${EGG_SANDBOX_DEVICE:-cpu}" --no-baseline \
		--trials 2 --iters 2 --warmup 1 --json >"$dir/out" 2>"$dir/err" &
	local egg_pid=$! seen=0
	while kill -0 "$egg_pid" 2>/dev/null; do
		if tr '\0' '\n' <"/proc/$egg_pid/environ" 2>/dev/null | grep -q -- "$key"; then seen=1; fi
		sleep 0.2
	done
	wait "$egg_pid"
	rc=$?
	kill "$listener" 2>/dev/null
	wait "$listener" 2>/dev/null

	if [ "$rc" -eq 0 ] && json_get "$dir/out" 'j["verdict"]' | grep -qx pass; then
		ok "$who: the honest kernel in the hostile file still passes"
	else
		not_ok "$who: the honest kernel in the hostile file still passes (exit $rc)"
		diag "$dir/err"
	fi
	json_get "$dir/out" '" ".join(f"{k}={v}" for k, v in sorted(j["sandbox"].items()) if k not in ("hidden", "writable"))' \
		2>/dev/null | sed "s/^/# $who sandbox: /"
	check "$who: its process sees no other process (own PID namespace)" \
		test "$(json_get "$dir/out" 'j["sandbox"]["pid_namespace"] and j["sandbox"]["read_only_root"] and j["sandbox"]["seccomp"]')" = True
	check "$who: egg's own environment block no longer holds the key" test "$seen" -eq 0
	local loot
	loot=$(find /tmp /dev/shm /var/tmp "$dir" /root /home -xdev -name "egg-sandbox-loot-$mark" 2>/dev/null)
	if [ -z "$loot" ]; then ok "$who: no file written to /tmp, /dev/shm, /var/tmp, \$HOME, the store or the cache"; else
		not_ok "$who: the candidate wrote $loot"; fi
	local leaked
	leaked=$(grep -rls --exclude="key-$who" -- "$key" /tmp /dev/shm /var/tmp "$dir" 2>/dev/null | head -3)
	if [ -z "$leaked" ]; then ok "$who: the key is in no file"; else not_ok "$who: the key leaked into $leaked"; fi
	check "$who: the task file is unchanged" test "$(sha256sum <"$dir/task/argmax.py")" = "$before"
	check "$who: the listener on 127.0.0.1 got no connection" test ! -s "$dir/net"
}

if [ "$(id -u)" -eq 0 ]; then
	attack root
	if command -v useradd >/dev/null && command -v runuser >/dev/null; then
		id "$USER_NAME" >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin "$USER_NAME"
		grant_traverse "$PY"
		grant_traverse "$(readlink -f "$PY")"
		grant_traverse "$EGG"
		grant_traverse "$SRC/worker/egg-worker.py"
		chmod o+rx "$TMP"
		attack "$USER_NAME"
		for r in "${restore[@]}"; do chmod "${r%% *}" "${r#* }"; done
		userdel "$USER_NAME" 2>/dev/null
	else
		not_ok "the ordinary-user run needs useradd and runuser"
	fi
else
	attack "$(id -un)"
fi
finish
