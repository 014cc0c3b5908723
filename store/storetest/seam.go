package storetest

import (
	"context"
	"embed"
	"io/fs"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// The module seam's contract: a store.Module's migrations, its SQL through Tx.SQL
// (placeholders, errors, read-only transactions, commit and rollback with the entity
// rows), its rows removed with an entity, and its computed fields on the engine's
// reads. Every driver runs all of it through RunSeam, with the suite's own module.

// OpenWith returns a fresh, empty driver opened with modules, for one test. The test
// owns it and closes it (store/drivertest has one per driver).
type OpenWith func(t testing.TB, modules ...store.Module) store.Driver

//go:embed seammodule
var seamFiles embed.FS

// seamModule keeps notes about entities in seam_notes, removes them with their
// entity, and shows a glossary's note count as noteCount.
func seamModule() store.Module {
	migrations, _ := fs.Sub(seamFiles, "seammodule")
	return store.Module{
		Name:       "seam",
		Migrations: migrations,
		OnRemove: func(ctx context.Context, db store.SQL, id string) error {
			_, err := db.Exec(ctx, "DELETE FROM seam_notes WHERE entity_id = $1", id)
			return err
		},
		Computed: map[string]store.ComputeFunc{"glossary": func(ctx context.Context, db store.SQL, e meridian.Entity, _ map[string]bool) error {
			var n int64
			if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM seam_notes WHERE entity_id = $1", e.ID()).Scan(&n); err != nil {
				return err
			}
			e["noteCount"] = float64(n)
			return nil
		}},
	}
}

// RunSeam runs the module seam's contract against the driver open returns, a fresh one
// for every behaviour.
func RunSeam(t *testing.T, open OpenWith) {
	tests := []struct {
		name string
		run  func(t *testing.T, db store.Driver)
	}{
		{"PlaceholdersBindByNumberRepeatedAndOutOfOrder", testSeamPlaceholders},
		{"QueryReturnsEveryRowInOrder", testSeamQuery},
		{"QueryRowWithoutARowIsNotFound", testSeamNotFound},
		{"UniqueViolationIsConflict", testSeamConflict},
		{"ReadOnlyTransactionRefusesWrites", testSeamReadOnly},
		{"ModuleRowsCommitAndRollBackWithEntityRows", testSeamSameTransaction},
		{"RemoveTakesTheModulesRows", testSeamRemove},
		{"ComputedFieldsShowOnEngineReads", testSeamComputed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := open(t, seamModule())
			if ms := db.Modules(); len(ms) != 1 || ms[0].Name != "seam" {
				t.Fatalf("Modules() = %v", ms)
			}
			tc.run(t, db)
		})
	}
}

// note adds a note in tx.
func note(t *testing.T, tx store.Tx, entity string, n int, body string) {
	t.Helper()
	affected, err := tx.SQL().Exec(context.Background(), "INSERT INTO seam_notes (entity_id, n, body) VALUES ($1, $2, $3)", entity, n, body)
	if err != nil || affected != 1 {
		t.Fatalf("insert note: %d, %v", affected, err)
	}
}

// notes returns the bodies of an entity's notes, in order.
func notes(t *testing.T, db store.SQL, entity string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT body FROM seam_notes WHERE entity_id = $1 ORDER BY n", entity)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func testSeamPlaceholders(t *testing.T, db store.Driver) {
	ctx := context.Background()
	Write(t, db, func(tx store.Tx) error {
		sql := tx.SQL()
		if d := sql.Dialect(); d != store.DialectSQLite && d != store.DialectPostgres {
			t.Errorf("Dialect() = %q", d)
		}
		note(t, tx, "e1", 1, "one")
		// Out of order, and a literal question mark that is not a placeholder.
		if _, err := sql.Exec(ctx, "INSERT INTO seam_notes (body, n, entity_id, tag) VALUES ($3, $2, $1, '?')", "e1", 2, "two"); err != nil {
			return err
		}
		// One value bound to several columns.
		if _, err := sql.Exec(ctx, "INSERT INTO seam_notes (entity_id, n, body, tag) VALUES ($1, $2, $1, $1)", "e2", 1); err != nil {
			return err
		}
		n, err := sql.Exec(ctx, "UPDATE seam_notes SET tag = $2 || tag WHERE entity_id = $1", "e1", "x")
		if err != nil || n != 2 {
			t.Errorf("update affected %d, %v; want 2", n, err)
		}
		return nil
	})
	Read(t, db, func(tx store.Tx) error {
		var body, tag string
		if err := tx.SQL().QueryRow(ctx, "SELECT body, tag FROM seam_notes WHERE entity_id = $2 AND n = $1", 2, "e1").Scan(&body, &tag); err != nil {
			return err
		}
		if body != "two" || tag != "x?" {
			t.Errorf("out-of-order insert stored body %q tag %q", body, tag)
		}
		if err := tx.SQL().QueryRow(ctx, "SELECT body, tag FROM seam_notes WHERE entity_id = $1 AND body = $1 AND tag = $1", "e2").Scan(&body, &tag); err != nil {
			return err
		}
		if body != "e2" || tag != "e2" {
			t.Errorf("repeated placeholder stored body %q tag %q", body, tag)
		}
		return nil
	})
}

