package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Driver conformance: the contract of store.Driver and store.Tx itself, below the
// engine. Every driver runs all of it through RunDriver; what only one driver does
// (pragmas, pools, locks, extensions, fuzzy search) stays in that driver's package.

// DriverOptions says how a driver may differ within the contract, and how to open its
// database again.
type DriverOptions struct {
	// JSONB: the driver keeps a document's meaning, not its bytes (PostgreSQL's jsonb
	// re-encodes it), so the suite compares documents as JSON. Otherwise a document must
	// come back byte for byte.
	JSONB bool
	// Reopen creates one fresh, empty database and returns a function that opens a
	// driver on it, the same database at every call. The caller closes each driver.
	Reopen func(t *testing.T) func() store.Driver
}

// RunDriver runs the driver contract against the driver open returns, a fresh one for
// every behaviour.
func RunDriver(t *testing.T, open Open, opts DriverOptions) {
	tests := []struct {
		name string
		run  func(t *testing.T, d *driverFixture)
	}{
		{"InsertGetsByIDOrFQNAndRefusesDuplicates", testDriverInsertGet},
		{"UpdateIsOptimistic", testDriverUpdate},
		{"RemoveCascadesToVersionsAndRelations", testDriverRemove},
		{"ListPagesWithCursorsBothWaysAndCountsTotals", testDriverListPaging},
		{"ListPrefixConditionsTakeFQNPartsLiterally", testDriverListPrefix},
		{"ListFieldConditionsMatchScalarsAndArrayElements", testDriverListFields},
		{"VersionsAreNewestFirst", testDriverVersions},
		{"RowsThatAreTheirSnapshotKeepEveryVersion", testDriverRowSnapshots},
		{"RelationsFilterOldestFirstAndKeepDetails", testDriverRelations},
		{"RelatedJoinsLiveTargetsOldestFirst", testDriverRelated},
		{"EventsKeepOrderAndRoundTrip", testDriverEvents},
		{"EventQueryFiltersBySinceAndEntityType", testDriverEventFilters},
		{"SettingsAreMissingThenOverwritten", testDriverSettings},
		{"TransactionsCommitRollBackAndIsolate", testDriverTransactions},
		{"ConcurrentWritersNeverFail", testDriverConcurrentWriters},
		{"SearchDocumentsRankFilterPageAndGoAway", testDriverSearch},
		{"SearchAggregatesMatchesInTheDatabase", testDriverSearchAggregations},
		{"SearchAnyWordPagesAgreeWithTheWholeRanking", testDriverSearchAnyWordPages},
		{"SearchWordsMatchEveryTermTheyStart", testDriverSearchManyTermsUnderAPrefix},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &driverFixture{ctx: context.Background(), db: open(t), opts: opts})
		})
	}
	t.Run("DataSurvivesReopen", func(t *testing.T) {
		if opts.Reopen == nil {
			t.Fatal("DriverOptions.Reopen is required")
		}
		testDriverReopen(t, opts)
	})
}

// driverFixture is one fresh driver under test.
type driverFixture struct {
	ctx  context.Context
	db   store.Driver
	opts DriverOptions
}

// Write runs fn in a writable transaction and commits it.
func Write(t *testing.T, db store.Driver, fn func(tx store.Tx) error) {
	t.Helper()
	tx, err := db.Begin(context.Background(), true)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// Read runs fn in a read-only transaction.
func Read(t *testing.T, db store.Driver, fn func(tx store.Tx) error) {
	t.Helper()
	tx, err := db.Begin(context.Background(), false)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		t.Fatalf("read: %v", err)
	}
}

func row(id, kind, name, fqn string) store.Row {
	doc, _ := json.Marshal(map[string]any{"id": id, "name": name, "fullyQualifiedName": fqn})
	return store.Row{ID: id, Kind: kind, Name: name, FQN: fqn, Version: meridian.InitialVersion,
		UpdatedAt: 1700000000000, UpdatedBy: "admin", Doc: doc}
}

func rowDoc(id, kind, name string, doc map[string]any) store.Row {
	r := row(id, kind, name, name)
	r.Doc, _ = json.Marshal(doc)
	return r
}

func rowNames(rows []store.Row) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.Name)
	}
	return strings.Join(s, ",")
}

// canon re-encodes a JSON document with sorted keys and no spaces.
func canon(b []byte) []byte {
	if b == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return append([]byte("invalid JSON: "), b...)
	}
	out, _ := json.Marshal(v)
	return out
}

// doc is a stored document as the suite compares it: its bytes, or its canonical
// form for a JSONB driver.
func (d *driverFixture) doc(b []byte) []byte {
	if d.opts.JSONB {
		return canon(b)
	}
	return b
}

// versions reads the snapshots of entity id in tx, newest first, each document as
// d.doc compares it.
func (d *driverFixture) versions(tx store.Tx, id string) ([]string, error) {
	vs, err := tx.Versions(d.ctx, id)
	if err != nil {
		return nil, err
	}
	got := make([]string, 0, len(vs))
	for _, v := range vs {
		got = append(got, string(d.doc(v)))
	}
	return got, nil
}

// sameRow reports whether two rows are equal, documents compared as d.doc does.
func (d *driverFixture) sameRow(a, b store.Row) bool {
	a.Doc, b.Doc = d.doc(a.Doc), d.doc(b.Doc)
	return reflect.DeepEqual(a, b)
}

