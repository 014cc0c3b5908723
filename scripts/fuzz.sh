#!/usr/bin/env bash
# fuzz.sh runs each fuzz target (package:Target) for FUZZTIME.
#
#   fuzz.sh [--build-only] package:Target...
#
# Each package's fuzzing test binary is built once (go test -c -fuzz) and run for each
# of its targets from the package's directory, with the go command's fuzz cache, as
# `go test -fuzz` would: linking a large package's test binary again for every target
# cost more than a third of the fuzzing time. The binaries go to FUZZ_BINS when it is
# set (and stay there), else to a directory removed at the end; one already there is
# used as it is. With --build-only the script builds the targets' binaries and fuzzes
# nothing: make test builds them so, at the lowest CPU priority, while the tests run.
#
# A target fails when the fuzzer fails, with one exception: Go 1.26's fuzz coordinator
# can report a bare "context deadline exceeded" at the end of -fuzztime when a worker
# is still mid-call on a loaded machine (golang/go#75804, fixed in Go 1.27). That
# failure writes no failing input. When it happens and no new input appeared under
# testdata/fuzz/<Target>, the target's corpus is replayed as a normal test; the run
# counts as passed only if the replay passes, and the script says so.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
build_only=false
if [ "${1:-}" = --build-only ]; then
	build_only=true
	shift
fi
cache=$("$GO" env GOCACHE)
module=$("$GO" list -m)
if [ -n "${FUZZ_BINS:-}" ]; then
	bins=$FUZZ_BINS
	mkdir -p "$bins"
else
	bins=$(mktemp -d)
	trap 'rm -rf "$bins"' EXIT
fi

# binary builds pkg's fuzzing test binary, unless built before, and prints its path.
# It is built under a temporary name and renamed, so a binary under its own name is
# always whole. The build runs as a child the script waits for, so that a TERM (make
# test stopping the early build) stops it too.
child=
trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 143' TERM
binary() {
	local bin
	bin="$bins/$(echo "$1" | tr '/.' '__').test"
	if [ ! -x "$bin" ]; then
		"$GO" test -c -fuzz . -o "$bin.partial" "$1" >&2 &
		child=$!
		wait "$child"
		child=
		mv "$bin.partial" "$bin"
	fi
	echo "$bin"
}

if $build_only; then
	for t in "$@"; do
		binary "${t%%:*}" > /dev/null
	done
	exit 0
fi

for t in "$@"; do
	pkg=${t%%:*} name=${t##*:}
	corpus="$pkg/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null | sort || true)
	echo "fuzz $pkg $name for $FUZZTIME"
	bin=$(binary "$pkg")
	importpath=$module${pkg#.} # the targets' packages are the module's: ., ./store, …
	out=$(mktemp)
	if (cd "$pkg" && "$bin" -test.run '^$' -test.fuzz "^$name\$" -test.fuzztime "$FUZZTIME" \
		-test.fuzzcachedir "$cache/fuzz/$importpath" -test.paniconexit0 -test.timeout 10m) 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
		rm -f "$out"
		continue
	fi
	after=$(ls "$corpus" 2>/dev/null | sort || true)
	if [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$out" && ! grep -q -e 'Failing input written' -e '^panic:' "$out"; then
		rm -f "$out"
		echo "fuzz: $name stopped with Go's fuzz-coordinator deadline race (golang/go#75804) and wrote no failing input; replaying its corpus"
		(cd "$pkg" && "$bin" -test.run "^$name\$" -test.paniconexit0 -test.timeout 10m)
		continue
	fi
	rm -f "$out"
	echo "fuzz: $name failed" >&2
	exit 1
done
