#!/usr/bin/env bash
# check_layers.sh: the C modules keep to their layers (scripts/check_layers.py),
# and the checker itself catches an upward include and a header cycle.
set -u
cd "$(dirname "$0")/.."
if python3 scripts/check_layers.py; then
	echo "ok - src/ keeps to the layers"
else
	echo "not ok - src/ breaks the layers (see above)"
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp -r src scripts "$t"/
sed -i '1a #include "../cli/cli.h"' "$t"/src/util/buf.h
sed -i '1a #include "buf.h"' "$t"/src/util/err.h
sed -i '1a #include "err.h"' "$t"/src/util/buf.h
out=$(cd "$t" && python3 scripts/check_layers.py)
rc=$?
if [ $rc -eq 1 ] && grep -q 'util/buf.h: includes cli/cli.h, a higher layer' <<<"$out" &&
   grep -q 'header cycle: util/' <<<"$out"; then
	echo "ok - the checker reports an upward include and a header cycle"
else
	echo "not ok - the checker missed a planted breach (rc $rc): $out"
fi
