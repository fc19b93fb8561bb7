#!/usr/bin/env bash
# check_install.sh BUILD_DIR STAGING_DIR: `cmake --install --component python` into STAGING_DIR
# (as DESTDIR) puts the package, the extension, the runtime library and the measuring program
# anvil-measure side by side, and the installed anvil-measure loads the installed runtime library
# (its RUNPATH is $ORIGIN, not the build tree). measure_worker_path() takes this copy when the
# build tree's worker, which it tries first, is gone (an installed package).
set -euo pipefail
build=$1
staging=$2
rm -rf "$staging"
DESTDIR="$staging" cmake --install "$build" --component python >/dev/null
worker=$(find "$staging" -name anvil-measure -type f)
[ -n "$worker" ] || { echo "anvil-measure was not installed" >&2; exit 1; }
dir=$(dirname "$worker")
for f in __init__.py libanvil_runtime.so; do
    [ -e "$dir/$f" ] || { echo "$f is not beside anvil-measure in $dir" >&2; exit 1; }
done
ls "$dir"/_anvil*.so >/dev/null
# (Without LD_LIBRARY_PATH, which outranks RUNPATH; the output captured first, since grep -q
# would end the pipe early.)
libs=$(env -u LD_LIBRARY_PATH ldd "$worker")
grep -q "libanvil_runtime.so => $dir/libanvil_runtime.so" <<<"$libs" ||
    { echo "anvil-measure does not load the installed runtime:" >&2; echo "$libs" >&2; exit 1; }
# Without arguments it prints its usage and exits with status 2: it starts.
status=0
"$worker" >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || { echo "anvil-measure exited with $status, expected 2 (usage)" >&2; exit 1; }
rm -rf "$staging"
echo "install layout: ok"