func testDriverInsertGet(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	orig := row("id-1", "table", "orders", "svc.db.sales.orders")
	orig.Deleted = true
	Write(t, db, func(tx store.Tx) error { return tx.Insert(ctx, orig) })

	tests := []struct {
		name string
		get  func(tx store.Tx) (store.Row, error)
		code string
		msg  string
	}{
		{"get by id and kind", func(tx store.Tx) (store.Row, error) { return tx.Get(ctx, "table", "id-1") }, "", ""},
		{"get by id with any kind", func(tx store.Tx) (store.Row, error) { return tx.Get(ctx, "", "id-1") }, "", ""},
		{"get by fqn", func(tx store.Tx) (store.Row, error) { return tx.GetByFQN(ctx, "table", "svc.db.sales.orders") }, "", ""},
		{"get by id of another kind", func(tx store.Tx) (store.Row, error) { return tx.Get(ctx, "topic", "id-1") },
			meridian.ENotFound, "topic instance for id-1 not found"},
		{"get missing id with any kind", func(tx store.Tx) (store.Row, error) { return tx.Get(ctx, "", "nope") },
			meridian.ENotFound, "entity instance for nope not found"},
		{"get missing fqn", func(tx store.Tx) (store.Row, error) { return tx.GetByFQN(ctx, "table", "svc.x") },
			meridian.ENotFound, "table instance for svc.x not found"},
		{"fqn lookup is case-sensitive", func(tx store.Tx) (store.Row, error) { return tx.GetByFQN(ctx, "table", "SVC.db.sales.orders") },
			meridian.ENotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				got, err := tt.get(tx)
				WantCode(t, err, tt.code)
				if tt.msg != "" && err.Error() != tt.msg {
					t.Errorf("message %q, want %q", err.Error(), tt.msg)
				}
				if tt.code == "" && !d.sameRow(got, orig) {
					t.Errorf("got %+v, want %+v", got, orig)
				}
				return nil
			})
		})
	}

	dups := []struct {
		name string
		r    store.Row
		code string
	}{
		{"same kind and fqn", row("id-2", "table", "orders", "svc.db.sales.orders"), meridian.EConflict},
		{"same id", row("id-1", "topic", "t", "kafka.t"), meridian.EConflict},
		{"same fqn, other kind", row("id-3", "topic", "orders", "svc.db.sales.orders"), ""},
	}
	for _, tt := range dups {
		t.Run("insert "+tt.name, func(t *testing.T) {
			tx, err := db.Begin(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			err = tx.Insert(ctx, tt.r)
			WantCode(t, err, tt.code)
			if tt.code == meridian.EConflict && err.Error() != "Entity already exists" {
				t.Errorf("message %q", err.Error())
			}
		})
	}
}

