#!/usr/bin/env bash
# Installs what Switchyard needs on Debian 12, for one purpose — each includes the ones before it:
#
#   scripts/setup.sh          # build and serve: the compiler and the libraries (scripts/run.sh)
#   scripts/setup.sh test     # + the test tools: GoogleTest, clang (libFuzzer), Redis, Chromium,
#                             #   Node.js and the SDKs from npm (scripts/test.sh)
#   scripts/setup.sh bench    # + the benchmarks' tools: nginx, wrk, perf, valgrind, gnuplot
#
# Idempotent: skips what is already present. Run as root (or with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

purpose="${1:-build}"
case "$purpose" in
    build | test | bench) ;;
    *)
        echo "usage: scripts/setup.sh [build|test|bench]" >&2
        exit 2
        ;;
esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(
    build-essential cmake ninja-build pkg-config git ca-certificates curl openssl
    libboost1.81-dev libboost-json1.81-dev libssl-dev libyaml-cpp-dev libfmt-dev
    # The release build's allocator (CMakeLists.txt, SWITCHYARD_JEMALLOC).
    libjemalloc-dev
    # Client-supplied patterns of JSON Schemas run on RE2 (docs/answers.md#output-validation).
    libre2-dev
    # The durable state store (docs/state.md#the-durable-store).
    libsqlite3-dev
)
if [ "$purpose" != build ]; then
    packages+=(
        libgtest-dev libgmock-dev clang-format
        # The fuzz targets (clang-14 with libFuzzer and its sanitizer runtime).
        clang libclang-rt-14-dev
        # prlimit, for the out-of-descriptors tests.
        util-linux procps
        redis-server
        # The dashboard's browser test drives Debian's chromium headless (puppeteer-core never
        # downloads a browser); DejaVu gives its screenshots real glyphs.
        chromium fonts-dejavu-core
    )
fi
if [ "$purpose" = bench ]; then
    packages+=(
        nginx-light wrk
        # The benchmarks' profiles and syscall counts (bench/targets.sh, PROFILE=1).
        linux-perf
        # User-space instructions per request, exact on a noisy VM (bench/instructions.sh).
        valgrind
        # The simulator's evidence plots (docs/evidence/).
        gnuplot-nox
    )
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$purpose" != build ]; then
    # Node.js for the end-to-end tests with the official SDKs: Debian's own if none is present.
    if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
    if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup ($purpose): installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The installed nginx and Redis services are not ours; the benchmark and the tests start their
# own instances on free ports.
if command -v systemctl >/dev/null 2>&1 && [ "$purpose" != build ]; then
    $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
    $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
fi

if [ "$purpose" != build ] &&
    { [ ! -d tests/e2e/node_modules ] || [ tests/e2e/package.json -nt tests/e2e/node_modules ]; }; then
    echo "setup: installing npm packages for tests/e2e"
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
fi
