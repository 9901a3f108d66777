#!/usr/bin/env bash
# Project lint: clang-format is clean; time and randomness come only from the places that own
# them (core/clock.h; the composition root seeds the per-worker random sources); and every
# reference to a file or heading of the repository (Markdown links, `docs/...` in code) exists.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
mapfile -t files < <(git ls-files 'src/*.h' 'src/*.cc' 'src/*.cpp' 'tools/*.h' 'tools/*.cc' \
                                   'tests/*.h' 'tests/*.cc')
if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/switchyard-format.log; then
    head -n 40 /tmp/switchyard-format.log
    echo "lint: clang-format differences (run: clang-format -i <files>)"
    status=1
fi

banned=$(git grep -nE 'steady_clock::now\(\)|system_clock::now\(\)|std::random_device' -- src \
             ':!src/core/clock.h' ':!src/server/server.cc' ':!src/main.cpp' || true)
if [ -n "$banned" ]; then
    echo "$banned"
    echo "lint: read time through core::Clock and randomness through the worker's random source"
    status=1
fi
mapfile -t referring < <(git ls-files '*.md' 'src/*' 'tools/*' 'tests/*' 'scripts/*' 'bench/*' \
                                       'deploy/*' 'examples/*' 'CMakeLists.txt' 'cmake/*')
if ! node scripts/check_links.mjs "${referring[@]}"; then
    status=1
fi
[ "$status" -eq 0 ] && echo "lint: ok"
exit "$status"