func testDriverUpdate(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Write(t, db, func(tx store.Tx) error {
		if err := tx.Insert(ctx, row("a", "table", "a", "s.a")); err != nil {
			return err
		}
		return tx.Insert(ctx, row("b", "table", "b", "s.b"))
	})

	next := row("a", "table", "a2", "s.a2")
	next.Version = 2
	next.Deleted = true
	tests := []struct {
		name   string
		r      store.Row
		expect meridian.Version
		code   string
	}{
		{"stale version is refused", next, 5, meridian.EPreconditionFailed},
		{"missing row is not found", row("zz", "table", "z", "s.z"), 1, meridian.ENotFound},
		{"rename onto a taken fqn conflicts", func() store.Row { r := row("b", "table", "b", "s.a"); r.Version = 2; return r }(), 1, meridian.EConflict},
		{"expected version updates", next, 1, ""},
		{"same expected version again is stale", next, 1, meridian.EPreconditionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := db.Begin(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			err = tx.Update(ctx, tt.r, tt.expect)
			WantCode(t, err, tt.code)
			if tt.code == meridian.EPreconditionFailed &&
				err.Error() != "The entity has been modified by another user. Please refresh and retry." {
				t.Errorf("message %q", err.Error())
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		})
	}
	Read(t, db, func(tx store.Tx) error {
		got, err := tx.Get(ctx, "table", "a")
		if err != nil {
			return err
		}
		if !d.sameRow(got, next) {
			t.Errorf("got %+v, want %+v", got, next)
		}
		return nil
	})
}

func testDriverRemove(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Write(t, db, func(tx store.Tx) error {
		for _, id := range []string{"db", "t1", "t2"} {
			if err := tx.Insert(ctx, row(id, "table", id, "s."+id)); err != nil {
				return err
			}
			if err := tx.PutVersion(ctx, id, 1, []byte(`{"v":1}`)); err != nil {
				return err
			}
		}
		for _, r := range []store.Relation{
			{FromID: "db", FromKind: "database", ToID: "t1", ToKind: "table", Type: "contains"},
			{FromID: "t1", FromKind: "table", ToID: "t2", ToKind: "table", Type: "upstream"},
			{FromID: "db", FromKind: "database", ToID: "t2", ToKind: "table", Type: "contains"},
		} {
			if err := tx.Relate(ctx, r); err != nil {
				return err
			}
		}
		return tx.Remove(ctx, "t1")
	})
	Read(t, db, func(tx store.Tx) error {
		_, err := tx.Get(ctx, "", "t1")
		WantCode(t, err, meridian.ENotFound)
		vs, err := tx.Versions(ctx, "t1")
		if err != nil || len(vs) != 0 {
			t.Errorf("versions after remove: %d, %v", len(vs), err)
		}
		rels, err := tx.Relations(ctx, store.RelationQuery{})
		if err != nil {
			return err
		}
		if len(rels) != 1 || rels[0].ToID != "t2" || rels[0].Type != "contains" {
			t.Errorf("relations after remove: %+v", rels)
		}
		if vs, _ := tx.Versions(ctx, "t2"); len(vs) != 1 {
			t.Errorf("other entity lost its versions: %d", len(vs))
		}
		return nil
	})
	tx, _ := db.Begin(ctx, true)
	defer tx.Rollback()
	WantCode(t, tx.Remove(ctx, "t1"), meridian.ENotFound)
}

func testDriverListPaging(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Write(t, db, func(tx store.Tx) error {
		// Two rows share the name "c" and are ordered by id.
		for i, n := range []string{"e", "a", "c", "b", "d", "c"} {
			r := row(fmt.Sprintf("id%d", i), "table", n, fmt.Sprintf("s.%s%d", n, i))
			if err := tx.Insert(ctx, r); err != nil {
				return err
			}
		}
		del := row("gone", "table", "bb", "s.bb")
		del.Deleted = true
		if err := tx.Insert(ctx, del); err != nil {
			return err
		}
		return tx.Insert(ctx, row("other", "topic", "a", "k.a"))
	})
	// Order: a(id1) b(id3) c(id2) c(id5) d(id4) e(id0)
	tests := []struct {
		name  string
		q     store.ListQuery
		want  string
		total int
	}{
		{"first page", store.ListQuery{Kind: "table", Limit: 2}, "a,b", 6},
		{"after cursor", store.ListQuery{Kind: "table", Limit: 2, After: &store.Cursor{Name: "b", ID: "id3"}}, "c,c", 6},
		{"after cursor between equal names", store.ListQuery{Kind: "table", Limit: 2, After: &store.Cursor{Name: "c", ID: "id2"}}, "c,d", 6},
		{"last page is short", store.ListQuery{Kind: "table", Limit: 2, After: &store.Cursor{Name: "d", ID: "id4"}}, "e", 6},
		{"past the end is empty", store.ListQuery{Kind: "table", Limit: 2, After: &store.Cursor{Name: "e", ID: "id0"}}, "", 6},
		{"before cursor is ascending", store.ListQuery{Kind: "table", Limit: 2, Before: &store.Cursor{Name: "d", ID: "id4"}}, "c,c", 6},
		{"before cursor between equal names", store.ListQuery{Kind: "table", Limit: 2, Before: &store.Cursor{Name: "c", ID: "id5"}}, "b,c", 6},
		{"before near the start is short", store.ListQuery{Kind: "table", Limit: 3, Before: &store.Cursor{Name: "b", ID: "id3"}}, "a", 6},
		{"limit zero counts only", store.ListQuery{Kind: "table", Limit: 0}, "", 6},
		{"negative limit returns all", store.ListQuery{Kind: "table", Limit: -1}, "a,b,c,c,d,e", 6},
		{"include deleted", store.ListQuery{Kind: "table", Include: store.IncludeDeleted, Limit: 10}, "bb", 1},
		{"include all", store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 10}, "a,b,bb,c,c,d,e", 7},
		{"include all pages through live and deleted in one order", store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 2, After: &store.Cursor{Name: "b", ID: "id3"}}, "bb,c", 7},
		{"include all before cursor", store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 2, Before: &store.Cursor{Name: "c", ID: "id2"}}, "b,bb", 7},
		{"include all first page", store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: 1}, "a", 7},
		{"include all without a limit", store.ListQuery{Kind: "table", Include: store.IncludeAll, Limit: -1}, "a,b,bb,c,c,d,e", 7},
		{"include non-deleted", store.ListQuery{Kind: "table", Include: store.IncludeNonDeleted, Limit: 10}, "a,b,c,c,d,e", 6},
		{"empty kind lists every kind", store.ListQuery{Limit: 2}, "a,a", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				rows, total, err := tx.List(ctx, tt.q)
				if err != nil {
					return err
				}
				if got := rowNames(rows); got != tt.want || total != tt.total {
					t.Errorf("got %q total %d, want %q total %d", got, total, tt.want, tt.total)
				}
				if rows == nil {
					t.Error("rows is nil, want empty slice")
				}
				return nil
			})
		})
	}
	t.Run("walking forward then backward visits every row", func(t *testing.T) {
		Read(t, db, func(tx store.Tx) error {
			var fwd []string
			var after *store.Cursor
			var last store.Row
			for {
				rows, _, err := tx.List(ctx, store.ListQuery{Kind: "table", Limit: 4, After: after})
				if err != nil {
					return err
				}
				if len(rows) == 0 {
					break
				}
				fwd = append(fwd, rowNames(rows))
				last = rows[len(rows)-1]
				after = &store.Cursor{Name: last.Name, ID: last.ID}
			}
			if strings.Join(fwd, "|") != "a,b,c,c|d,e" {
				t.Errorf("forward %q", fwd)
			}
			rows, _, err := tx.List(ctx, store.ListQuery{Kind: "table", Limit: 4, Before: &store.Cursor{Name: "d", ID: "id4"}})
			if err != nil {
				return err
			}
			if rowNames(rows) != "a,b,c,c" {
				t.Errorf("backward %q", rowNames(rows))
			}
			return nil
		})
	})
	t.Run("bad include is invalid", func(t *testing.T) {
		Read(t, db, func(tx store.Tx) error {
			_, _, err := tx.List(ctx, store.ListQuery{Include: "maybe", Limit: 1})
			WantCode(t, err, meridian.EInvalid)
			return nil
		})
	})
}

