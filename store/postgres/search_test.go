package postgres

import (
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// TestSearchBeyondTheContract covers what PostgreSQL's search does beyond the driver
// contract (store/storetest runs the rest): a single misspelt word falls back to a
// trigram match on names, aggregated like any match, and a term that is not a word is
// refused.
func TestSearchBeyondTheContract(t *testing.T) {
	db, _ := openTemp(t)
	storetest.IndexSearchDocs(t, db)
	words := func(w ...string) search.Query { return search.Query{Terms: w, Size: 10} }
	typo := words("custmer")
	typo.Aggregations = []search.Field{search.FieldEntityType, search.FieldService}
	storetest.RunSearchCases(t, db, []storetest.SearchCase{
		{Name: "a typo still finds the name", Q: words("custmer"), Want: "cu,co", Total: 2},
		{Name: "a typo's matches are aggregated", Q: typo, Want: "cu,co", Total: 2, Aggs: "entityType=table:2; service=mysql_prod:1"},
		{Name: "no fuzzy match for nonsense", Q: words("zqxw"), Want: "", Total: 0},
		{Name: "no fuzzy match for several words", Q: words("custmer", "ordrs"), Want: "", Total: 0},
		{Name: "a term that is not a word is invalid", Q: words("x' | y:*"), Code: meridian.EInvalid},
	})
}
