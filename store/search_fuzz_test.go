package store

import (
	"testing"

	"github.com/meridian-catalog/meridian"
)

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
		driverFields := map[string]bool{}
		for _, f := range searchFields {
			driverFields[f] = true
		}
		for _, flt := range filters {
			if !driverFields[flt.Field] || len(flt.Values) == 0 {
				t.Fatalf("ParseQueryFilter(%q) gave filter %+v", s, flt)
			}
		}
	})
}

func FuzzParseSearchQuery(f *testing.F) {
	for _, s := range []string{"customer orders", "tags.tagFQN:PII.Sensitive AND orders", "*", `"quoted phrase"`, "NOT x", "a:b:c", "ünïcode_snake caseCamel"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms, _, err := ParseSearchQuery(s)
		if err != nil {
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("ParseSearchQuery(%q) error code %q", s, meridian.ErrorCode(err))
			}
			return
		}
		for _, term := range terms {
			if term == "" {
				t.Fatalf("ParseSearchQuery(%q) gave an empty term", s)
			}
		}
	})
}