func testDriverListPrefix(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	fqns := []string{
		`svc.db`,
		`svc.db.orders`,
		`svc.db.orders.id`,
		`svc.dbx.orders`,
		`svc.DB.upper`,
		`"prod.mysql".sales`,
		`"prod.mysql".sales.orders`,
		`"prod.mysqlx".sales`,
		`prod.mysql.sales.fake`,
		`a%b.t1`,
		`axxb.t2`,
		`a_b.t3`,
		`a-b.t4`,
		`a\b.t5`,
		`a\\b.t6`,
	}
	Write(t, db, func(tx store.Tx) error {
		for i, f := range fqns {
			if err := tx.Insert(ctx, row(fmt.Sprintf("id%02d", i), "table", fmt.Sprintf("n%02d", i), f)); err != nil {
				return err
			}
		}
		return nil
	})
	fqnsOf := func(rows []store.Row) string {
		var s []string
		for _, r := range rows {
			s = append(s, r.FQN)
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		name   string
		prefix string
		want   string
	}{
		{"children and grandchildren, not the parent or siblings", "svc.db", "svc.db.orders svc.db.orders.id"},
		{"prefix is case-sensitive", "svc.DB", "svc.DB.upper"},
		{"quoted part with a dot", `"prod.mysql"`, `"prod.mysql".sales "prod.mysql".sales.orders`},
		{"quoted part is plain text", `"prod.mysql".sales`, `"prod.mysql".sales.orders`},
		{"percent is literal", "a%b", "a%b.t1"},
		{"underscore is literal", "a_b", "a_b.t3"},
		{"backslash is literal", `a\b`, `a\b.t5`},
		{"double backslash is literal", `a\\b`, `a\\b.t6`},
		{"no match", "nothing", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				rows, total, err := tx.List(ctx, store.ListQuery{Kind: "table", Limit: 100,
					Conditions: []store.Condition{{Prefix: true, Value: tt.prefix}}})
				if err != nil {
					return err
				}
				if got := fqnsOf(rows); got != tt.want || total != len(rows) {
					t.Errorf("got %q (total %d), want %q", got, total, tt.want)
				}
				return nil
			})
		})
	}
}

