package elastic

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

func TestParseJoinsTheFiltersOfQAndQueryFilter(t *testing.T) {
	q, err := Parse("orders tags.tagFQN:PII.Sensitive", `{"term":{"owners.name":"alice"}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := search.Query{Terms: []string{"orders"}, Filters: []search.Filter{
		{Field: search.FieldTags, Values: []string{"PII.Sensitive"}}, {Field: search.FieldOwners, Values: []string{"alice"}}}}
	if !reflect.DeepEqual(q, want) {
		t.Fatalf("got %+v, want %+v", q, want)
	}
	for _, bad := range [][2]string{{"NOT x", ""}, {"x", `{"range":{}}`}} {
		if _, err := Parse(bad[0], bad[1]); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("Parse(%q, %q) = %v, want EInvalid", bad[0], bad[1], err)
		}
	}
}

func TestAnswerHasElasticsearchShape(t *testing.T) {
	res := search.Result{Total: 7, Hits: []search.Hit{
		{ID: "a", Kind: "databaseSchema", FQN: "s.d.a", Score: 9.5, Source: []byte(`{"name":"a"}`)},
		{ID: "b", Kind: "table", FQN: "s.d.a.b", Score: 2, Source: []byte(`{"name":"b"}`)},
	}}
	got, err := json.Marshal(Answer(meridian.DefaultRegistry(), res, 1500*time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"took":1,"timed_out":false,"hits":{"total":{"value":7,"relation":"eq"},"max_score":9.5,"hits":[` +
		`{"_index":"database_schema_search_index","_id":"a","_score":9.5,"_source":{"name":"a"}},` +
		`{"_index":"table_search_index","_id":"b","_score":2,"_source":{"name":"b"}}]}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	empty, _ := json.Marshal(Answer(meridian.DefaultRegistry(), search.Result{Hits: []search.Hit{}}, 0))
	if want := `{"took":0,"timed_out":false,"hits":{"total":{"value":0,"relation":"eq"},"max_score":null,"hits":[]}}`; string(empty) != want {
		t.Fatalf("empty answer %s, want %s", empty, want)
	}
	capped, _ := json.Marshal(Answer(meridian.DefaultRegistry(), search.Result{Hits: []search.Hit{}, Total: 10000, TotalAtLeast: true}, 0))
	if want := `{"took":0,"timed_out":false,"hits":{"total":{"value":10000,"relation":"gte"},"max_score":null,"hits":[]}}`; string(capped) != want {
		t.Fatalf("capped answer %s, want %s", capped, want)
	}
}
