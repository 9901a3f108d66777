#!/usr/bin/env bash
# Sets everything up, builds, and runs Switchyard on its embedded default config
# (examples/quickstart.yaml): the gateway on 127.0.0.1:4000 in front of the bundled mock provider
# on 127.0.0.1:4010, so it works offline and without API keys. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target switchyard switchyard-mock

build/release/tools/mock/switchyard-mock --listen 127.0.0.1:4010 &
mock=$!
trap 'kill "$mock" 2>/dev/null || true' EXIT INT TERM
build/release/src/switchyard serve
