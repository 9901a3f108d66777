#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: lint; the unit tests (which include the
# concurrency stress tests of shared state and the attempt engine's property test) under
# ThreadSanitizer; every unit, integration and end-to-end test (real sockets, the official SDKs, a
# real redis-server, headless Chromium) under ASan + UBSan; the release build, and against it the
# tests a sanitizer cannot run (out of file descriptors); every fuzz target for a short while; and
# a short soak. Prints a table of its phases and their times at the end, failed or not.
#
# Each configuration is built once and runs everything it can: a plain debug build would only run
# again what the ASan + UBSan build runs, finding less.
set -euo pipefail
cd "$(dirname "$0")/.."

phases=()
phase_started=$SECONDS
current=""
finish_phase() {
    [ -n "$current" ] && phases+=("$(printf '%-28s %4d s' "$current" $((SECONDS - phase_started)))")
    current=""
}
phase() {
    finish_phase
    current="$1"
    phase_started=$SECONDS
    echo "== $current"
}
report() {
    local status=$?
    finish_phase
    echo
    echo "phase                          time"
    printf '%s\n' "${phases[@]}"
    printf '%-28s %4d s  (%s)\n' "total" "$SECONDS" "$([ $status -eq 0 ] && echo passed || echo FAILED)"
}
trap report EXIT

phase "setup"
scripts/setup.sh test
phase "lint"
scripts/lint.sh

phase "tsan: build unit tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j"$(nproc)" --target unit_tests
phase "tsan: unit tests"
TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/unit_tests --gtest_brief=1

phase "asan: build"
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)"
phase "asan: all tests"
ctest --preset asan

# The optimised build that scripts/run.sh serves from: it must compile warning-free too.
phase "release: build"
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target switchyard switchyard-mock
phase "release: descriptor tests"
# A sanitizer's runtime needs descriptors of its own: running out of them is tested here.
SWITCHYARD_BIN="$PWD/build/release/src/switchyard" \
    SWITCHYARD_MOCK_BIN="$PWD/build/release/tools/mock/switchyard-mock" \
    node --test --test-name-pattern="out of file descriptors" tests/integration/hardening.test.mjs

# Short bounded runs; `scripts/fuzz.sh 3600` and `SECONDS_=1800 bench/soak.sh` are the long ones.
phase "fuzz: ${FUZZ_SECONDS:-20} s per target"
scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
phase "soak: ${SOAK_SECONDS:-30} s"
SECONDS_="${SOAK_SECONDS:-30}" CLIENTS="${SOAK_CLIENTS:-80}" bench/soak.sh
finish_phase
