#!/usr/bin/env bash
# SSE stream benchmark: frames forwarded per CPU-ms, added time to first byte and frames lost
# (must be 0) through nginx vs Switchyard. The same harness as run.sh in its stream mode; the
# same knobs (REPS, DURATION, CONNS, ...). See bench/README.md.
MODE=stream exec "$(dirname "$0")/run.sh" "$@"
