#!/usr/bin/env bash
# Fails when a C++ source differs from .clang-format's style (fix with: clang-format -i FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h' 'examples/*.cpp' 'examples/*.h' \
    'bench/*.cpp' 'include/*.h' \
    'python/*.cpp' 'python/*.h' | xargs clang-format --dry-run -Werror
echo "format: ok"
