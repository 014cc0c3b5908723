# Meridian: `make run` starts the catalog on its embedded SQLite store; `make test` runs
# every check CI runs.
GO       ?= go
FUZZTIME ?= 10s
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)

# Fuzz targets as package:Target.
FUZZ_TARGETS := .:FuzzSplitFQN .:FuzzParseEntityLink ./store:FuzzApplyPatch ./auth:FuzzVerifyNeverPanics

.PHONY: run build test lint unit fuzz bench clean

run:
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/meridian serve

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/meridian ./cmd/meridian

test: lint unit fuzz

lint:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './node_modules/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

bench:
	$(GO) run ./bench

clean:
	rm -rf bin
