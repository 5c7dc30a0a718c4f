# Herald — the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
HERALD := .build/debug/herald
HERALD_LOCAL := .build/debug/herald-local
# REDIS_CLUSTER=3 runs make run / make bench on a Redis Cluster of 3 masters + 3 replicas.
STACK_FLAGS := $(if $(REDIS_CLUSTER),--redis-cluster $(REDIS_CLUSTER))

.PHONY: all bootstrap build test run bench fuzz format stack-up stack-down stack-status validate-deploy clean help

all: build

help:
	@echo "make run           set up, start the embedded stack, run Herald's breaking-news story end to end"
	@echo "                   (REDIS_CLUSTER=3: the same story on a Redis Cluster of 3 masters + 3 replicas)"
	@echo "make test          set up, build, start servers, run every test"
	@echo "make bench         release build, benchmarks side by side with the broker ceiling"
	@echo "make format        apply .swift-format to the Swift sources (make test checks it)"
	@echo "make fuzz          run every fuzzer for 10 minutes (FUZZ_SECONDS=N to change)"
	@echo "make stack-up / stack-down / stack-status   the private Redis + broker"

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

# The servers, browser and PyPI tools the tests need are set up beside the build.
test:
	@scripts/bootstrap build
	@scripts/bootstrap tools > .herald/bootstrap-tools.log 2>&1 & tools=$$!; \
	  echo "$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)  (scripts/bootstrap tools beside it: .herald/bootstrap-tools.log)"; \
	  built=0; $(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS) || built=$$?; \
	  if ! wait $$tools; then cat .herald/bootstrap-tools.log >&2; echo "make test: scripts/bootstrap tools failed" >&2; exit 1; fi; \
	  cat .herald/bootstrap-tools.log; exit $$built
	scripts/stack run -- scripts/test-all

run: build
	scripts/stack run $(STACK_FLAGS) -- $(HERALD_LOCAL) demo --keep-running

# The benchmark harness is in the package only with HERALD_BENCH=1 (Package.swift): the bench
# builds it, and the tests build it to test it.
test bench: export HERALD_BENCH := 1

bench: bootstrap
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS)
	scripts/stack run $(STACK_FLAGS) -- .build/release/herald-bench $(BENCH_ARGS)

fuzz: bootstrap
	scripts/fuzz $(FUZZ_SECONDS)

format:
	$(SWIFT) format format --in-place --recursive Sources Tests Fuzz Package.swift

stack-up: bootstrap
	@scripts/stack up
stack-down:
	@scripts/stack down
stack-status:
	@scripts/stack status

clean:
	rm -rf .build .herald/run .herald/test-runs
