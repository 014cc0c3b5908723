package elastic

import (
	"strings"
	"testing"
	"unicode"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// FuzzParseQueryFilter: whatever the filter, parsing answers EInvalid or filters that
// the search service accepts.
func FuzzParseQueryFilter(f *testing.F) {
	for _, s := range []string{
		`{"query":{"bool":{"must":[{"term":{"entityType":"table"}}]}}}`,
		`{"bool":{"should":[{"term":{"owners.name":"a"}},{"terms":{"owners.name":["b"]}}],"minimum_should_match":1}}`,
		`{"terms":{"tags.tagFQN":["PII.Sensitive"],"boost":2}}`,
		`{"match":{"domains":{"query":"Sales"}}}`,
		`{"range":{"updatedAt":{"gte":1}}}`,
		`{"query":`, `[]`, `{"bool":{"must":{"bool":{"filter":[{"term":{"deleted":true}}]}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		filters, err := ParseQueryFilter(s)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("ParseQueryFilter(%q) error code %q", s, meridian.ErrorCode(err))
			}
			return
		}
		if err := (search.Query{Filters: filters}).Validate(); err != nil {
			t.Fatalf("ParseQueryFilter(%q) gave filters %+v that are invalid: %v", s, filters, err)
		}
	})
}

// FuzzParseSearchQuery: whatever q, parsing answers EInvalid or search words (letters
// and digits, as every driver takes them) and filters the search service accepts.
func FuzzParseSearchQuery(f *testing.F) {
	for _, s := range []string{"customer orders", "tags.tagFQN:PII.Sensitive AND orders", "*", `"quoted phrase"`, "NOT x", "a:b:c", "ünïcode_snake caseCamel"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms, filters, err := ParseSearchQuery(s)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("ParseSearchQuery(%q) error code %q", s, meridian.ErrorCode(err))
			}
			return
		}
		for _, term := range terms {
			if term == "" || strings.IndexFunc(term, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
				t.Fatalf("ParseSearchQuery(%q) gave the term %q, not letters and digits", s, term)
			}
		}
		if err := (search.Query{Terms: terms, Filters: filters}).Validate(); err != nil {
			t.Fatalf("ParseSearchQuery(%q) gave an invalid query: %v", s, err)
		}
	})
}
