# Meridian: `make run` starts the catalog on its embedded SQLite store; `make install`
# puts the `meridian` binary on the PATH; `make test` runs every check CI runs.
GO       ?= go
PREFIX   ?= /usr/local
FUZZTIME ?= 5s
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)

# Fuzz targets as package:Target, each fuzzed FUZZTIME by make test (make fuzz FUZZTIME=5m
# fuzzes each longer).
FUZZ_TARGETS := .:FuzzSplitFQN .:FuzzParseEntityLink ./store:FuzzApplyPatch ./rest/elastic:FuzzParseQueryFilter ./rest/elastic:FuzzParseSearchQuery ./tools:FuzzToolCall ./rest:FuzzRequestsNeverFailInternally ./auth:FuzzVerifyNeverPanics
FUZZ_TARGETS += ./queryrunner:FuzzConfigBodies ./queryrunner/sqlcheck:FuzzCheck ./rest:FuzzQueryRunnerConfigRequests ./rest:FuzzQueryRunnerRunRequests
FUZZ_TARGETS += ./collab/events:FuzzMatches ./collab/events:FuzzParseNetworks
FUZZ_TARGETS += .:FuzzParseFieldPath ./collab/tasks:FuzzDecodeThreadCursor
FUZZ_TARGETS += ./collab/audit:FuzzRemoteAddr ./collab/audit:FuzzParseCursor ./collab/executions:FuzzParseCursor ./collab/activity:FuzzParseCursor ./rest:FuzzTopLevelStrings ./rest:FuzzBodiesDecodeAsEncodingJSONWould ./rest:FuzzActivitySettings ./rest:FuzzCollabRequestsNeverFailInternally
FUZZ_TARGETS += ./billing:FuzzParsePrices ./rest:FuzzBillingRequests
FUZZ_TARGETS += ./graph:FuzzQuery ./graph/remote:FuzzRewriting .:FuzzParseShaclShapes
FUZZ_TARGETS += ./vectors:FuzzHashingEmbedsAsTheFirstVersionDid ./schema:FuzzQuickAgreesWithTheLibrary ./schema:FuzzCodedPatternsMatchAsTheirExpressions

.PHONY: run build install test lint deps unit e2e-postgres fuzz bench clean

# run builds the binary, then replaces the recipe's shell with it (exec): the server is
# make's own child, so stopping make (Ctrl-C, or kill with make's PID) stops the server.
run: build
	exec ./bin/meridian serve

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/meridian ./cmd/meridian

# install copies the binary to $(PREFIX)/bin (/usr/local/bin; as a user without root:
# make install PREFIX=~/.local, with ~/.local/bin on the PATH).
install: build
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 bin/meridian "$(DESTDIR)$(PREFIX)/bin/meridian"

# test lints while deps installs and starts the components (one compiles, the other
# mostly waits on downloads and start-ups), then runs the tests.
test:
	$(MAKE) --no-print-directory -j2 lint deps
	$(MAKE) --no-print-directory unit e2e-postgres fuzz

lint:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './node_modules/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# deps makes the real components the tests use available: the local PostgreSQL (and the
# local MariaDB that Query Runner's tests target) is
# started when it is down, pgvector is built and installed when it is missing, and the
# npm tools (the real MCP clients, TypeScript SDK and Inspector CLI, and the Redocly
# OpenAPI linter) are installed with npm ci. A throwaway Virtuoso 7 is installed and
# started on loopback for the remote SPARQL tests (scripts/start-virtuoso.sh).
deps:
	./scripts/start-postgres.sh
	./scripts/start-mariadb.sh
	./scripts/install-pgvector.sh
	./scripts/install-node-tools.sh
	./scripts/start-virtuoso.sh

unit: deps
	$(GO) test -count=1 ./...

# The black-box suite again, on PostgreSQL (one throwaway database per server).
e2e-postgres: deps
	MERIDIAN_E2E_DRIVER=postgres $(GO) test -count=1 ./e2e/

fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh $(FUZZ_TARGETS)

bench:
	$(GO) run ./bench

clean:
	rm -rf bin
