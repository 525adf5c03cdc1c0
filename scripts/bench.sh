#!/usr/bin/env bash
# Runs the benchmark commands docs/benchmarks.md lists in its section
# "Running them: `make bench`" (the indented block there, one command a
# line), one at a time, in that order, from the module root; each carries
# its own -timeout. BENCH=REGEXP runs only the commands matching REGEXP;
# --list prints the commands instead of running them. Exits 1 if any
# command failed (after running the rest).
set -euo pipefail
cd "$(dirname "$0")/.."

cmds="$(awk '/^## Running them/ {on = 1; next} on && /^## / {exit} on && /^    [^ ]/ {sub(/^    /, ""); print}' docs/benchmarks.md)"
if [ -z "$cmds" ]; then
	echo "bench: docs/benchmarks.md has no commands under \"## Running them\"" >&2
	exit 2
fi
if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "$cmds"
	exit 0
fi
status=0
while IFS= read -r c; do
	if [ -n "${BENCH:-}" ] && ! [[ "$c" =~ $BENCH ]]; then
		continue
	fi
	echo "+ $c"
	bash -c "$c" </dev/null || { echo "bench: failed: $c" >&2; status=1; }
done <<<"$cmds"
exit "$status"
