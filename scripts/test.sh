#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: lint, then unit, integration and end-to-end
# tests in the dev build and again with ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/lint.sh
for preset in dev asan; do
    echo "== $preset: build"
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j"$(nproc)"
    echo "== $preset: test"
    ctest --preset "$preset"
done
