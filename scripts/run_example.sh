#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds Anvil, and runs the main job: compile the MobileNetV2
# model bundled in models/ into one shared library, run it on its test input, print the top-5
# classes, check the output against the reference, and time it.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n "${HOME:-}" || -n "${CCACHE_DIR:-}" ]] || export CCACHE_DIR=/tmp/anvil-ccache
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target anvil
anvil=build/src/driver/cli/anvil
model=models/mobilenet_v2
"$anvil" compile "$model/model.onnx" --target "llvm -mcpu=native" -o build/mobilenet_v2.so
"$anvil" run build/mobilenet_v2.so --inputs "$model/test_data_set_0" \
    --compare "$model/test_data_set_0" --print-top 5 --labels models/imagenet_classes.txt \
    --print-time --repeat 20 "$@"
