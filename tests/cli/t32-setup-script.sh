#!/usr/bin/env bash
# t32-setup-script.sh: scripts/setup.sh keeps a GPU machine's own torch and
# Triton when egg supports them, pins the tested CPU stack otherwise, and
# says which it uses. A stand-in python3 reports each stack (apt-get is
# skipped: EGG_SETUP_APT=0), and records any pip call.
. "$(dirname "$0")/../lib.sh"

FAKE=$TMP/python3
PIPLOG=$TMP/pip.log
stack() { # stack "TORCH TRITON NUMPY CUDA": the stand-in reports it
	cat >"$FAKE" <<SH
#!/bin/sh
if [ "\$1" = "-m" ]; then echo "\$*" >>"$PIPLOG"; exit 0; fi
case "\$2" in *EXTERNALLY-MANAGED*) [ -e "$TMP/managed" ] && echo 1 || echo 0; exit 0 ;; esac
echo "$1"
SH
	chmod +x "$FAKE"
	rm -f "$PIPLOG"
}
setup() { EGG_PYTHON=$FAKE EGG_SETUP_APT=0 run_cmd bash "$SRC/scripts/setup.sh" "$@"; }
run_cmd() { "$@" >"$OUT" 2>"$ERR"; RC=$?; }

stack "2.11.0+cu130 3.6.0 2.2.6 13.0"
setup
expect_rc 0 "a GPU machine's own CUDA torch with a supported Triton"
expect_out "^setup: keeping .*python3's GPU stack: torch 2.11.0\+cu130 \(CUDA 13.0\), triton 3.6.0, numpy 2.2.6$" \
	"is kept, and setup says which stack it uses"
check "and nothing is installed over it" test ! -e "$PIPLOG"

stack "2.13.0+cpu 3.6.0 2.3.5 -"
setup
expect_out "^setup: .*python3 has torch 2.13.0\+cpu, triton 3.6.0, numpy 2.3.5$" "the tested CPU stack is named"
check "and left as it is" test ! -e "$PIPLOG"

stack "2.4.0+cu121 3.0.0 1.26.4 12.1"
setup </dev/null
expect_rc 2 "an unsupported torch is not replaced without being asked"
expect_err "^setup: .* has torch 2.4.0\+cu121 \(CUDA 12.1\) with triton 3.0.0, which egg does not support; left as it is: rerun with --replace-torch" \
	"and setup says how to allow it"
check "nothing is installed over it" test ! -e "$PIPLOG"
setup --replace-torch </dev/null
expect_out "which egg does not support; installing the tested stack \(--replace-torch\)" \
	"with --replace-torch it is said to be replaced"
check "by the pinned versions" grep -q "pip install -q torch==2.13.0 triton==3.6.0 numpy==2.3.5" "$PIPLOG"
stack "2.12.0+cpu 3.6.0 2.3.5 -"
setup </dev/null
expect_rc 2 "a CPU torch of another release is not replaced without being asked either"

# Debian's own python3 (PEP 668): setup says to use a virtual environment.
stack "- - - -"
touch "$TMP/managed"
setup </dev/null
expect_rc 2 "a system-managed python3 is refused before any pip install"
expect_err "is managed by the system \(PEP 668.*--venv .venv" "naming --venv"
check "nothing was installed" test ! -e "$PIPLOG"
rm -f "$TMP/managed"
# --venv DIR: the environment is made, and the stack goes there.
mkdir -p "$TMP/venv/bin"
cp "$FAKE" "$TMP/venv/bin/python"
sed -i "s|echo \"\\\$\*\" >>|echo \"venv \\\$*\" >>|" "$TMP/venv/bin/python"
setup --venv "$TMP/venv" </dev/null
expect_rc 0 "setup --venv DIR"
check "installs into the environment's own Python" grep -q "^venv -m pip install -q torch==2.13.0" "$PIPLOG"

stack "- - - -"
setup
check "a Python without torch gets the pinned stack" grep -q "torch==2.13.0" "$PIPLOG"

setup --frobnicate
expect_rc 2 "an unknown option is bad usage"
expect_err "unknown option '--frobnicate' \(use --tests, --venv DIR, --replace-torch\)" "and says what there is"
setup --help
expect_out "--tests" "--help says what --tests adds"

finish
