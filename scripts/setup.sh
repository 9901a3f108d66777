#!/usr/bin/env bash
# Installs everything Switchyard needs to build, run, test and benchmark on Debian 12.
# Idempotent: skips what is already present. Run as root (or with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(
    build-essential cmake ninja-build pkg-config git ca-certificates curl openssl
    libboost1.81-dev libboost-json1.81-dev libssl-dev libyaml-cpp-dev libfmt-dev
    libgtest-dev libgmock-dev libbenchmark-dev clang-format
    clang libclang-rt-14-dev
    # The release build's allocator (CMakeLists.txt, SWITCHYARD_JEMALLOC).
    libjemalloc-dev
    nginx-light wrk util-linux procps
    # The benchmarks' profiles and syscall counts (bench/targets.sh, PROFILE=1).
    linux-perf
    # User-space instructions per request, exact on a noisy VM (bench/instructions.sh).
    valgrind
    redis-server
    # The dashboard's browser test drives Debian's chromium headless (puppeteer-core never
    # downloads a browser); DejaVu gives its screenshots real glyphs.
    chromium fonts-dejavu-core
    # The simulator's evidence plots (docs/evidence/).
    gnuplot-nox
    # The regular expressions of JSON Schema validation (docs/answers.md#output-validation).
    libre2-dev
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js for the end-to-end tests with the official SDKs: Debian's own if none is present.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The installed nginx and Redis services are not ours; the benchmark and the tests start their
# own instances on free ports.
if command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
    $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
fi

if [ ! -d tests/e2e/node_modules ] || [ tests/e2e/package.json -nt tests/e2e/node_modules ]; then
    echo "setup: installing npm packages for tests/e2e"
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
fi
