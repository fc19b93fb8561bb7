#!/usr/bin/env bash
# Builds and runs the GEMM benchmark (Anvil's matmul schedules against oneDNN's sgemm).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keeps its cache under $HOME; give it a place when the environment has no HOME.
[[ -n "${HOME:-}" || -n "${CCACHE_DIR:-}" ]] || export CCACHE_DIR=/tmp/anvil-ccache
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DANVIL_BUILD_BENCH=ON
cmake --build build --target matmul_bench
./build/bench/matmul_bench "$@"
