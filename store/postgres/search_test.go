package postgres

import (
	"context"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// TestSearchBeyondTheContract covers what PostgreSQL's search does beyond the driver
// contract (store/storetest runs the rest, typo correction included): a single word
// that matches nothing even corrected (here a typo in its first letter, which the
// vocabulary does not reach) falls back to a trigram match on names, aggregated like
// any match, and a term that is not a word is refused.
func TestSearchBeyondTheContract(t *testing.T) {
	db, _ := openTemp(t)
	storetest.IndexSearchDocs(t, db)
	words := func(w ...string) search.Query { return search.Query{Terms: w, Size: 10} }
	typo := words("xustomer")
	typo.Aggregations = []search.Field{search.FieldEntityType, search.FieldService}
	storetest.RunSearchCases(t, db, []storetest.SearchCase{
		{Name: "a first-letter typo still finds the name", Q: words("xustomer"), Want: "cu", Total: 1},
		{Name: "a typo's matches are aggregated", Q: typo, Want: "cu", Total: 1, Aggs: "entityType=table:1; service="},
		{Name: "no fuzzy match for nonsense", Q: words("zqxw"), Want: "", Total: 0},
		{Name: "no fuzzy match for several words", Q: words("xustomer", "zqxw"), Want: "", Total: 0, Relaxed: true},
		{Name: "a term that is not a word is invalid", Q: words("x' | y:*"), Code: meridian.EInvalid},
	})
}

// A search's statements are planned for their parameters, never on a generic plan
// (see tx.Search), and only within the search's transaction.
func TestASearchPlansItsStatementsForTheirParameters(t *testing.T) {
	db, _ := openTemp(t)
	storetest.IndexSearchDocs(t, db)
	ctx := context.Background()
	setting := func(tx store.Tx) string {
		t.Helper()
		var mode string
		if err := tx.SQL().QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return mode
	}
	tx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	before := setting(tx)
	if _, err := tx.Search(ctx, search.Query{Terms: []string{"customer"}, Size: 10}); err != nil {
		t.Fatal(err)
	}
	if got := setting(tx); got != "force_custom_plan" {
		t.Errorf("plan_cache_mode in the search's transaction = %q, want force_custom_plan", got)
	}
	tx.Rollback()
	next, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Rollback()
	if got := setting(next); got != before {
		t.Errorf("plan_cache_mode after the search's transaction = %q, want %q as before", got, before)
	}
}
