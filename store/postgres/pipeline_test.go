package postgres

import (
	"context"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// pipelineRow is a table row of the pipeline tests.
func pipelineRow(id, name string) store.Row {
	return store.Row{ID: id, Kind: "table", Name: name, FQN: "svc.db.s." + name, Version: meridian.InitialVersion,
		UpdatedAt: 1, UpdatedBy: "admin", Doc: []byte(`{"id":"` + id + `","name":"` + name + `"}`)}
}

func TestPipelinedWritesAreReadBackAndCommitted(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	stx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer stx.Rollback()
	pl := stx.(store.Pipeliner)
	if err := pl.Pipeline(func() error {
		if err := stx.Insert(ctx, pipelineRow("00000000-0000-0000-0000-000000000001", "a")); err != nil {
			return err
		}
		return stx.PutVersion(ctx, "00000000-0000-0000-0000-000000000001", meridian.InitialVersion, []byte(`{}`))
	}); err != nil {
		t.Fatalf("Pipeline: %v", err)
	}
	if _, err := stx.GetByFQN(ctx, "table", "svc.db.s.a"); err != nil {
		t.Errorf("a read after held writes does not see them: %v", err)
	}
	if err := stx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	rtx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rtx.Rollback()
	if _, err := rtx.Version(ctx, "00000000-0000-0000-0000-000000000001", meridian.InitialVersion); err != nil {
		t.Errorf("the held version was not committed: %v", err)
	}
}

func TestAHeldWriteThatFailsFailsTheTransaction(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	first := pipelineRow("00000000-0000-0000-0000-000000000001", "a")
	for _, c := range []struct {
		name string
		next func(store.Tx) error // the statement after the held write that fails
	}{
		{"a read", func(tx store.Tx) error { _, err := tx.GetByFQN(ctx, "table", "svc.db.s.a"); return err }},
		{"a write", func(tx store.Tx) error { return tx.PutSetting(ctx, "k", "v") }},
		{"commit", func(store.Tx) error { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx, err := db.Begin(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if err := tx.Insert(ctx, first); err != nil && meridian.ErrorCode(err) != meridian.EConflict {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			tx, err = db.Begin(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			// The same id again: refused, but only once the write is sent.
			if err := tx.(store.Pipeliner).Pipeline(func() error { return tx.Insert(ctx, first) }); err != nil {
				t.Fatalf("Pipeline: %v, want the error held back", err)
			}
			err = c.next(tx)
			if err == nil {
				err = tx.Commit()
			} else if cerr := tx.Commit(); cerr == nil {
				t.Errorf("Commit after the failed held write succeeded")
			}
			if meridian.ErrorCode(err) != meridian.EConflict {
				t.Errorf("after a held insert of an existing id: %v, want EConflict", err)
			}
		})
	}
}

func TestGetRowsAnswersAsGetAndGetByFQN(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	a := pipelineRow("00000000-0000-0000-0000-00000000000a", "a")
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Insert(ctx, a); err != nil {
		t.Fatal(err)
	}
	keys := []store.RowKey{
		{Kind: "table", FQN: a.FQN},
		{ID: a.ID},
		{Kind: "table", ID: a.ID},
		{Kind: "database", ID: a.ID},
		{Kind: "table", FQN: "svc.db.s.missing"},
		{Kind: "table", FQN: "svc.db.s.\x00"},
	}
	// Pipelined, so the insert above is sent with the reads.
	var rows []store.Row
	var errs []error
	if err := tx.(store.Pipeliner).Pipeline(func() error {
		if err := tx.PutVersion(ctx, a.ID, a.Version, a.Doc); err != nil {
			return err
		}
		rows, errs = tx.(store.RowBatcher).GetRows(ctx, keys)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		var want store.Row
		var wantErr error
		if k.ID != "" {
			want, wantErr = tx.Get(ctx, k.Kind, k.ID)
		} else {
			want, wantErr = tx.GetByFQN(ctx, k.Kind, k.FQN)
		}
		if meridian.ErrorCode(errs[i]) != meridian.ErrorCode(wantErr) || (wantErr != nil) != (errs[i] != nil) ||
			(wantErr != nil && errs[i].Error() != wantErr.Error()) {
			t.Errorf("key %+v: error %v, want %v", k, errs[i], wantErr)
		}
		if rows[i].ID != want.ID || rows[i].FQN != want.FQN || string(rows[i].Doc) != string(want.Doc) {
			t.Errorf("key %+v: row %+v, want %+v", k, rows[i], want)
		}
	}
	if errs[0] != nil {
		t.Errorf("the row inserted before the reads is not read back: %v", errs[0])
	}
}
