package elastic

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

func must(n int) string {
	clauses := make([]string, n)
	for i := range clauses {
		clauses[i] = fmt.Sprintf(`{"term":{"owners.name":"u%d"}}`, i)
	}
	return `{"query":{"bool":{"must":[` + strings.Join(clauses, ",") + `]}}}`
}

func nested(depth int) string {
	return strings.Repeat(`{"bool":{"must":`, depth) + `{"term":{"entityType":"table"}}` + strings.Repeat("}}", depth)
}

func TestParseBoundsTheQueryAndTheFilter(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }
	terms := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf(`"t%d"`, i)
		}
		return `{"terms":{"tags.tagFQN":[` + strings.Join(v, ",") + `]}}`
	}
	cases := []struct{ name, q, filter, msg string }{
		{"the words at the limit", words(search.MaxTerms), "", ""},
		{"10,000 words", words(10000), "", "q is longer than the maximum of 1000 characters"},
		{"too many words", words(search.MaxTerms + 1), "", "q has more than the maximum of 32 words"},
		{"a long query of few words", strings.TrimSpace(strings.Repeat(strings.Repeat("é", 124)+" ", 8)), "", ""},
		{"field filters count", strings.Repeat("owners.name:a ", search.MaxFilterValues+1), "", "Search filters have 65 values, more than the maximum of 64"},
		{"the clauses at the limit", "", must(MaxFilterClauses - 2), ""},
		{"1,000 bool.must terms", "", must(1000), "query_filter"},
		{"too many clauses", "", must(MaxFilterClauses), "query_filter has more than the maximum of 64 clauses"},
		{"too many values", "", terms(search.MaxFilterValues + 1), "query_filter has more than the maximum of 64 values"},
		{"nesting at the limit", "", nested(MaxFilterDepth - 1), ""},
		{"too deep", "", nested(MaxFilterDepth), "deeper than the maximum of 8 levels"},
		{"too large", "", `{"term":{"owners.name":"` + strings.Repeat("a", MaxFilterBytes) + `"}}`, "larger than the maximum of 16384 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := Parse(c.q, c.filter)
			if err == nil {
				err = q.Validate()
			}
			if c.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(meridian.ErrorMessage(err), c.msg) {
				t.Fatalf("got %v, want an invalid error containing %q", err, c.msg)
			}
		})
	}
}
