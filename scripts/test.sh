#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds Anvil and its tests, and runs them.
#
#   scripts/test.sh              the test command (CI runs exactly this): install what is missing,
#                                check formatting, build in build/, run every suite with ctest
#                                (unit, golden, errors, e2e, every op, conformance, CLI, Python,
#                                and a short run of every fuzz harness), then say how many tests
#                                were skipped and why
#   scripts/test.sh --sanitize   the suites built with clang-19, ASan + UBSan in build-fuzz/
#                                (Python tests left out: the interpreter is not instrumented),
#                                then the concurrency tests under ThreadSanitizer
#   scripts/test.sh --full       the test command, then every torchvision network (the test
#                                command has one per family), then --sanitize, then every fuzz
#                                harness under libFuzzer for FUZZ_SECONDS (default 60) each
#                                (scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keeps its cache under $HOME; give it a place when the environment has no HOME.
[[ -n "${HOME:-}" || -n "${CCACHE_DIR:-}" ]] || export CCACHE_DIR=/tmp/anvil-ccache

mode=default
case "${1:-}" in
    "") ;;
    --sanitize) mode=sanitize ;;
    --full) mode=full ;;
    *)
        echo "usage: scripts/test.sh [--sanitize | --full]" >&2
        exit 2
        ;;
esac

scripts/install_deps.sh --tests

# The test command. Returns ctest's status after printing the skip summary.
run_tests() {
    scripts/check_format.sh
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DANVIL_BUILD_TESTS=ON
    cmake --build build
    local status=0
    ctest --test-dir build --output-on-failure -j2 || status=$?
    /usr/bin/python3 scripts/summarize_skips.py build
    return "$status"
}

# Sanitizer builds: every finding stops the test that made it. ASan + UBSan use the instrumented
# build the fuzzers use (clang-19, build-fuzz/): one build serves both. ThreadSanitizer runs the
# concurrency tests: the runtime's with hand-made plans, and the e2e ones over compiled models.
run_sanitized() {
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    CC=clang-19 CXX=clang++-19 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DANVIL_FUZZ=ON -DANVIL_BUILD_TESTS=ON -DANVIL_BUILD_PYTHON=OFF
    cmake --build build-fuzz
    ctest --test-dir build-fuzz --output-on-failure -j2 --timeout 3000
    CC=clang-19 CXX=clang++-19 cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DANVIL_BUILD_TESTS=ON -DANVIL_BUILD_PYTHON=OFF -DANVIL_SANITIZE=thread
    cmake --build build-tsan --target anvil_runtime_tests anvil_e2e_tests
    build-tsan/tests/anvil_runtime_tests --gtest_filter='*Concurren*:*ThreadPool*'
    build-tsan/tests/anvil_e2e_tests --gtest_filter='*Concurren*'
}

case "$mode" in
    default) run_tests ;;
    sanitize) run_sanitized ;;
    full)
        run_tests
        ANVIL_TORCHVISION_ALL=1 PYTHONPATH=build/python /usr/bin/python3 -m pytest -q \
            -p no:cacheprovider python/tests/pytorch_models
        run_sanitized
        scripts/fuzz.sh --seconds "${FUZZ_SECONDS:-60}"
        ;;
esac