func testDriverListFields(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Write(t, db, func(tx store.Tx) error {
		docs := []store.Row{
			rowDoc("1", "table", "t1", map[string]any{"tableType": "Regular", "tags": []any{"PII.Sensitive", "Tier.Tier1"}, "count": 3, "flag": true}),
			rowDoc("2", "table", "t2", map[string]any{"tableType": "View", "tags": []any{"Tier.Tier1"}, "count": 3.5, "flag": false}),
			rowDoc("3", "table", "t3", map[string]any{"tableType": "Regular", "owner": map[string]any{"name": "Regular"}}),
			rowDoc("4", "table", "t4", map[string]any{"tableType": "regular", "tags": []any{map[string]any{"tagFQN": "PII.Sensitive"}}}),
			rowDoc("5", "table", "t5", map[string]any{"tableType": "x' OR 1=1 --"}),
		}
		for _, r := range docs {
			if err := tx.Insert(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	tests := []struct {
		name  string
		conds []store.Condition
		want  string
		code  string
	}{
		{"scalar equality", []store.Condition{{Field: "tableType", Value: "Regular"}}, "t1,t3", ""},
		{"scalar equality is exact", []store.Condition{{Field: "tableType", Value: "regular"}}, "t4", ""},
		{"array membership", []store.Condition{{Field: "tags", Value: "Tier.Tier1"}}, "t1,t2", ""},
		{"array of objects does not match", []store.Condition{{Field: "tags", Value: "PII.Sensitive"}}, "t1", ""},
		{"object members do not match", []store.Condition{{Field: "owner", Value: "Regular"}}, "", ""},
		{"conditions combine", []store.Condition{{Field: "tags", Value: "Tier.Tier1"}, {Field: "tableType", Value: "View"}}, "t2", ""},
		{"integer as text", []store.Condition{{Field: "count", Value: "3"}}, "t1", ""},
		{"real as text", []store.Condition{{Field: "count", Value: "3.5"}}, "t2", ""},
		{"boolean as text", []store.Condition{{Field: "flag", Value: "false"}}, "t2", ""},
		{"missing field matches nothing", []store.Condition{{Field: "nope", Value: "x"}}, "", ""},
		{"value is bound, not spliced", []store.Condition{{Field: "tableType", Value: "x' OR 1=1 --"}}, "t5", ""},
		{"field with a quote is invalid", []store.Condition{{Field: "a' OR 1=1 --", Value: "x"}}, "", meridian.EInvalid},
		{"field with a dot is invalid", []store.Condition{{Field: "owner.name", Value: "x"}}, "", meridian.EInvalid},
		{"field starting with a digit is invalid", []store.Condition{{Field: "1abc", Value: "x"}}, "", meridian.EInvalid},
		{"empty field is invalid", []store.Condition{{Field: "", Value: "x"}}, "", meridian.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				rows, total, err := tx.List(ctx, store.ListQuery{Kind: "table", Limit: 100, Conditions: tt.conds})
				WantCode(t, err, tt.code)
				if tt.code != "" {
					return nil
				}
				if got := rowNames(rows); got != tt.want || total != len(rows) {
					t.Errorf("got %q (total %d), want %q", got, total, tt.want)
				}
				return nil
			})
		})
	}
}

func testDriverVersions(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Write(t, db, func(tx store.Tx) error {
		for _, v := range []meridian.Version{1, 12, 2, 11} {
			if err := tx.PutVersion(ctx, "e", v, []byte(fmt.Sprintf(`{"version":%s}`, v))); err != nil {
				return err
			}
		}
		return tx.PutVersion(ctx, "other", 1, []byte(`{}`))
	})
	Read(t, db, func(tx store.Tx) error {
		got, err := d.versions(tx, "e")
		if err != nil {
			return err
		}
		want := `{"version":1.2} {"version":1.1} {"version":0.2} {"version":0.1}`
		if strings.Join(got, " ") != want {
			t.Errorf("versions %q", got)
		}
		doc, err := tx.Version(ctx, "e", 11)
		if err != nil || string(d.doc(doc)) != `{"version":1.1}` {
			t.Errorf("Version 1.1: %s, %v", doc, err)
		}
		_, err = tx.Version(ctx, "e", 5)
		WantCode(t, err, meridian.ENotFound)
		if vs, err := tx.Versions(ctx, "missing"); err != nil || vs == nil || len(vs) != 0 {
			t.Errorf("Versions of missing entity: %v, %v", vs, err)
		}
		return nil
	})
}

func testDriverRelations(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	rels := []store.Relation{
		{FromID: "db", FromKind: "database", ToID: "t1", ToKind: "table", Type: "contains"},
		{FromID: "t1", FromKind: "table", ToID: "t2", ToKind: "table", Type: "upstream", Doc: []byte(`{"sqlQuery":"a"}`)},
		{FromID: "db", FromKind: "database", ToID: "t2", ToKind: "table", Type: "contains"},
		{FromID: "t1", FromKind: "table", ToID: "u1", ToKind: "user", Type: "owners"},
		{FromID: "t2", FromKind: "table", ToID: "u1", ToKind: "user", Type: "owners"},
	}
	Write(t, db, func(tx store.Tx) error {
		for _, r := range rels {
			if err := tx.Relate(ctx, r); err != nil {
				return err
			}
		}
		// Relating again replaces the details and keeps the position.
		up := rels[1]
		up.Doc = []byte(`{"sqlQuery":"b"}`)
		if err := tx.Relate(ctx, up); err != nil {
			return err
		}
		if err := tx.Unrelate(ctx, rels[4]); err != nil {
			return err
		}
		return tx.Unrelate(ctx, store.Relation{FromID: "x", ToID: "y", Type: "z"})
	})
	edge := func(r store.Relation) string { return r.FromID + ">" + r.ToID + ":" + r.Type }
	tests := []struct {
		name string
		q    store.RelationQuery
		want string
	}{
		{"all, oldest first", store.RelationQuery{}, "db>t1:contains t1>t2:upstream db>t2:contains t1>u1:owners"},
		{"from", store.RelationQuery{FromID: "db"}, "db>t1:contains db>t2:contains"},
		{"to", store.RelationQuery{ToID: "t2"}, "t1>t2:upstream db>t2:contains"},
		{"type", store.RelationQuery{Type: "owners"}, "t1>u1:owners"},
		{"from and type", store.RelationQuery{FromID: "t1", Type: "upstream"}, "t1>t2:upstream"},
		{"to and type", store.RelationQuery{ToID: "t2", Type: "contains"}, "db>t2:contains"},
		{"from, to and type", store.RelationQuery{FromID: "db", ToID: "t1", Type: "contains"}, "db>t1:contains"},
		{"no match", store.RelationQuery{FromID: "nobody"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				got, err := tx.Relations(ctx, tt.q)
				if err != nil {
					return err
				}
				var s []string
				for _, r := range got {
					s = append(s, edge(r))
				}
				if strings.Join(s, " ") != tt.want {
					t.Errorf("got %q, want %q", s, tt.want)
				}
				return nil
			})
		})
	}
	t.Run("details round trip and replace", func(t *testing.T) {
		Read(t, db, func(tx store.Tx) error {
			got, err := tx.Relations(ctx, store.RelationQuery{Type: "upstream"})
			if err != nil {
				return err
			}
			want := rels[1]
			want.Doc = []byte(`{"sqlQuery":"b"}`)
			if len(got) == 1 {
				got[0].Doc = d.doc(got[0].Doc)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("got %+v", got)
			}
			got, _ = tx.Relations(ctx, store.RelationQuery{FromID: "db", ToID: "t1"})
			if len(got) != 1 || got[0].Doc != nil || got[0].FromKind != "database" || got[0].ToKind != "table" {
				t.Errorf("relation without details: %+v", got)
			}
			return nil
		})
	})
}

