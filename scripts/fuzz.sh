#!/usr/bin/env bash
# Builds the fuzz harnesses (tests/fuzz/targets) with clang-19, libFuzzer, ASan and UBSan in
# build-fuzz/, and runs each for a while on its seed corpus.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--build-only] [HARNESS...]
#
# --seconds N   how long each harness runs (default 60)
# --jobs J      how many harnesses run at once (default 1)
# HARNESS       onnx_import tflite_import graph_text tir_text npz graph_plan vm_program
#               torchscript_graph dnnl_module tuning_records cost_model rpc_request
#               (default: all)
#
# Corpora grow in build-fuzz/corpus/<harness>/ from run to run; findings (crashes, hangs,
# sanitizer reports, out-of-memory inputs; also slow units, which do not fail the run) land in
# build-fuzz/findings/<harness>/ and the log of each run in build-fuzz/logs/<harness>.log. A
# finding becomes a regression test by copying it into tests/fuzz/regressions/<harness>/: the
# test command replays every file there.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n "${HOME:-}" || -n "${CCACHE_DIR:-}" ]] || export CCACHE_DIR=/tmp/anvil-ccache

seconds=60
jobs=1
build_only=0
harnesses=()
while (($#)); do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --build-only) build_only=1; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) harnesses+=("$1"); shift ;;
    esac
done
all=(onnx_import tflite_import graph_text tir_text npz graph_plan vm_program torchscript_graph
     dnnl_module tuning_records cost_model rpc_request)
((${#harnesses[@]})) || harnesses=("${all[@]}")

scripts/install_deps.sh --tests
CC=clang-19 CXX=clang++-19 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DANVIL_FUZZ=ON -DANVIL_BUILD_TESTS=ON -DANVIL_BUILD_PYTHON=OFF >/dev/null
cmake --build build-fuzz --target $(printf 'fuzz_%s ' "${harnesses[@]}")
((build_only)) && exit 0

node_tests=/usr/share/libonnx-testdata/data/node
# Fills a harness's corpus the first time: its seeds from the test data, its built-in seeds and
# its regression inputs.
seed_corpus() {
    local name=$1 corpus=build-fuzz/corpus/$1
    mkdir -p "$corpus"
    if [[ ! -e "$corpus/.seeded" ]]; then
        case "$name" in
            onnx_import)
                find "$node_tests" -name model.onnx | while read -r f; do
                    cp "$f" "$corpus/$(basename "$(dirname "$f")").onnx"
                done
                cp tests/models/cnn_dynamic_batch/model.onnx "$corpus/cnn_dynamic_batch.onnx"
                cp tests/models/transformer_encoder_relu/model.onnx "$corpus/transformer.onnx" ;;
            tflite_import)
                find ../shared/models/tflite -name '*.tflite' -size -64k -exec cp {} "$corpus/" \; ;;
            graph_text) cp tests/golden/graph/*.txt examples/modules/*.anvil "$corpus/" ;;
            tir_text) cp tests/golden/tir/*.tir "$corpus/" ;;
            torchscript_graph) cp tests/fuzz/seeds/torchscript_graph/*.json "$corpus/" ;;
        esac
        # -runs=0 on an empty folder: only LLVMFuzzerInitialize runs, which writes the seeds.
        local empty
        empty=$(mktemp -d)
        ANVIL_FUZZ_WRITE_SEEDS="$corpus" "build-fuzz/tests/fuzz/targets/fuzz_$name" -runs=0 \
            "$empty" >/dev/null 2>&1
        rmdir "$empty"
        touch "$corpus/.seeded"
    fi
    if [[ -d tests/fuzz/regressions/$name ]]; then
        cp tests/fuzz/regressions/"$name"/* "$corpus/" 2>/dev/null || true
    fi
}

run_one() {
    local name=$1
    mkdir -p build-fuzz/findings/"$name" build-fuzz/logs
    seed_corpus "$name"
    # The importer harness compiles each input (LLVM at -O1): give it room.
    "build-fuzz/tests/fuzz/targets/fuzz_$name" -max_total_time="$seconds" -timeout=60 \
        -rss_limit_mb=6144 -max_len=131072 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/findings/$name/" "build-fuzz/corpus/$name" \
        >"build-fuzz/logs/$name.log" 2>&1 || true
    local execs cov findings
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/logs/$name.log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "build-fuzz/logs/$name.log" | tail -1 | grep -o '[0-9]*' || echo "?")
    findings=$(find build-fuzz/findings/"$name" -type f ! -name 'slow-unit-*' | wc -l)
    slow=$(find build-fuzz/findings/"$name" -type f -name 'slow-unit-*' | wc -l)
    printf '%-12s %10s execs  cov %6s  findings %s  slow units %s\n' "$name" "$execs" "$cov" \
        "$findings" "$slow"
}
export -f run_one seed_corpus
export seconds node_tests

echo "fuzzing ${harnesses[*]} for ${seconds} s each, ${jobs} at a time"
printf '%s\n' "${harnesses[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
# Crashes, timeouts, out-of-memory inputs and leaks count; slow units (inputs slower than any
# before them, kept for a look) do not.
total=$(find build-fuzz/findings -type f ! -name 'slow-unit-*' 2>/dev/null | wc -l)
if ((total)); then
    echo "fuzz: $total finding(s) in build-fuzz/findings (see build-fuzz/logs)" >&2
    exit 1
fi
echo "fuzz: no findings"
