package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// Resource bounds of the engine: document limits on every verb, patches bounded as a
// whole and stopped when the caller gives up, searches at their bounds answered (and
// past them refused) on every driver, and a concurrent change detected at write time
// answered 409.

// columnsJSON returns n columns as JSON.
func columnsJSON(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf(`{"name":"c%d","dataType":"INT"}`, i)
	}
	return "[" + strings.Join(cols, ",") + "]"
}

func testDocumentLimitsHoldForEveryVerb(t *testing.T, f *Fixture) {
	f.Hierarchy()
	at := f.Table("wide", columnsJSON(meridian.MaxColumns))
	if cols, _ := at["columns"].([]any); len(cols) != meridian.MaxColumns {
		t.Fatalf("a table at the column limit has %d columns", len(cols))
	}
	small := f.Table("small", `[{"name":"id","dataType":"INT"}]`)
	big := strings.Repeat("x", meridian.MaxDocumentBytes)
	over := `{"name":"over","databaseSchema":"svc.db.sch","columns":` + columnsJSON(meridian.MaxColumns+1) + `}`
	cases := []struct {
		name string
		run  func() error
		msg  string
	}{
		{"create past the column limit", func() error {
			_, err := f.E.Create(f.Ctx, f.Admin, "table", f.Doc(over))
			return err
		}, "columns has more than the maximum of 10000 items"},
		{"create past the size limit", func() error {
			_, err := f.E.Create(f.Ctx, f.Admin, "table", meridian.Entity{"name": "huge", "databaseSchema": "svc.db.sch",
				"columns": []any{map[string]any{"name": "id", "dataType": "INT"}}, "description": big})
			return err
		}, "larger than the maximum of 8388608 bytes"},
		{"PUT past the size limit", func() error {
			_, err := f.E.CreateOrUpdate(f.Ctx, f.Admin, "table", meridian.Entity{"name": "small", "databaseSchema": "svc.db.sch",
				"columns": []any{map[string]any{"name": "id", "dataType": "INT"}}, "description": big})
			return err
		}, "larger than the maximum of 8388608 bytes"},
		{"PATCH past the column limit", func() error {
			_, err := f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(at.ID()), []byte(`[{"op":"add","path":"/columns/-","value":{"name":"x","dataType":"INT"}}]`), "")
			return err
		}, "columns has more than the maximum of 10000 items"},
		{"PATCH past the size limit", func() error {
			half := `"` + strings.Repeat("y", meridian.MaxDocumentBytes/2) + `"`
			_, err := f.E.Patch(f.Ctx, f.Admin, "table", store.ByID(small.ID()), []byte(`[{"op":"add","path":"/description","value":`+half+`},`+
				`{"op":"copy","from":"/description","path":"/displayName"}]`), "")
			return err
		}, "larger than the maximum of 8388608 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			WantCode(t, err, meridian.EInvalid)
			if !strings.Contains(meridian.ErrorMessage(err), c.msg) {
				t.Fatalf("message %q does not name the limit (%q)", meridian.ErrorMessage(err), c.msg)
			}
		})
	}
	if got := f.Get("table", small.ID(), "", ""); got.Version() != small.Version() {
		t.Fatalf("a refused write changed the table to version %s", got.Version())
	}
}

func testPatchStopsWhenTheCallerGivesUp(t *testing.T, f *Fixture) {
	g := f.Create("glossary", `{"name":"g","description":"one"}`)
	ctx, cancel := context.WithCancel(f.Ctx)
	cancel()
	_, err := f.E.Patch(ctx, f.Admin, "glossary", store.ByID(g.ID()), []byte(`[{"op":"replace","path":"/description","value":"two"}]`), "")
	if err == nil {
		t.Fatal("a patch whose caller gave up was applied")
	}
	if got := f.Get("glossary", g.ID(), "", ""); got.String("description") != "one" {
		t.Fatalf("description = %q after a cancelled patch", got.String("description"))
	}
	if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("cancelled patch error = %v", err)
	}
}

