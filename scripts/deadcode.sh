#!/usr/bin/env bash
# Fails when the module has a function no program or test reaches
# (golang.org/x/tools/cmd/deadcode -test, installed by
# scripts/install-test-deps.sh) that scripts/deadcode.allow does not list,
# or a function of a public (non-internal) package that no program reaches
# when tests are left out (deadcode without -test: an API only tests use)
# that scripts/deadcode-lib.allow does not list; and when an allowlist
# lists a function that is no longer reported (an entry outlives its
# reason). Allowlist lines: the function as this script prints it (package
# path inside the module, then the name: safety.Entries,
# nightshift.Exec.CutBytes), whitespace, and the reason it is kept; '#'
# starts a comment.
set -euo pipefail
cd "$(dirname "$0")/.."

deadcode="${DEADCODE:-$(go env GOPATH)/bin/deadcode}"
module="$(go list -m)"

format='{{range .Funcs}}{{$.Path}}.{{.Name}} {{.Position}}{{"\n"}}{{end}}'
status=0

# check ALLOWLIST WHAT: compares deadcode's report on stdin with ALLOWLIST.
check() {
	local allow="$1" what="$2" found allowed reported dead stale
	found="$(sed -e "s#^${module}/##" -e "s#^${module}\.#nightshift.#")"
	allowed="$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$allow" | awk '{print $1}' | sort -u)"
	reported="$(printf '%s\n' "$found" | awk 'NF {print $1}' | sort -u)"
	dead="$(printf '%s\n' "$found" | awk -v allowed="$allowed" 'BEGIN {n = split(allowed, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1} NF && !($1 in ok)')"
	if [ -n "$dead" ]; then
		echo "deadcode: $what (remove them, use them, or list them with a reason in $allow):"
		printf '%s\n' "$dead" | awk '{print "  " $2 " " $1}'
		status=1
	fi
	stale="$(comm -23 <(printf '%s\n' "$allowed") <(printf '%s\n' "$reported") | sed '/^$/d')"
	if [ -n "$stale" ]; then
		echo "deadcode: $allow lists functions that are reached now (remove the lines):"
		printf '%s\n' "$stale" | sed 's/^/  /'
		status=1
	fi
}

with_tests="$("$deadcode" -test -f="$format" ./...)"
without_tests="$("$deadcode" -f="$format" ./...)"
check scripts/deadcode.allow "unreachable functions" <<<"$with_tests"
# Without tests, only the public packages: internal packages that exist for
# tests (debtarget, bashoracle, ssgfix, …) are reached by tests alone.
check scripts/deadcode-lib.allow "functions of public packages only tests reach" <<<"$(printf '%s\n' "$without_tests" | grep -v "^${module}/internal/" || true)"
exit $status
