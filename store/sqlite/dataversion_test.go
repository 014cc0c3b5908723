package sqlite

import (
	"context"
	"testing"

	"github.com/meridian-catalog/meridian/store"
)

// TestDataVersionChangesOnEveryCommit checks the read cache's signal: a commit by this
// DB's writer, or by another DB on the same file (another process), changes
// DataVersion; a read does not.
func TestDataVersionChangesOnEveryCommit(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t)
	version := func() int64 {
		t.Helper()
		_, v, err := a.dataVersion.number(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v0 := version()
	rtx, err := a.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rtx.Setting(ctx, "k") // ENotFound: nothing is stored yet
	rtx.Rollback()
	if v := version(); v != v0 {
		t.Fatalf("a read changed data_version: %d to %d", v0, v)
	}
	putSetting(t, a, "1")
	v1 := version()
	if v1 == v0 {
		t.Fatal("a commit by this DB's writer did not change data_version")
	}
	putSetting(t, b, "2")
	if v := version(); v == v1 {
		t.Fatal("a commit by another DB on the same file did not change data_version")
	}
	var _ store.DataVersioner = a
}

// TestDataVersionReplacesAFailedConnection checks that a data-version connection that
// fails is replaced, and that the versions it answered never equal the new
// connection's (their counters are not comparable).
func TestDataVersionReplacesAFailedConnection(t *testing.T) {
	ctx := context.Background()
	a, _ := openPair(t)
	before, err := a.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.dataVersion.conn.Close() // as if the driver had lost it
	if _, err := a.DataVersion(ctx); err == nil {
		t.Fatal("a closed connection answered")
	}
	after, err := a.DataVersion(ctx)
	if err != nil {
		t.Fatalf("the connection was not replaced: %v", err)
	}
	if after == before {
		t.Fatalf("the new connection answers %s, as the failed one did", after)
	}
}