func testSearchBoundsHoldOnTheDriver(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("customer_orders", `[{"name":"id","dataType":"INT"}]`)
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", i)
		}
		return w
	}
	filters := func(n int) []search.Filter {
		l := make([]search.Filter, n)
		for i := range l {
			l[i] = search.Filter{Field: search.FieldOwners, Values: []string{fmt.Sprintf("u%d", i)}}
		}
		return l
	}
	cases := []struct {
		name string
		q    search.Query
		code string
	}{
		{"the words at the limit", search.Query{Terms: words(search.MaxTerms), Size: 10}, ""},
		{"the filters at the limit, one clause each", search.Query{Filters: filters(search.MaxFilterValues), Size: 10}, ""},
		{"words and filters at the limit", search.Query{Terms: append(words(search.MaxTerms-1), "customer"), Filters: filters(search.MaxFilterValues), Size: 10}, ""},
		{"10,000 words", search.Query{Terms: words(10000), Size: 10}, meridian.EInvalid},
		{"1,000 filters", search.Query{Filters: filters(1000), Size: 10}, meridian.EInvalid},
		{"a word too long", search.Query{Terms: []string{strings.Repeat("a", search.MaxTermLength+1)}, Size: 10}, meridian.EInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.E.Search(f.Ctx, f.Admin, c.q)
			WantCode(t, err, c.code)
			// Below the engine, the driver holds the same bounds.
			Read(t, f.Driver, func(tx store.Tx) error {
				_, err := tx.Search(f.Ctx, c.q)
				WantCode(t, err, c.code)
				return nil
			})
		})
	}
}

// racyDriver makes every entity update meet a concurrent change: just before the
// engine's Update, another write moves the stored version on.
type racyDriver struct{ store.Driver }

func (d racyDriver) Begin(ctx context.Context, writable bool) (store.Tx, error) {
	tx, err := d.Driver.Begin(ctx, writable)
	return racyTx{tx}, err
}

type racyTx struct{ store.Tx }

func (t racyTx) Update(ctx context.Context, r store.Row, expect meridian.Version) error {
	if err := t.Tx.Update(ctx, r, expect); err != nil {
		return err
	}
	return t.Tx.Update(ctx, r, expect)
}

func testConcurrentChangeWithoutIfMatchIs409(t *testing.T, f *Fixture) {
	g := f.Create("glossary", `{"name":"g","description":"one"}`)
	racy := store.New(store.Config{Driver: racyDriver{f.Driver}, Registry: meridian.DefaultRegistry(), Validator: f.valid})
	patch := []byte(`[{"op":"replace","path":"/description","value":"two"}]`)
	_, err := racy.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), patch, "")
	WantCode(t, err, meridian.EConflict)
	_, err = racy.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), patch, store.ETag(g))
	WantCode(t, err, meridian.EConflict) // If-Match held when read; the race came after
	_, err = f.E.Patch(f.Ctx, f.Admin, "glossary", store.ByID(g.ID()), patch, `"`+g.ID()+`:9.9"`)
	WantCode(t, err, meridian.EPreconditionFailed)
}

func testTableTypeDefaultsToRegular(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("orders", `[{"name":"id","dataType":"INT"}]`)
	if got := tbl.String("tableType"); got != "Regular" {
		t.Fatalf("tableType = %q, want Regular", got)
	}
	view := f.Create("table", `{"name":"v","databaseSchema":"svc.db.sch","tableType":"View","columns":[{"name":"id","dataType":"INT"}]}`)
	if got := view.String("tableType"); got != "View" {
		t.Fatalf("tableType = %q, want View", got)
	}
}

func testFQNWithNUL(t *testing.T, f *Fixture) {
	f.Create("glossary", `{"name":"g","description":"one"}`)
	_, err := f.E.Get(f.Ctx, f.Admin, "glossary", store.ByFQN("g\x00"), store.GetOptions{})
	WantCode(t, err, meridian.ENotFound)
	patch := []byte(`[{"op":"replace","path":"/description","value":"two"}]`)
	_, err = f.E.Patch(f.Ctx, f.Admin, "glossary", store.ByFQN("a\x00b"), patch, "")
	WantCode(t, err, meridian.ENotFound)
}
