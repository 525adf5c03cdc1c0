#!/usr/bin/env bash
# One command to run a night on a fleet against the Temporal dev server on
# this machine: starts `temporal server start-dev --headless` (in memory, on
# 127.0.0.1:7233) unless one answers there, one `worker fleet serve` for the
# zone "default", then `worker fleet start --wait` with the arguments given,
# and stops what it started when the night ends.
#
#   NIGHTSHIFT_BASE_URL=http://gpu1:8000/v1 scripts/fleet-dev.sh \
#       --rules rules/ --inventory hosts.yaml --html night.html
#
# The model server is NIGHTSHIFT_BASE_URL (default http://localhost:8000/v1;
# `go run ./cmd/worker simulate-server` serves a simulated one). Extra flags
# for the serve process (keys, known_hosts) go in NIGHTSHIFT_SERVE_FLAGS.
# Needs the Temporal CLI (scripts/install-test-deps.sh installs it).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
base_url="${NIGHTSHIFT_BASE_URL:-http://localhost:8000/v1}"
temporal="$(command -v temporal || echo "$(go env GOPATH)/bin/temporal")"
[ -x "$temporal" ] || { echo "fleet-dev: the Temporal CLI is missing; run scripts/install-test-deps.sh" >&2; exit 2; }
(cd "$repo" && go build -o "${TMPDIR:-/tmp}/nightshift-worker" ./cmd/worker)
worker="${TMPDIR:-/tmp}/nightshift-worker"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
if ! (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null; then
	"$temporal" server start-dev --headless --ip 127.0.0.1 --log-level error &
	pids+=($!)
	for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null && break; sleep 0.2; done
fi
# shellcheck disable=SC2086
"$worker" fleet serve --temporal 127.0.0.1:7233 --zone default --base-url "$base_url" ${NIGHTSHIFT_SERVE_FLAGS:-} &
pids+=($!)
"$worker" fleet start --temporal 127.0.0.1:7233 --base-url "$base_url" --wait "$@"
