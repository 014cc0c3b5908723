package elastic

import (
	"reflect"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

const supported = ". Supported: match_all, term/terms/match, bool.must/bool.filter, and bool.should on one field, on entityType, " +
	"service.name, tags.tagFQN, owners.name, domains.fullyQualifiedName, deleted"

func TestParseQueryFilter(t *testing.T) {
	f := func(field search.Field, values ...string) search.Filter {
		return search.Filter{Field: field, Values: values}
	}
	ok := []struct {
		name, in string
		want     []search.Filter
	}{
		{"empty", ``, nil},
		{"blank", "  ", nil},
		{"match_all", `{"query":{"match_all":{}}}`, nil},
		{"bare match_all", `{"match_all":{}}`, nil},
		{"term", `{"query":{"term":{"entityType":"table"}}}`, []search.Filter{f("entityType", "table")}},
		{"bare term", `{"term":{"entityType":"table"}}`, []search.Filter{f("entityType", "table")}},
		{"term value object", `{"term":{"service.name":{"value":"mysql","boost":1.0}}}`, []search.Filter{f("service", "mysql")}},
		{"keyword suffix", `{"term":{"service.name.keyword":"mysql"}}`, []search.Filter{f("service", "mysql")}},
		{"service", `{"term":{"service":"mysql"}}`, []search.Filter{f("service", "mysql")}},
		{"terms", `{"terms":{"tags.tagFQN":["PII.Sensitive","Tier.Tier1"]}}`, []search.Filter{f("tags", "PII.Sensitive", "Tier.Tier1")}},
		{"terms with boost", `{"terms":{"owners.name":["alice"],"boost":2}}`, []search.Filter{f("owners", "alice")}},
		{"match", `{"match":{"owners.displayName":"Alice"}}`, []search.Filter{f("owners", "Alice")}},
		{"match query object", `{"match":{"domains.fullyQualifiedName":{"query":"Sales"}}}`, []search.Filter{f("domains", "Sales")}},
		{"owners", `{"term":{"owners":"alice"}}`, []search.Filter{f("owners", "alice")}},
		{"domains", `{"term":{"domains":"Sales"}}`, []search.Filter{f("domains", "Sales")}},
		{"deleted bool", `{"term":{"deleted":true}}`, []search.Filter{f("deleted", "true")}},
		{"deleted string", `{"term":{"deleted":"False"}}`, []search.Filter{f("deleted", "false")}},
		{"number value", `{"term":{"entityType":5}}`, []search.Filter{f("entityType", "5")}},
		{"bool must list", `{"query":{"bool":{"must":[{"term":{"entityType":"table"}},{"term":{"owners.name":"alice"}}]}}}`,
			[]search.Filter{f("entityType", "table"), f("owners", "alice")}},
		{"bool must single", `{"query":{"bool":{"must":{"term":{"entityType":"table"}}}}}`, []search.Filter{f("entityType", "table")}},
		{"bool filter and must", `{"bool":{"filter":[{"terms":{"entityType":["table","topic"]}}],"must":[{"match_all":{}}]}}`,
			[]search.Filter{f("entityType", "table", "topic")}},
		{"nested bool", `{"query":{"bool":{"must":[{"bool":{"filter":{"term":{"deleted":false}}}}]}}}`, []search.Filter{f("deleted", "false")}},
		{"empty bool", `{"query":{"bool":{}}}`, nil},
		{"should as the UI's multi-select", `{"query":{"bool":{"must":[{"bool":{"should":[{"term":{"owners.displayName.keyword":"alice"}},{"term":{"owners.displayName.keyword":"bob"}}]}}]}}}`,
			[]search.Filter{f("owners", "alice", "bob")}},
		{"should with terms", `{"bool":{"should":[{"terms":{"tags.tagFQN":["PII.Sensitive"]}},{"match":{"tags.tagFQN":"Tier.Tier1"}}]}}`,
			[]search.Filter{f("tags", "PII.Sensitive", "Tier.Tier1")}},
		{"should beside must with minimum 1", `{"bool":{"must":{"term":{"entityType":"table"}},"should":[{"term":{"service.name":"a"}}],"minimum_should_match":1}}`,
			[]search.Filter{f("entityType", "table"), f("service", "a")}},
	}
	for _, c := range ok {
		got, err := ParseQueryFilter(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}

	bad := []struct {
		name, in, msg string
	}{
		{"malformed", `{"query":`, "malformed JSON (unexpected EOF)"},
		{"trailing data", `{"term":{"entityType":"table"}} {}`, "malformed JSON (data after the top-level value)"},
		{"not an object", `["term"]`, "the filter must be a JSON object"},
		{"query not an object", `{"query":"x"}`, "query must be a JSON object"},
		{"keys beside query", `{"query":{"match_all":{}},"size":5}`, "keys beside query (size)"},
		{"should across fields", `{"query":{"bool":{"should":[{"term":{"entityType":"table"}},{"term":{"owners.name":"a"}}]}}}`, "bool.should across fields entityType and owners (one field only)"},
		{"should beside must", `{"bool":{"must":{"term":{"entityType":"table"}},"should":[{"term":{"service.name":"a"}}]}}`, "bool.should beside must or filter without minimum_should_match 1"},
		{"should with a bool", `{"bool":{"should":[{"bool":{"must":[]}}]}}`, "bool.should with bool (only term, terms or match on one field)"},
		{"empty should", `{"bool":{"should":[]}}`, "an empty bool.should"},
		{"must_not", `{"query":{"bool":{"must_not":{"term":{"deleted":true}}}}}`, "bool.must_not"},
		{"empty query type (found by fuzzing)", `{"":{"":0}}`, "a clause in query with an empty query type"},
		{"empty should item (found by fuzzing)", `{"bool":{"should":[{}]}}`, "bool.should items must be non-empty objects"},
		{"empty field name", `{"term":{"":"x"}}`, "term on an empty field name"},
		{"minimum_should_match 2", `{"bool":{"should":[{"term":{"entityType":"table"}}],"minimum_should_match":2}}`, "bool.minimum_should_match 2 (only 1)"},
		{"minimum_should_match alone", `{"bool":{"must":[],"minimum_should_match":1}}`, "bool.minimum_should_match without should"},
		{"range", `{"query":{"range":{"updatedAt":{"gte":1}}}}`, "range on updatedAt"},
		{"wildcard", `{"wildcard":{"name":"ord*"}}`, "wildcard on name"},
		{"query_string", `{"query_string":{"query":"x"}}`, "query_string on query"},
		{"unknown field", `{"term":{"columns.name":"id"}}`, "term on columns.name"},
		{"unknown field in bool", `{"bool":{"must":[{"term":{"entityType":"table"}},{"terms":{"tier":["x"]}}]}}`, "terms on tier"},
		{"two operators", `{"term":{"entityType":"table"},"match_all":{}}`, "a clause in query with several keys (match_all, term)"},
		{"empty clause", `{"bool":{"must":[{}]}}`, "an empty clause in bool.must"},
		{"two fields", `{"term":{"entityType":"table","deleted":false}}`, "term on several fields (deleted, entityType)"},
		{"terms not array", `{"terms":{"entityType":"table"}}`, "terms on entityType needs a non-empty array of values"},
		{"terms empty", `{"terms":{"entityType":[]}}`, "terms on entityType needs a non-empty array of values"},
		{"object value", `{"term":{"entityType":{"gte":"a"}}}`, `term on entityType: only {"value": value} is supported`},
		{"array value", `{"term":{"entityType":["a"]}}`, "term on entityType with a value that is not a string, number or boolean"},
		{"null value", `{"term":{"entityType":null}}`, "term on entityType with a value that is not a string, number or boolean"},
		{"bad deleted", `{"term":{"deleted":"maybe"}}`, `term on deleted with "maybe" (use true or false)`},
		{"bool not object", `{"bool":[]}`, "bool must be an object"},
		{"bool item not object", `{"bool":{"filter":["x"]}}`, "bool.filter items must be objects"},
	}
	for _, c := range bad {
		_, err := ParseQueryFilter(c.in)
		if meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("%s: error %v, want EInvalid", c.name, err)
			continue
		}
		if got, want := meridian.ErrorMessage(err), "Unsupported query_filter: "+c.msg+supported; got != want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, want)
		}
	}
}
