#!/usr/bin/env bash
# Installs what Nightshift's tests need and is idempotent (a fast no-op when
# everything is there): OpenSSH's server and client (the sshexec and worker
# integration tests start their own sshd on 127.0.0.1; the worker tests run it
# in a bubblewrap sandbox), strace (the bash oracle), the linters make lint
# runs (staticcheck, deadcode, exhaustive; pinned), python3 with jinja2 and
# node with the HF tokenizers addon (the prompt-count reference,
# internal/vllmref), and the
# Llama 3 / 3.1 tokenizer files for the golden tests (not committed: Meta's
# licence). Uses only Debian's packages, the Go module proxy and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2
# deadcode is golang.org/x/tools/cmd/deadcode at this x/tools version.
DEADCODE_VERSION=v0.52.0
EXHAUSTIVE_VERSION=v0.17.1

# apt_install PKG…: installs Debian packages that are missing (none: a no-op);
# without root it names them and fails. Without a runlevel, so installing
# openssh-server does not start the machine's own sshd (the tests start
# their own on loopback and never touch /etc/ssh's daemon).
apt_install() {
	[ $# -gt 0 ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-test-deps: missing $*; run: sudo apt-get install -y $*" >&2
		exit 1
	fi
	echo "install-test-deps: installing $*"
	apt-get update -qq
	RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

need_apt=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v ssh-keygen >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)
# internal/bashoracle traces real bash in a bubblewrap sandbox with strace
# (the oracle the safety package's ban check is tested against).
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
command -v prlimit >/dev/null 2>&1 || need_apt+=(util-linux)
# The README's `sqlite3 night.db …` runs in cmd/worker's readme_main.txtar.
command -v sqlite3 >/dev/null 2>&1 || need_apt+=(sqlite3)
# lockout's Debian tests: nft for the firewall lockout (copied into the
# target), nsenter and ip for the target's own network namespace.
[ -x /usr/sbin/nft ] || need_apt+=(nftables)
command -v nsenter >/dev/null 2>&1 || need_apt+=(util-linux)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || need_apt+=(iproute2)
# recipes' export: the playbook passes ansible-playbook --syntax-check and is
# applied to a disposable target (ansible-core from Debian's packages).
command -v ansible-playbook >/dev/null 2>&1 || need_apt+=(ansible-core)
apt_install ${need_apt[@]+"${need_apt[@]}"}

gobin="$(go env GOPATH)/bin"
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -q "${STATICCHECK_VERSION#v}"; then
	echo "install-test-deps: installing staticcheck ${STATICCHECK_VERSION}"
	GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}"
fi

# tool_ok BINARY MODULE VERSION: the binary was built from MODULE@VERSION
# (go install records it; these tools have no version flag).
tool_ok() {
	go version -m "$1" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|$)"
}
if ! tool_ok "$gobin/deadcode" golang.org/x/tools "$DEADCODE_VERSION"; then
	echo "install-test-deps: installing deadcode (golang.org/x/tools ${DEADCODE_VERSION})"
	GOFLAGS= go install "golang.org/x/tools/cmd/deadcode@${DEADCODE_VERSION}"
fi
if ! tool_ok "$gobin/exhaustive" github.com/nishanths/exhaustive "$EXHAUSTIVE_VERSION"; then
	echo "install-test-deps: installing exhaustive ${EXHAUSTIVE_VERSION}"
	GOFLAGS= go install "github.com/nishanths/exhaustive/cmd/exhaustive@${EXHAUSTIVE_VERSION}"
fi

# The fleet integration test (cmd/worker) and benchmark (fleet) run a real
# Temporal dev server: the Temporal CLI, built from the Go module proxy
# (about 18 minutes on a shared 2-core machine, so the binary is kept in
# $NIGHTSHIFT_CACHE, default /var/cache/nightshift, as the SCAP root is, and
# restored from there). Its --version says 0.0.0-DEV when built with go
# install, so the module version recorded in the binary is what is checked.
# Newer CLIs carry replace directives that go install refuses.
TEMPORAL_CLI_VERSION=v1.5.1
temporal_cache="${NIGHTSHIFT_CACHE:-/var/cache/nightshift}/temporal-cli-${TEMPORAL_CLI_VERSION}"
temporal_ok() {
	go version -m "$1" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/temporalio/cli[[:space:]]+${TEMPORAL_CLI_VERSION}([[:space:]]|$)"
}
if ! temporal_ok "$gobin/temporal"; then
	if temporal_ok "$temporal_cache"; then
		echo "install-test-deps: restoring the Temporal CLI ${TEMPORAL_CLI_VERSION} from $temporal_cache"
		mkdir -p "$gobin"
		install -m 0755 "$temporal_cache" "$gobin/temporal"
	else
		echo "install-test-deps: building the Temporal CLI ${TEMPORAL_CLI_VERSION} (takes many minutes the first time)"
		GOFLAGS= go install "github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}"
	fi
fi
if ! temporal_ok "$temporal_cache" && mkdir -p "$(dirname "$temporal_cache")" 2>/dev/null; then
	install -m 0755 "$gobin/temporal" "$temporal_cache.tmp" 2>/dev/null && mv "$temporal_cache.tmp" "$temporal_cache" || true
fi

# The independent reference the prompt-count tests check package served
# against (internal/vllmref): scripts/render-chat.py needs python3 with
# jinja2, scripts/count-chat.js needs node and the HF tokenizers addon from
# npm (scripts/package.json, locked by scripts/package-lock.json).
ref_apt=()
command -v python3 >/dev/null 2>&1 || ref_apt+=(python3)
python3 -c 'import jinja2' >/dev/null 2>&1 || ref_apt+=(python3-jinja2)
command -v node >/dev/null 2>&1 || ref_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || ref_apt+=(npm)
apt_install ${ref_apt[@]+"${ref_apt[@]}"}
# npm ci rewrites node_modules/.package-lock.json: older than the lock file
# (or absent) means not installed, or installed from another lock.
if ! [ scripts/node_modules/.package-lock.json -nt scripts/package-lock.json ]; then
	echo "install-test-deps: npm ci --prefix scripts (the HF tokenizers addon)"
	npm ci --prefix scripts --no-audit --no-fund >/dev/null
fi

if [ -x scripts/fetch-tokenizers.sh ]; then
	scripts/fetch-tokenizers.sh
fi

# report: xmllint validates the JUnit output against the committed schema;
# headless Chromium renders the HTML report (installed only when missing).
need_report=()
command -v xmllint >/dev/null 2>&1 || need_report+=(libxml2-utils)
command -v chromium >/dev/null 2>&1 || need_report+=(chromium)
apt_install ${need_report[@]+"${need_report[@]}"}

# The SCAP end-to-end tests (internal/debtarget, worker/scap_e2e_test.go) build
# a Debian 12 root with debootstrap, cached as a zstd tarball by
# scripts/debian-target.sh in /var/cache/nightshift (built on first use).
scap_apt=()
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || scap_apt+=(debootstrap)
command -v zstd >/dev/null 2>&1 || scap_apt+=(zstd)
command -v unshare >/dev/null 2>&1 || scap_apt+=(util-linux)
apt_install ${scap_apt[@]+"${scap_apt[@]}"}
