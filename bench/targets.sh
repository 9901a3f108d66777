#!/usr/bin/env bash
# The figures Switchyard's speed targets are judged by, in one run against the same binaries:
# JSON requests at 1 and 64 connections, then SSE streams in both shapes (events written one by
# one, and the whole stream in one write) at 16 connections, each with its syscall counts
# (PROFILE=1). Targets, as ratios to nginx: CPU per JSON request <= 1.2x at 1 and 64 connections,
# throughput >= 0.95x at 64, CPU per stream <= 1.3x for both shapes, 0 frames lost.
# The knobs of run.sh apply (REPS, DURATION, ...); STREAM_CONNS sets the streams' connections.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "$0")" && pwd)"
export REPS="${REPS:-3}" DURATION="${DURATION:-5}" PROFILE="${PROFILE:-1}"
echo "== JSON requests"
CONNS="${CONNS:-1 64}" TARGETS="direct nginx switchyard" "$BENCH_DIR/run.sh"
for shape in events one_write; do
    echo "== SSE streams, shape $shape"
    CONNS="${STREAM_CONNS:-16}" SHAPE="$shape" TARGETS="direct nginx switchyard" \
        "$BENCH_DIR/stream.sh"
done
