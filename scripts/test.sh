#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: lint; the unit tests (which include the
# concurrency stress tests of shared state and the attempt engine's property test) under
# ThreadSanitizer; then unit, integration and end-to-end tests in the dev build and again with
# ASan + UBSan; the release build; every fuzz target for a short while; and a short soak.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/lint.sh
echo "== tsan: unit tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j"$(nproc)" --target unit_tests
TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/unit_tests --gtest_brief=1
for preset in dev asan; do
    echo "== $preset: build"
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j"$(nproc)"
    echo "== $preset: test"
    ctest --preset "$preset"
done
# The optimised build that scripts/run.sh serves from: it must compile warning-free too.
echo "== release: build"
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target switchyard switchyard-mock
# Short bounded runs; `scripts/fuzz.sh 3600` and `SECONDS_=1800 bench/soak.sh` are the long ones.
echo "== fuzz: every target for ${FUZZ_SECONDS:-20} s"
scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
echo "== soak: ${SOAK_SECONDS:-30} s, ${SOAK_CLIENTS:-80} clients"
SECONDS_="${SOAK_SECONDS:-30}" CLIENTS="${SOAK_CLIENTS:-80}" bench/soak.sh
