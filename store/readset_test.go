package store

import (
	"context"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// countingTx answers row reads from rows (absent keys are ENotFound) and counts them.
type countingTx struct {
	Tx
	rows  map[string]Row // by FQN
	reads int
}

func (t *countingTx) GetByFQN(_ context.Context, kind, fqn string) (Row, error) {
	t.reads++
	if r, ok := t.rows[fqn]; ok {
		return r, nil
	}
	return Row{}, meridian.Errorf(meridian.ENotFound, "%s %q not found", kind, fqn)
}

func TestReplayReadsAgainOnlyTheRowsNotSeen(t *testing.T) {
	ctx := context.Background()
	schema := Row{ID: "s1", Kind: "databaseSchema", FQN: "svc.db.sch", Version: 1, Doc: []byte(`{"name":"sch"}`)}
	for _, c := range []struct {
		name      string
		seen      seenRows
		change    func(tx *countingTx) // made between the snapshot and the replay
		wantOK    bool
		wantReads int // made again, of the schema (found) and the new table (absent), in that order
	}{
		{"without seen rows every read is made again", nil, nil, true, 2},
		{"a found row seen as it was is not read again", seenRows{}, nil, true, 1},
		{"an absence is read again", seenRows{}, func(tx *countingTx) { tx.rows["svc.db.sch.t"] = Row{ID: "t1"} }, false, 1},
		{"a seen row unlike the snapshot's is read again", seenRows{RowKey{Kind: "databaseSchema", FQN: "svc.db.sch"}: {ID: "s1", Version: 2}}, nil, true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := &countingTx{rows: map[string]Row{schema.FQN: schema}}
			rs := &readSet{Tx: snap}
			if _, err := rs.GetByFQN(ctx, "databaseSchema", schema.FQN); err != nil {
				t.Fatal(err)
			}
			if _, err := rs.GetByFQN(ctx, "table", "svc.db.sch.t"); meridian.ErrorCode(err) != meridian.ENotFound {
				t.Fatalf("new table: %v, want ENotFound", err)
			}
			if c.seen != nil && len(c.seen) == 0 {
				// The schema was found by an earlier replay in the same transaction.
				c.seen.add(RowKey{Kind: "databaseSchema", FQN: schema.FQN}, rowRead{row: schema})
			}
			w := &countingTx{rows: map[string]Row{schema.FQN: schema}}
			if c.change != nil {
				c.change(w)
			}
			if ok := rs.replay(ctx, w, c.seen); ok != c.wantOK {
				t.Fatalf("replay = %v, want %v", ok, c.wantOK)
			}
			if w.reads != c.wantReads {
				t.Fatalf("%d reads made again, want %d", w.reads, c.wantReads)
			}
			if c.seen != nil {
				if _, kept := c.seen[RowKey{Kind: "table", FQN: "svc.db.sch.t"}]; kept {
					t.Fatal("an absence was kept as seen")
				}
			}
		})
	}
}

// keepingTx is a countingTx that is a ConflictKeeper.
type keepingTx struct{ *countingTx }

func (keepingTx) KeepsTxOnConflict() {}

func TestReplayLeavesTheClaimedRowToAConflictKeepersInsert(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		keeps     bool // the write transaction is a ConflictKeeper
		wantOK    bool
		wantReads int
	}{
		{"a ConflictKeeper's Insert checks the claimed row: it is not read again", true, true, 0},
		{"elsewhere the claimed row is read again, and found taken", false, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := &readSet{Tx: &countingTx{rows: map[string]Row{}}}
			if _, err := rs.claim(ctx, "table", "svc.db.sch.t"); meridian.ErrorCode(err) != meridian.ENotFound {
				t.Fatalf("claim: %v, want ENotFound", err)
			}
			// Meanwhile another write took the FQN.
			ct := &countingTx{rows: map[string]Row{"svc.db.sch.t": {ID: "t1"}}}
			var w Tx = ct
			if c.keeps {
				w = keepingTx{ct}
			}
			if ok := rs.replay(ctx, w, nil); ok != c.wantOK {
				t.Fatalf("replay = %v, want %v", ok, c.wantOK)
			}
			if ct.reads != c.wantReads {
				t.Fatalf("%d reads made again, want %d", ct.reads, c.wantReads)
			}
		})
	}
}
