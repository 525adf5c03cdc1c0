# Nightshift's build and test entry points. `make test` is the test command the
# README gives and .ci/run runs: it installs what the tests need, then runs
# gofmt, go vet (default and hf_native tags), staticcheck, go mod tidy -diff,
# the exhaustive enum-switch check, deadcode (scripts/deadcode.sh, with the
# allowlists scripts/deadcode.allow and scripts/deadcode-lib.allow) and the
# tests of every package, race-enabled but for cmd/worker's end-to-end ones
# (E2E below), then the FULL tests again without -race (below).

GO          ?= go
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
EXHAUSTIVE  := $(GOBIN)/exhaustive

.PHONY: test deps lint unit unit-race unit-e2e unit-full bench build demo

# The linters, then the race-enabled tests, then the E2E tests, one after
# another: on the shared 2-core machine, running them at once (make -j3) starved
# Temporal's workflow tasks past the SDK's 1 s deadlock detector and
# cmd/worker's tests past their timeout (docs/benchmarks.md, "make test and
# .ci/run"), and saved no CPU.
test: deps
	@$(MAKE) --no-print-directory lint unit

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

# E2E are cmd/worker's end-to-end tests on the Debian target (the SCAP
# nights as root and through sudo, the recipes' Ansible export applied to
# a fresh target). Their time goes to OpenSCAP, bash and sshd on the
# target, where -race sees nothing, while it made them several times slower
# (docs/benchmarks.md; the Go code they drive runs under -race in its
# packages' own tests):
# they run once without -race, all three at once (t.Parallel, a target
# each; -parallel 3), after the race-enabled run of every other test
# (unit-race). -skip and -run take the same list, so every test runs
# exactly once; TestMakeTestRunsEveryTest checks that the list names only
# tests of cmd/worker.
E2E := ^(TestSCAPDatastreamEndToEnd|TestSCAPDatastreamSudoLogin|TestSCAPExportAppliedByAnsible)$$

# FULL are pure-compute parity tests over big input sets (served/bpe's
# golden IDs, memory's long histories and random pairings): under -race they
# check a deterministic sample (testenv.Race), and unit-full runs them again
# without -race on the whole set, at a fraction of the race detector's CPU
# (docs/benchmarks.md). TestMakeTestRunsEveryTest checks that each name is a
# test of FULLPKGS that reads testenv.Race.
FULL     := ^(TestGolden|TestLongHistories|TestPairingProperty)$$
FULLPKGS := ./served/bpe ./memory

unit: unit-race unit-e2e unit-full

unit-race:
	$(GO) test -race -count=1 -timeout 30m -skip '$(E2E)' ./...

unit-e2e:
	$(GO) test -count=1 -timeout 30m -parallel 3 -run '$(E2E)' ./cmd/worker

unit-full:
	$(GO) test -count=1 -timeout 30m -run '$(FULL)' $(FULLPKGS)

build:
	$(GO) build -o bin/worker ./cmd/worker

demo:
	$(GO) run ./cmd/worker demo

# The commands docs/benchmarks.md lists, with their timeouts (scripts/bench.sh
# reads them from there; BENCH=REGEXP runs those matching it).
bench: deps
	BENCH='$(BENCH)' ./scripts/bench.sh
