# Nightshift's build and test entry points. `make test` is the test command the
# README gives and .ci/run runs: it installs what the tests need, then runs
# gofmt, go vet (default and hf_native tags), staticcheck, go mod tidy -diff,
# the exhaustive enum-switch check, deadcode (scripts/deadcode.sh, with the
# allowlists scripts/deadcode.allow and scripts/deadcode-lib.allow) and the
# race-enabled tests of every package.

GO          ?= go
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
EXHAUSTIVE  := $(GOBIN)/exhaustive

.PHONY: test deps lint unit bench build demo

test: deps lint unit

deps:
	./scripts/install-test-deps.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags hf_native ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff
# exhaustive -d: a default case counts as handling the values it does not list.
	$(EXHAUSTIVE) -d ./...
	DEADCODE=$(GOBIN)/deadcode ./scripts/deadcode.sh

# cmd/worker's end-to-end tests on the Debian target (the SCAP nights as
# root and through sudo, the recipes' Ansible export applied to a fresh
# target) run one after another and take longer than 25 minutes under
# -race on a 2-core machine: the package's bound is 60 minutes.
unit:
	$(GO) test -race -count=1 -timeout 60m ./...

build:
	$(GO) build -o bin/worker ./cmd/worker

demo:
	$(GO) run ./cmd/worker demo

# The commands docs/benchmarks.md lists, with their timeouts (scripts/bench.sh
# reads them from there; BENCH=REGEXP runs those matching it).
bench: deps
	BENCH='$(BENCH)' ./scripts/bench.sh
