package postgres

import (
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
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
