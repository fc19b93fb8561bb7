#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds Anvil, and runs the matmul example (the schedule walk),
# from a naive loop nest to a blocked, vectorized, parallel schedule, checked and timed.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keeps its cache under $HOME; give it a place when the environment has no HOME.
[[ -n "${HOME:-}" || -n "${CCACHE_DIR:-}" ]] || export CCACHE_DIR=/tmp/anvil-ccache
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target matmul_example
./build/examples/matmul/matmul_example "$@"