func testDriverRelated(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	gone := row("u-gone", "user", "gone", "gone")
	Write(t, db, func(tx store.Tx) error {
		u2 := row("u2", "user", "bob", "bob")
		u2.Deleted = true
		for _, r := range []store.Row{
			row("t1", "table", "orders", "s.db.sch.orders"), row("t2", "table", "items", "s.db.sch.items"),
			row("u1", "user", "alice", "alice"), u2, gone, row("team1", "team", "sales", "sales"),
			row("d1", "domain", "finance", "finance"),
		} {
			if err := tx.Insert(ctx, r); err != nil {
				return err
			}
		}
		for _, r := range []store.Relation{
			{FromID: "t1", FromKind: "table", ToID: "u2", ToKind: "user", Type: "owners"},
			{FromID: "t1", FromKind: "table", ToID: "d1", ToKind: "domain", Type: "domains"},
			{FromID: "t1", FromKind: "table", ToID: "u1", ToKind: "user", Type: "owners"},
			{FromID: "t1", FromKind: "table", ToID: "u-gone", ToKind: "user", Type: "owners"},
			{FromID: "t1", FromKind: "table", ToID: "u-never", ToKind: "user", Type: "owners"},
			{FromID: "t1", FromKind: "table", ToID: "team1", ToKind: "user", Type: "owners"}, // kind differs
			{FromID: "t1", FromKind: "table", ToID: "u1", ToKind: "user", Type: "followers"},
			{FromID: "u1", FromKind: "user", ToID: "team1", ToKind: "team", Type: "teams"},
			{FromID: "u2", FromKind: "user", ToID: "team1", ToKind: "team", Type: "teams"},
			{FromID: "t2", FromKind: "table", ToID: "u1", ToKind: "user", Type: "owners"},
			{FromID: "t2", FromKind: "", ToID: "t1", ToKind: "", Type: "upstream"}, // no kinds: any
			// Relating again keeps the position.
			{FromID: "t1", FromKind: "table", ToID: "u2", ToKind: "user", Type: "owners", Doc: []byte(`{"x":1}`)},
		} {
			if err := tx.Relate(ctx, r); err != nil {
				return err
			}
		}
		return tx.Remove(ctx, gone.ID)
	})
	many := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "followers", "owners"}
	tests := []struct {
		name    string
		id      string
		types   []string
		inverse bool
		want    string
	}{
		{"one type: deleted kept, missing and other-kind targets left out", "t1", []string{"owners"}, false,
			"owners:u2(deleted) owners:u1"},
		{"types interleave oldest first", "t1", []string{"followers", "owners", "domains"}, false,
			"owners:u2(deleted) domains:d1 owners:u1 followers:u1"},
		{"types filter", "t1", []string{"followers"}, false, "followers:u1"},
		{"a repeated type counts once", "t1", []string{"domains", "domains"}, false, "domains:d1"},
		{"more types than a statement is prepared for", "t1", many, false, "owners:u2(deleted) owners:u1 followers:u1"},
		{"unknown type", "t1", []string{"votes"}, false, ""},
		{"no types", "t1", nil, false, ""},
		{"no relations", "d1", []string{"owners"}, false, ""},
		{"missing entity", "nobody", []string{"owners"}, false, ""},
		{"forward only from the entity", "u1", []string{"owners", "teams"}, false, "teams:team1"},
		{"inverse", "team1", []string{"teams"}, true, "teams:u1 teams:u2(deleted)"},
		{"inverse of several types", "u1", []string{"owners", "followers"}, true, "owners:t1 followers:t1 owners:t2"},
		{"inverse type filter", "u1", []string{"followers"}, true, "followers:t1"},
		{"inverse only to the entity", "t1", []string{"domains"}, true, ""},
		{"inverse checks the kind of the other end only", "team1", []string{"owners"}, true, "owners:t1"},
		{"no recorded kind matches any", "t2", []string{"upstream"}, false, "upstream:t1"},
		{"no recorded kind matches any, inverse", "t1", []string{"upstream"}, true, "upstream:t2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				got, err := tx.Related(ctx, tt.id, tt.types, tt.inverse)
				if err != nil {
					return err
				}
				var s []string
				for _, rr := range got {
					e := rr.Type + ":" + rr.Row.ID
					if rr.Row.Deleted {
						e += "(deleted)"
					}
					s = append(s, e)
					// The whole row, as Get reads it.
					want, err := tx.Get(ctx, "", rr.Row.ID)
					if err != nil {
						return err
					}
					if !d.sameRow(rr.Row, want) {
						t.Errorf("row %+v, want %+v", rr.Row, want)
					}
				}
				if strings.Join(s, " ") != tt.want {
					t.Errorf("got %q, want %q", strings.Join(s, " "), tt.want)
				}
				return nil
			})
		})
	}
}

func testDriverEvents(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	full := meridian.ChangeEvent{
		ID: "ev-1", EventType: meridian.EventEntityUpdated, EntityType: "table", EntityID: "t1",
		EntityFQN: "svc.db.s.t1", UserName: "admin", Timestamp: 1700000000123,
		PreviousVersion: 0.1, CurrentVersion: 0.2,
		ChangeDescription: &meridian.ChangeDescription{
			FieldsAdded:     []meridian.FieldChange{{Name: "tags", NewValue: `[{"tagFQN":"PII.Sensitive"}]`}},
			FieldsUpdated:   []meridian.FieldChange{{Name: "description", OldValue: "a", NewValue: "b"}},
			FieldsDeleted:   []meridian.FieldChange{},
			PreviousVersion: 0.1,
		},
		Entity:    meridian.Entity{"id": "t1", "name": "t1", "version": 0.2, "tags": []any{"x"}},
		Recursive: true,
	}
	bare := meridian.ChangeEvent{ID: "ev-2", EventType: meridian.EventEntityDeleted, EntityType: "table",
		EntityID: "t2", UserName: "bot", Timestamp: 1700000000124}
	Write(t, db, func(tx store.Tx) error {
		if err := tx.AppendEvent(ctx, full); err != nil {
			return err
		}
		if err := tx.AppendEvent(ctx, bare); err != nil {
			return err
		}
		for i := 3; i <= 5; i++ {
			if err := tx.AppendEvent(ctx, meridian.ChangeEvent{ID: fmt.Sprintf("ev-%d", i), EventType: meridian.EventEntityCreated}); err != nil {
				return err
			}
		}
		return tx.AppendEvent(ctx, meridian.ChangeEvent{EventType: meridian.EventEntityCreated}) // id assigned
	})
	Read(t, db, func(tx store.Tx) error {
		evs, err := tx.Events(ctx, store.EventQuery{After: 0, Limit: 0})
		if err != nil {
			return err
		}
		if len(evs) != 6 {
			t.Fatalf("got %d events", len(evs))
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Errorf("event %d seq %d", i, e.Seq)
			}
		}
		if evs[5].ID == "" {
			t.Error("event without id got none")
		}
		want := full
		want.Seq = 1
		if !reflect.DeepEqual(evs[0], want) {
			t.Errorf("round trip:\n got %#v\nwant %#v", evs[0], want)
		}
		wantBare := bare
		wantBare.Seq = 2
		if !reflect.DeepEqual(evs[1], wantBare) {
			t.Errorf("bare round trip:\n got %#v\nwant %#v", evs[1], wantBare)
		}
		page, err := tx.Events(ctx, store.EventQuery{After: 2, Limit: 2})
		if err != nil {
			return err
		}
		if len(page) != 2 || page[0].ID != "ev-3" || page[1].ID != "ev-4" {
			t.Errorf("after 2, limit 2: %+v", page)
		}
		if rest, _ := tx.Events(ctx, store.EventQuery{After: 6, Limit: 10}); len(rest) != 0 {
			t.Errorf("after the last: %d", len(rest))
		}
		return nil
	})
	tx, _ := db.Begin(ctx, true)
	defer tx.Rollback()
	WantCode(t, tx.AppendEvent(ctx, full), meridian.EConflict)
}

