package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
)

func TestCreatesShareTheRowsFoundLatelyButNotAbsences(t *testing.T) {
	ctx := context.Background()
	schema := Row{ID: "s1", Kind: "databaseSchema", FQN: "svc.db.sch", Version: 1, Doc: []byte(`{"name":"sch"}`)}
	clock := time.Unix(1000, 0)
	recent := newRecentRows(func() time.Time { return clock })
	create := func() *countingTx { // one create, in its own snapshot
		t.Helper()
		snap := &countingTx{rows: map[string]Row{schema.FQN: schema}}
		rs := &readSet{Tx: snap, shared: recent}
		if r, err := rs.GetByFQN(ctx, "databaseSchema", schema.FQN); err != nil || r.ID != "s1" {
			t.Fatalf("schema %v, %v", r, err)
		}
		if _, err := rs.GetByFQN(ctx, "table", "svc.db.sch.t"); meridian.ErrorCode(err) != meridian.ENotFound {
			t.Fatalf("new table: %v, want ENotFound", err)
		}
		// A shared row is still replayed: it is in the set's own rows.
		if _, ok := rs.rows[RowKey{Kind: "databaseSchema", FQN: schema.FQN}]; !ok {
			t.Fatal("the shared row is not in the read set")
		}
		return snap
	}
	for i, c := range []struct {
		name  string
		after time.Duration // since the previous create
		reads int
	}{
		{"the first create reads the schema and its table", 0, 2},
		{"the next reads only its table", 10 * time.Millisecond, 1},
		{"another, just before the row expires", recentRowsTTL - 20*time.Millisecond, 1},
		{"a create a second after the row was read reads it again", 20 * time.Millisecond, 2},
	} {
		clock = clock.Add(c.after)
		if got := create().reads; got != c.reads {
			t.Errorf("%d, %s: %d reads, want %d", i, c.name, got, c.reads)
		}
	}
}

func TestRecentRowsAreBounded(t *testing.T) {
	clock := time.Unix(1000, 0)
	recent := newRecentRows(func() time.Time { return clock })
	big := Row{ID: "b", Doc: []byte(`"` + strings.Repeat("x", recentRowsMaxDoc) + `"`)}
	recent.put(RowKey{Kind: "table", ID: "b"}, big)
	if _, ok := recent.get(RowKey{Kind: "table", ID: "b"}); ok {
		t.Error("a document over the size bound was kept")
	}
	for i := range 2 * recentRowsMax {
		recent.put(RowKey{Kind: "tag", FQN: fmt.Sprintf("T.tag%d", i)}, Row{ID: "x"})
		if n := len(recent.rows); n > recentRowsMax {
			t.Fatalf("%d rows kept, want at most %d", n, recentRowsMax)
		}
	}
}
