# Nightshift's build and test entry points. `make test` is the test command the
# README gives and .ci/run runs: it installs what the tests need, then runs
# gofmt, go vet (default and hf_native tags), staticcheck, go mod tidy -diff,
# the exhaustive enum-switch check, deadcode (scripts/deadcode.sh, with the
# allowlists scripts/deadcode.allow and scripts/deadcode-lib.allow) and the
# tests of every package, race-enabled but for the NORACE ones (below),
# then the FULL tests again without -race (below).

GO          ?= go
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
EXHAUSTIVE  := $(GOBIN)/exhaustive

.PHONY: test deps lint unit unit-race unit-norace unit-full bench build demo

# The linters, then the race-enabled tests, then the NORACE tests, one after
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
	$(GO) vet -tags hf_native $(HFNATIVEPKGS)
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff
# exhaustive -d: a default case counts as handling the values it does not list.
	$(EXHAUSTIVE) -d ./...
	DEADCODE=$(GOBIN)/deadcode ./scripts/deadcode.sh

# HFNATIVEPKGS are the packages with hf_native files (only served: its
# native backend, whose API no other package uses), so vetting them with the
# tag is the same check as vetting ./... with it, without type-checking the
# whole module a second time. TestMakeVetsHFNative keeps the list whole.
HFNATIVEPKGS := ./served

# NORACE.<dir> are the tests of package ./<dir> that run once without -race
# (unit-norace), after the race-enabled run of every other test; NORACEPKGS
# are those packages, run at once (two test binaries at a time, -parallel 3
# inside one). A test is listed when it measured markedly cheaper without
# -race (CPU-s of all it starts, targets included: docs/benchmarks.md), its
# time on a real target (OpenSSH, bash, OpenSCAP on a Debian root) where
# -race sees nothing while the race-built Go side (x/crypto/ssh, the
# tokenizer's counts) made it dearer, and when a race-enabled test still
# drives the Go concurrency it reaches (named below); a test that is the
# only race coverage of some goroutine code stays.
# cmd/worker:
# - the end-to-end tests on the Debian target (the SCAP nights as root and
#   through sudo, the recipes' Ansible export applied to a fresh target):
#   their time goes to OpenSCAP, bash and sshd on the target;
# - TestScripts: the scripts check the CLI's flags, exit codes and output
#   through ~280 re-executions of the test binary, where a race-built worker
#   start costs 4.1-4.7 CPU-s against 0.58 s without -race.
#   The Go code they drive runs race-enabled in its packages' own tests, and
#   cmd/worker's own concurrent paths in its in-process tests (run(ctx, args,
#   ...)): fleet serve and start (TestFleetIntegration), run over several
#   hosts (TestRunResumeHistory), progress and metrics (TestRunProgressLines,
#   TestRunMetricsAddr), demo (TestDemo), simulate-server
#   (TestSimulateServerInProcess).
NORACE.cmd/worker := TestSCAPDatastreamEndToEnd|TestSCAPDatastreamSudoLogin|TestSCAPExportAppliedByAnsible|TestScripts
# (lockout's Debian-target tests were measured for this list and left out:
# their CPU is the same with and without -race, e.g. TestLockoutsOnDebian
# 97.5 and 98.0 CPU-s: docs/benchmarks.md, speed26.)
# worker: TestSCAPStubbornStaysInsideTheWindow, 25 attempts each judged by
#   OpenSCAP in the Debian root (86.6 CPU-s under -race, 47.5 without); the
#   same attempt loop and memory under the same stubborn policy run
#   race-enabled in TestStubbornStaysInsideTheWindow (a real sshd on
#   loopback) and, concurrently, TestConcurrentFixOnOneWorker.
NORACE.worker := TestSCAPStubbornStaysInsideTheWindow
NORACEPKGS := cmd/worker worker
# NORACE is every NORACE.<dir> list in one pattern: -skip (unit-race, every
# package) and -run (unit-norace, NORACEPKGS) take the same one, so every
# test runs exactly once; TestMakeTestRunsEveryTest checks that each name is
# a test of the package whose list gives it and that the pattern matches no
# test of a package outside NORACEPKGS (it would run nowhere).
# docs/benchmarks.md has the times.
empty :=
space := $(empty) $(empty)
NORACE = ^($(subst $(space),|,$(strip $(foreach d,$(NORACEPKGS),$(NORACE.$(d))))))$$

# RACEPKGS is every package of the module (go list ./...), the longest under
# -race first (HEAVY, longest first by the per-package times in
# docs/benchmarks.md, cmd/worker without its NORACE tests): go test starts
# the test binaries in the order given, two at a time on two cores, so the
# long poles start first and the short packages fill the end, instead of a
# long one running alone there (sandbox and lockout, late in alphabetical
# order). TestMakeRacePackages checks that every package runs once.
MODULE   := github.com/nightshift-dev/nightshift
HEAVY    := sandbox cmd/worker lockout worker fleet memory served/bpe internal/debtarget batch safety
RACEPKGS  = $(addprefix $(MODULE)/,$(HEAVY)) $(filter-out $(addprefix $(MODULE)/,$(HEAVY)),$(shell $(GO) list ./...))

# FULL are pure-compute parity tests over big input sets (served/bpe's
# golden IDs, memory's long histories and random pairings, worker's 25, 50
# and 100 stubborn attempts whose every prompt is counted twice): under
# -race they check a deterministic sample (testenv.Race; worker's: the 50
# attempts), and unit-full runs them again without -race on the whole set,
# at a fraction of the race detector's CPU (docs/benchmarks.md).
# TestMakeFullReadsRace checks that each name is a test of FULLPKGS that
# reads testenv.Race.
FULL     := ^(TestGolden|TestLongHistories|TestPairingProperty|TestStubbornStaysInsideTheWindow)$$
FULLPKGS := ./served/bpe ./memory ./worker

unit: unit-race unit-norace unit-full

unit-race:
	$(GO) test -race -count=1 -timeout 30m -skip '$(NORACE)' $(RACEPKGS)

unit-norace:
	$(GO) test -count=1 -timeout 30m -parallel 3 -run '$(NORACE)' $(addprefix ./,$(NORACEPKGS))

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
