package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// engineTables opens a catalog as cfg says, creates the bench's fixtures and tables
// 0..n-1 through the engine, and returns the tables' FQNs.
func engineTables(t *testing.T, cfg app.Config, n int) []string {
	t.Helper()
	ctx := context.Background()
	cat, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := createFixturesIn(ctx, cat); err != nil {
		t.Fatal(err)
	}
	fqns := make([]string, n)
	for i := range fqns {
		body, err := decodedBody(1, i)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cat.Entities.Create(ctx, meridian.System, "table", body); err != nil {
			t.Fatalf("create table %d: %v", i, err)
		}
		fqns[i] = genTable(1, i).fqn
	}
	return fqns
}

func TestDriverWriteFloorWritesWhatTheEngineWould(t *testing.T) {
	ctx := context.Background()
	cfg := app.Config{DataDir: t.TempDir()}
	fqns := engineTables(t, cfg, 3)

	drv, err := app.OpenDriver(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rate, err := driverWriteFloor(ctx, drv, fqns)
	if err != nil || rate <= 0 {
		drv.Close()
		t.Fatalf("driverWriteFloor = %v, %v; want a rate", rate, err)
	}
	relationsOf(t, drv, fqns)
	drv.Close()

	cat, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	for _, fqn := range fqns {
		orig, err := cat.Entities.Get(ctx, meridian.System, "table", store.Key{FQN: fqn}, store.GetOptions{Fields: "*"})
		if err != nil {
			t.Fatal(err)
		}
		cp, err := cat.Entities.Get(ctx, meridian.System, "table", store.Key{FQN: fqn + "_copy"}, store.GetOptions{Fields: "*"})
		if err != nil {
			t.Fatalf("the copy of %s: %v", fqn, err)
		}
		if cp.ID() == orig.ID() || cp.Name() != orig.Name()+"_copy" {
			t.Errorf("copy of %s: id %s name %s, want a new id and %s_copy", fqn, cp.ID(), cp.Name(), orig.Name())
		}
		for _, field := range []string{"columns", "tags", "databaseSchema", "service"} {
			a, _ := json.Marshal(orig[field])
			b, _ := json.Marshal(cp[field])
			if string(a) != string(b) {
				t.Errorf("copy of %s: %s %s, want %s", fqn, field, b, a)
			}
		}
		versions, err := cat.Entities.Versions(ctx, meridian.System, "table", cp.ID())
		if err != nil || len(versions) != 1 {
			t.Errorf("copy of %s: versions %d (%v), want 1", fqn, len(versions), err)
		}
		res, err := cat.Entities.Search(ctx, meridian.System, search.Query{Text: cp.Name(), Kinds: []string{"table"}, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Hits, func(h search.Hit) bool { return h.ID == cp.ID() }) {
			t.Errorf("a search for %q does not find the copy of %s", cp.Name(), fqn)
		}
	}
}

// relationsOf checks that each copy is at the ends of the same relations as the table
// it copies: its schema's containment, its tags.
func relationsOf(t *testing.T, drv store.Driver, fqns []string) {
	t.Helper()
	ctx := context.Background()
	tx, err := drv.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ends := func(fqn string) []string {
		row, err := tx.GetByFQN(ctx, "table", fqn)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, q := range []store.RelationQuery{{FromID: row.ID}, {ToID: row.ID}} {
			rels, err := tx.Relations(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rels {
				other := r.ToID
				if q.ToID != "" {
					other = r.FromID
				}
				out = append(out, r.Type+" "+other)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, fqn := range fqns {
		want, got := ends(fqn), ends(fqn+"_copy")
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("relations of the copy of %s: %v, want %v (and some)", fqn, got, want)
		}
	}
}
