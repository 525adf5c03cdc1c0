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
# NIGHTSHIFT_TEMPORAL is the dev server's address (default 127.0.0.1:7233).
# Needs the Temporal CLI (scripts/install-test-deps.sh installs it).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
base_url="${NIGHTSHIFT_BASE_URL:-http://localhost:8000/v1}"
addr="${NIGHTSHIFT_TEMPORAL:-127.0.0.1:7233}"
port="${addr##*:}"
temporal="$(command -v temporal || echo "$(go env GOPATH)/bin/temporal")"
[ -x "$temporal" ] || { echo "fleet-dev: the Temporal CLI is missing; run scripts/install-test-deps.sh" >&2; exit 2; }
(cd "$repo" && go build -o "${TMPDIR:-/tmp}/nightshift-worker" ./cmd/worker)
worker="${TMPDIR:-/tmp}/nightshift-worker"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
if ! (exec 3<>"/dev/tcp/${addr%:*}/$port") 2>/dev/null; then
	"$temporal" server start-dev --headless --ip "${addr%:*}" --port "$port" --log-level error &
	pids+=($!)
	for _ in $(seq 100); do (exec 3<>"/dev/tcp/${addr%:*}/$port") 2>/dev/null && break; sleep 0.2; done
fi
# shellcheck disable=SC2086
"$worker" fleet serve --temporal "$addr" --zone default --base-url "$base_url" ${NIGHTSHIFT_SERVE_FLAGS:-} &
pids+=($!)
"$worker" fleet start --temporal "$addr" --base-url "$base_url" --wait "$@"
