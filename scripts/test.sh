#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds Anvil and its tests, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keeps its cache under $HOME; give it a place when the environment has no HOME.
[[ -n "${HOME:-}" || -n "${CCACHE_DIR:-}" ]] || export CCACHE_DIR=/tmp/anvil-ccache
scripts/install_deps.sh --tests
scripts/check_format.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DANVIL_BUILD_TESTS=ON
cmake --build build
ctest --test-dir build --output-on-failure -j2