func testSeamQuery(t *testing.T, db store.Driver) {
	Write(t, db, func(tx store.Tx) error {
		for i, b := range []string{"c", "a", "b"} {
			note(t, tx, "e1", 3-i, b)
		}
		return nil
	})
	Read(t, db, func(tx store.Tx) error {
		if got := notes(t, tx.SQL(), "e1"); len(got) != 3 || got[0] != "b" || got[1] != "a" || got[2] != "c" {
			t.Errorf("notes in n order = %v", got)
		}
		if got := notes(t, tx.SQL(), "none"); len(got) != 0 {
			t.Errorf("notes of an entity without any = %v", got)
		}
		return nil
	})
}

func testSeamNotFound(t *testing.T, db store.Driver) {
	Read(t, db, func(tx store.Tx) error {
		var b string
		err := tx.SQL().QueryRow(context.Background(), "SELECT body FROM seam_notes WHERE entity_id = $1", "none").Scan(&b)
		WantCode(t, err, meridian.ENotFound)
		return nil
	})
}

func testSeamConflict(t *testing.T, db store.Driver) {
	ctx := context.Background()
	Write(t, db, func(tx store.Tx) error { note(t, tx, "e1", 1, "first"); return nil })
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.SQL().Exec(ctx, "INSERT INTO seam_notes (entity_id, n, body) VALUES ($1, $2, $3)", "e1", 1, "again")
	WantCode(t, err, meridian.EConflict)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	Read(t, db, func(tx store.Tx) error {
		if got := notes(t, tx.SQL(), "e1"); len(got) != 1 || got[0] != "first" {
			t.Errorf("after a refused duplicate: %v", got)
		}
		return nil
	})
}

func testSeamReadOnly(t *testing.T, db store.Driver) {
	ctx := context.Background()
	tx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.SQL().Exec(ctx, "INSERT INTO seam_notes (entity_id, n, body) VALUES ($1, $2, $3)", "e1", 1, "x"); err == nil {
		t.Error("Exec wrote in a read-only transaction")
	}
	if got := notes(t, tx.SQL(), "e1"); len(got) != 0 {
		t.Errorf("notes after a refused write: %v", got)
	}
	if err := tx.Commit(); err != nil {
		t.Errorf("commit of the read-only transaction: %v", err)
	}
	Read(t, db, func(tx store.Tx) error {
		if got := notes(t, tx.SQL(), "e1"); len(got) != 0 {
			t.Errorf("a read-only transaction wrote %v", got)
		}
		return nil
	})
}

func testSeamSameTransaction(t *testing.T, db store.Driver) {
	ctx := context.Background()
	write := func(commit bool) {
		tx, err := db.Begin(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := tx.Insert(ctx, row("g1", "glossary", "g1", "g1")); err != nil {
			t.Fatal(err)
		}
		note(t, tx, "g1", 1, "with the entity")
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	state := func() (entity bool, rows []string) {
		Read(t, db, func(tx store.Tx) error {
			_, err := tx.Get(ctx, "", "g1")
			entity = err == nil
			rows = notes(t, tx.SQL(), "g1")
			return nil
		})
		return
	}
	write(false)
	if entity, rows := state(); entity || len(rows) != 0 {
		t.Fatalf("after rollback: entity %v, notes %v", entity, rows)
	}
	write(true)
	if entity, rows := state(); !entity || len(rows) != 1 {
		t.Fatalf("after commit: entity %v, notes %v", entity, rows)
	}
}

func testSeamRemove(t *testing.T, db store.Driver) {
	ctx := context.Background()
	Write(t, db, func(tx store.Tx) error {
		for _, id := range []string{"g1", "g2"} {
			if err := tx.Insert(ctx, row(id, "glossary", id, id)); err != nil {
				return err
			}
			note(t, tx, id, 1, "about "+id)
		}
		return tx.Remove(ctx, "g1")
	})
	Read(t, db, func(tx store.Tx) error {
		if got := notes(t, tx.SQL(), "g1"); len(got) != 0 {
			t.Errorf("Remove left the module's rows: %v", got)
		}
		if got := notes(t, tx.SQL(), "g2"); len(got) != 1 {
			t.Errorf("Remove took another entity's rows: %v", got)
		}
		return nil
	})
}

func testSeamComputed(t *testing.T, db store.Driver) {
	ctx := context.Background()
	admin := &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
	e := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry()})
	res, err := e.Create(ctx, admin, "glossary", meridian.Entity{"name": "g", "description": "d"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Entity.ID()
	err = e.InTx(ctx, true, func(tx store.Tx) error {
		note(t, tx, id, 1, "a")
		note(t, tx, id, 2, "b")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Get(ctx, admin, "glossary", store.ByID(id), store.GetOptions{})
	if err != nil || got["noteCount"] != float64(2) {
		t.Fatalf("Get = %v, %v; want noteCount 2", got, err)
	}
	page, err := e.List(ctx, admin, "glossary", store.ListOptions{Limit: 10})
	if err != nil || len(page.Data) != 1 || page.Data[0]["noteCount"] != float64(2) {
		t.Fatalf("List = %+v, %v; want noteCount 2", page, err)
	}
	if _, err := e.Delete(ctx, admin, "glossary", store.ByID(id), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	Read(t, db, func(tx store.Tx) error {
		if got := notes(t, tx.SQL(), id); len(got) != 0 {
			t.Errorf("a hard delete left the module's rows: %v", got)
		}
		return nil
	})
}