func testDriverEventFilters(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Write(t, db, func(tx store.Tx) error {
		for i, kind := range []string{"table", "topic", "table", "glossary", "topic"} {
			if err := tx.AppendEvent(ctx, meridian.ChangeEvent{ID: fmt.Sprintf("ev-%d", i+1),
				EventType: meridian.EventEntityCreated, EntityType: kind, Timestamp: int64(100 + 10*i)}); err != nil {
				return err
			}
		}
		return nil
	})
	// Events: ev-1 table@100, ev-2 topic@110, ev-3 table@120, ev-4 glossary@130, ev-5 topic@140.
	tests := []struct {
		name string
		q    store.EventQuery
		want string
	}{
		{"everything", store.EventQuery{}, "ev-1,ev-2,ev-3,ev-4,ev-5"},
		{"since is inclusive", store.EventQuery{Since: 120}, "ev-3,ev-4,ev-5"},
		{"since past the last", store.EventQuery{Since: 141}, ""},
		{"one entity type", store.EventQuery{EntityTypes: []string{"topic"}}, "ev-2,ev-5"},
		{"any of several entity types", store.EventQuery{EntityTypes: []string{"glossary", "table"}}, "ev-1,ev-3,ev-4"},
		{"entity type matches exactly", store.EventQuery{EntityTypes: []string{"Table"}}, ""},
		{"a type written with JSON syntax is only a name", store.EventQuery{EntityTypes: []string{`table", "topic`}}, ""},
		{"filters combine with after and limit", store.EventQuery{After: 1, Since: 105, EntityTypes: []string{"table", "topic"}, Limit: 2}, "ev-2,ev-3"},
		{"negative limit is no limit", store.EventQuery{Limit: -1}, "ev-1,ev-2,ev-3,ev-4,ev-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				evs, err := tx.Events(ctx, tt.q)
				if err != nil {
					return err
				}
				var ids []string
				for _, e := range evs {
					ids = append(ids, e.ID)
				}
				if got := strings.Join(ids, ","); got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
				if evs == nil {
					t.Error("events is nil, want empty slice")
				}
				return nil
			})
		})
	}
}

func testDriverSettings(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	Read(t, db, func(tx store.Tx) error {
		_, err := tx.Setting(ctx, "jwt.key")
		WantCode(t, err, meridian.ENotFound)
		return nil
	})
	Write(t, db, func(tx store.Tx) error { return tx.PutSetting(ctx, "jwt.key", "one") })
	Write(t, db, func(tx store.Tx) error { return tx.PutSetting(ctx, "jwt.key", "two") })
	Read(t, db, func(tx store.Tx) error {
		v, err := tx.Setting(ctx, "jwt.key")
		if err != nil || v != "two" {
			t.Errorf("Setting: %q, %v", v, err)
		}
		return nil
	})
}

