package postgres

import (
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/storetest"
)

// TestSearchBeyondTheContract covers what PostgreSQL's search does beyond the driver
// contract (store/storetest runs the rest): a single misspelt word falls back to a
// trigram match on names, and a term that is not a word is refused.
func TestSearchBeyondTheContract(t *testing.T) {
	db, _ := openTemp(t)
	storetest.IndexSearchDocs(t, db)
	storetest.RunSearchCases(t, db, []storetest.SearchCase{
		{Name: "a typo still finds the name", Q: store.SearchQuery{Terms: []string{"custmer"}, Size: 10}, Want: "cu,co", Total: 2},
		{Name: "no fuzzy match for nonsense", Q: store.SearchQuery{Terms: []string{"zqxw"}, Size: 10}, Want: "", Total: 0},
		{Name: "no fuzzy match for several words", Q: store.SearchQuery{Terms: []string{"custmer", "ordrs"}, Size: 10}, Want: "", Total: 0},
		{Name: "a term that is not a word is invalid", Q: store.SearchQuery{Terms: []string{"x' | y:*"}, Size: 10}, Want: "", Total: 0, Code: meridian.EInvalid},
	})
}
