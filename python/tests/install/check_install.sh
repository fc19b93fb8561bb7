#!/usr/bin/env bash
# check_install.sh BUILD_DIR STAGING_DIR: `cmake --install --component python` into STAGING_DIR
# (as DESTDIR) puts the package, the extension, the runtime library, the tuner's helper
# programs anvil-measure and anvil-build and the RPC server and tracker (which anvil.rpc.Server
# and anvil.rpc.Tracker start) side by side, and the installed helpers load the
# installed runtime library (their RUNPATH is $ORIGIN, not the build tree). measure_worker_path()
# and build_worker_path() take these copies when the build tree's, which they try first, are gone
# (an installed package).
set -euo pipefail
build=$1
staging=$2
rm -rf "$staging"
DESTDIR="$staging" cmake --install "$build" --component python >/dev/null
worker=$(find "$staging" -name anvil-measure -type f)
[ -n "$worker" ] || { echo "anvil-measure was not installed" >&2; exit 1; }
dir=$(dirname "$worker")
for f in __init__.py libanvil_runtime.so anvil-build anvil-rpc-server anvil-rpc-tracker; do
    [ -e "$dir/$f" ] || { echo "$f is not beside anvil-measure in $dir" >&2; exit 1; }
done
ls "$dir"/_anvil*.so >/dev/null
for helper in anvil-measure anvil-build anvil-rpc-server anvil-rpc-tracker; do
    # (Without LD_LIBRARY_PATH, which outranks RUNPATH; the output captured first, since grep -q
    # would end the pipe early.)
    libs=$(env -u LD_LIBRARY_PATH ldd "$dir/$helper")
    grep -q "libanvil_runtime.so => $dir/libanvil_runtime.so" <<<"$libs" ||
        { echo "$helper does not load the installed runtime:" >&2; echo "$libs" >&2; exit 1; }
    # With a wrong argument it prints its usage and exits with status 2: it starts.
    status=0
    "$dir/$helper" --no-such-option >/dev/null 2>&1 || status=$?
    [ "$status" -eq 2 ] || { echo "$helper exited with $status, expected 2 (usage)" >&2; exit 1; }
done
rm -rf "$staging"
echo "install layout: ok"
