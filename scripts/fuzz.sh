#!/usr/bin/env bash
# fuzz.sh runs each fuzz target (package:Target) for FUZZTIME.
#
# Each package's fuzzing test binary is built once (go test -c -fuzz) and run for each
# of its targets from the package's directory, with the go command's fuzz cache, as
# `go test -fuzz` would: linking a large package's test binary again for every target
# cost more than a third of the fuzzing time.
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
cache=$("$GO" env GOCACHE)
module=$("$GO" list -m)
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT

# binary builds pkg's fuzzing test binary, unless built before, and prints its path.
binary() {
	local bin
	bin="$bins/$(echo "$1" | tr '/.' '__').test"
	[ -x "$bin" ] || "$GO" test -c -fuzz . -o "$bin" "$1" >&2
	echo "$bin"
}

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
