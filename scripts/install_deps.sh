#!/usr/bin/env bash
# Installs what Anvil needs from Debian's packages; installs nothing that is already there.
# Usage: scripts/install_deps.sh [--tests] [--bench]
#   --tests adds the cross-compilation test tools and the Python test tools (PyTorch and
#   torchvision included: the PyTorch importer's tests make their models), and the TFLite
#   runtime the TFLite importer's tests compare with (Node.js, then `npm ci` in
#   python/tests/tflite/litert for @litertjs/core); --bench adds the
#   peers of bench/models/compare.py (PyTorch and torchvision, ONNX for Python, Node.js and npm
#   for onnxruntime-node, which `npm ci` in bench/models then installs).
set -euo pipefail
tflite_reference=0
arm64=0

packages=(
    build-essential cmake ninja-build ccache pkg-config clang-format git
    zlib1g-dev llvm-19-dev libdlpack-dev nlohmann-json3-dev libfmt-dev libcli11-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    # oneDNN 2.6 (src/codegen/external/dnnl: the external code generator's runtime library, and
    # the benchmarks' peer); it pulls in libgomp1, its OpenMP runtime, which that library links.
    libdnnl-dev
    # oneDNN's CMake package fails to configure without the OpenCL loader and headers, which
    # libdnnl-dev does not pull in.
    ocl-icd-opencl-dev opencl-headers
    libonnx-dev libprotobuf-dev protobuf-compiler
    # The xgb tuner's cost model (src/tune/xgb_cost_model.cpp).
    libxgboost-dev
    # The TFLite importer reads flatbuffers with its Verifier (src/frontend/tflite).
    libflatbuffers-dev
    # RPC to remote devices (src/runtime/rpc): ZeroMQ with CurveZMQ, and libsodium, which derives
    # the CurveZMQ keys from the shared auth key.
    libzmq3-dev libsodium-dev
)
for arg in "$@"; do
    case "$arg" in
        --tests)
            # AArch64 objects are linked with the cross compiler and run under qemu-user in tests.
            # The Python package (python/) is built against Debian's python3 and tested with pytest.
            packages+=(g++-aarch64-linux-gnu qemu-user python3-numpy)
            # The RPC server cross-built for arm64 (the remote-device tests' "board") links
            # Debian's arm64 ZeroMQ, libsodium and zlib (cmake/aarch64-linux-gnu.cmake).
            packages+=(libzmq5:arm64 libsodium23:arm64 zlib1g:arm64)
            arm64=1
            packages+=(python3-dev pybind11-dev python3-onnx python3-pytest)
            # The PyTorch importer's tests make their models with PyTorch and torchvision.
            packages+=(python3-torch python3-torchvision)
            # The ONNX backend test suite (tests/conformance) reads its node and model tests.
            packages+=(libonnx-testdata)
            # The TFLite importer's tests write models with flatbuffers for Python and take
            # reference outputs from LiteRT (npm @litertjs/core) under Node.js.
            packages+=(python3-flatbuffers nodejs)
            command -v npm >/dev/null || packages+=(npm)
            tflite_reference=1
            # libFuzzer harnesses and the sanitizer builds (tests/fuzz, scripts/fuzz.sh,
            # scripts/test.sh --sanitize) use clang's runtimes.
            packages+=(clang-19 libclang-rt-19-dev)
            ;;
        --bench)
            packages+=(python3-torch python3-torchvision python3-onnx python3-numpy nodejs)
            # NodeSource's nodejs package carries npm itself (and conflicts with Debian's).
            command -v npm >/dev/null || packages+=(npm)
            ;;
        *)
            echo "usage: scripts/install_deps.sh [--tests] [--bench]" >&2
            exit 2
            ;;
    esac
done

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    sudo_cmd=()
    [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
    # arm64 packages come from Debian's multiarch archive once dpkg knows the architecture.
    if ((arm64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
        "${sudo_cmd[@]}" dpkg --add-architecture arm64
    fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The TFLite reference runtime, pinned by python/tests/tflite/litert/package-lock.json; installed
# again only when the lock file changed.
if ((tflite_reference)); then
    litert_dir="$(cd "$(dirname "$0")/.." && pwd)/python/tests/tflite/litert"
    stamp="$litert_dir/node_modules/.package-lock.json"
    if [[ ! -f "$stamp" || "$litert_dir/package-lock.json" -nt "$stamp" ]]; then
        npm ci --prefix "$litert_dir" --no-audit --no-fund
    fi
fi
