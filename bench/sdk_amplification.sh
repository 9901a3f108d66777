#!/usr/bin/env bash
# Retry amplification with the official SDKs: upstream calls per request with the openai and
# @anthropic-ai/sdk default retries vs maxRetries: 0, against a provider that answers every call
# with a 429 (retry-after: 1) or a 529, on the default retry settings. Prints a Markdown table.
#
#   bench/sdk_amplification.sh [requests-per-row]        (default 3; about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh bench >/dev/null
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target switchyard switchyard-mock >/dev/null
export SWITCHYARD_BIN="$PWD/build/release/src/switchyard"
export SWITCHYARD_MOCK_BIN="$PWD/build/release/tools/mock/switchyard-mock"
cd tests/e2e
exec node sdk_amplification.mjs "${1:-3}"