func testDriverTransactions(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	t.Run("rollback after commit is harmless", func(t *testing.T) {
		tx, err := db.Begin(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Insert(ctx, row("c1", "table", "c1", "s.c1")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Errorf("Rollback after Commit: %v", err)
		}
	})
	t.Run("rollback discards writes", func(t *testing.T) {
		tx, _ := db.Begin(ctx, true)
		if err := tx.Insert(ctx, row("r1", "table", "r1", "s.r1")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		Read(t, db, func(tx store.Tx) error {
			_, err := tx.Get(ctx, "", "r1")
			WantCode(t, err, meridian.ENotFound)
			return nil
		})
	})
	t.Run("read-only transaction refuses writes", func(t *testing.T) {
		writes := map[string]func(tx store.Tx) error{
			"Insert":      func(tx store.Tx) error { return tx.Insert(ctx, row("ro", "table", "ro", "s.ro")) },
			"Update":      func(tx store.Tx) error { return tx.Update(ctx, row("c1", "table", "x", "s.x"), 1) },
			"Remove":      func(tx store.Tx) error { return tx.Remove(ctx, "c1") },
			"PutVersion":  func(tx store.Tx) error { return tx.PutVersion(ctx, "c1", 1, []byte(`{}`)) },
			"Relate":      func(tx store.Tx) error { return tx.Relate(ctx, store.Relation{FromID: "a", ToID: "b", Type: "c"}) },
			"Unrelate":    func(tx store.Tx) error { return tx.Unrelate(ctx, store.Relation{FromID: "a", ToID: "b", Type: "c"}) },
			"AppendEvent": func(tx store.Tx) error { return tx.AppendEvent(ctx, meridian.ChangeEvent{ID: "e"}) },
			"PutSetting":  func(tx store.Tx) error { return tx.PutSetting(ctx, "k", "v") },
		}
		for name, fn := range writes {
			tx, _ := db.Begin(ctx, false)
			if err := fn(tx); err == nil {
				t.Errorf("%s in a read-only transaction succeeded", name)
			}
			if err := tx.Commit(); err != nil {
				t.Errorf("%s: commit: %v", name, err)
			}
		}
		Read(t, db, func(tx store.Tx) error {
			if _, err := tx.Get(ctx, "", "c1"); err != nil {
				t.Errorf("c1 changed: %v", err)
			}
			_, err := tx.Get(ctx, "", "ro")
			WantCode(t, err, meridian.ENotFound)
			return nil
		})
	})
	t.Run("reader sees a snapshot while a writer commits", func(t *testing.T) {
		rtx, _ := db.Begin(ctx, false)
		defer rtx.Rollback()
		_, before, err := rtx.List(ctx, store.ListQuery{Kind: "table"})
		if err != nil {
			t.Fatal(err)
		}
		Write(t, db, func(tx store.Tx) error { return tx.Insert(ctx, row("snap", "table", "snap", "s.snap")) })
		_, after, _ := rtx.List(ctx, store.ListQuery{Kind: "table"})
		if after != before {
			t.Errorf("reader saw a commit mid-transaction: %d then %d", before, after)
		}
	})
}

func testDriverConcurrentWriters(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	const writers, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := func() error {
					tx, err := db.Begin(ctx, true)
					if err != nil {
						return err
					}
					defer tx.Rollback()
					id := fmt.Sprintf("w%02d-%02d", w, i)
					if err := tx.Insert(ctx, row(id, "table", id, "s."+id)); err != nil {
						return err
					}
					if err := tx.AppendEvent(ctx, meridian.ChangeEvent{ID: "ev-" + id, EventType: meridian.EventEntityCreated, EntityID: id}); err != nil {
						return err
					}
					return tx.Commit()
				}()
				if err != nil {
					errs <- fmt.Errorf("writer %d insert %d: %w", w, i, err)
				}
			}
		}(w)
		go func() { // a reader beside each writer
			defer wg.Done()
			for i := 0; i < each; i++ {
				tx, err := db.Begin(ctx, false)
				if err != nil {
					errs <- err
					return
				}
				if _, _, err := tx.List(ctx, store.ListQuery{Kind: "table", Limit: 5}); err != nil {
					errs <- err
				}
				tx.Rollback()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	Read(t, db, func(tx store.Tx) error {
		_, total, err := tx.List(ctx, store.ListQuery{Kind: "table"})
		if err != nil {
			return err
		}
		if total != writers*each {
			t.Errorf("total %d, want %d", total, writers*each)
		}
		evs, err := tx.Events(ctx, store.EventQuery{After: 0, Limit: 0})
		if err != nil {
			return err
		}
		if len(evs) != writers*each {
			t.Errorf("events %d, want %d", len(evs), writers*each)
		}
		return nil
	})
}

func testDriverReopen(t *testing.T, opts DriverOptions) {
	d := &driverFixture{ctx: context.Background(), opts: opts}
	ctx, again := d.ctx, opts.Reopen(t)
	db := again()
	r := row("keep", "table", "keep", "s.keep")
	Write(t, db, func(tx store.Tx) error {
		if err := tx.Insert(ctx, r); err != nil {
			return err
		}
		if err := tx.PutVersion(ctx, "keep", 1, r.Doc); err != nil {
			return err
		}
		if err := tx.Relate(ctx, store.Relation{FromID: "s", FromKind: "databaseSchema", ToID: "keep", ToKind: "table", Type: "contains"}); err != nil {
			return err
		}
		if err := tx.AppendEvent(ctx, meridian.ChangeEvent{ID: "ev", EventType: meridian.EventEntityCreated}); err != nil {
			return err
		}
		return tx.PutSetting(ctx, "seeded", "yes")
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := again()
	defer db2.Close()
	Read(t, db2, func(tx store.Tx) error {
		got, err := tx.Get(ctx, "table", "keep")
		if err != nil || !d.sameRow(got, r) {
			t.Errorf("Get: %+v, %v", got, err)
		}
		if vs, _ := tx.Versions(ctx, "keep"); len(vs) != 1 {
			t.Errorf("versions: %d", len(vs))
		}
		if rels, _ := tx.Relations(ctx, store.RelationQuery{ToID: "keep"}); len(rels) != 1 {
			t.Errorf("relations: %d", len(rels))
		}
		if evs, _ := tx.Events(ctx, store.EventQuery{After: 0, Limit: 0}); len(evs) != 1 {
			t.Errorf("events: %d", len(evs))
		}
		if v, _ := tx.Setting(ctx, "seeded"); v != "yes" {
			t.Errorf("setting: %q", v)
		}
		return nil
	})
}
