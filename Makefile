# Nightshift's build and test entry points. `make test` is the test command the
# README gives and .ci/run runs: it installs what the tests need, then runs
# gofmt, go vet (default and hf_native tags), staticcheck and the race-enabled
# tests of every package.

GO          ?= go
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck

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

unit:
	$(GO) test -race -count=1 -timeout 25m ./...

build:
	$(GO) build -o bin/worker ./cmd/worker

demo:
	$(GO) run ./cmd/worker demo

# The figures in docs/benchmarks.md.
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...
