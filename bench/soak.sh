#!/usr/bin/env bash
# Soak test: the mock's fault catalogue mixed with healthy traffic at many concurrent clients on
# both APIs, streaming and not, for a bounded time (bench/soak.mjs). Builds the release binaries.
#
#   bench/soak.sh                         # 60 s, 120 clients
#   SECONDS_=1800 CLIENTS=120 bench/soak.sh   # 30 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test >/dev/null
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target switchyard switchyard-mock >/dev/null
export SWITCHYARD_BIN="$PWD/build/release/src/switchyard"
export SWITCHYARD_MOCK_BIN="$PWD/build/release/tools/mock/switchyard-mock"
exec node bench/soak.mjs --seconds "${SECONDS_:-60}" --clients "${CLIENTS:-120}" "$@"
