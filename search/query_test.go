package search

import (
	"testing"

	"github.com/meridian-catalog/meridian"
)

func TestValidateBoundsEveryPartOfAQuery(t *testing.T) {
	valid := []Query{
		{},
		{Text: "customer orders", K: MaxK, Threshold: 1},
		{Mode: Keyword, Terms: []string{"orders"}, Kinds: []string{"table"}, From: MaxWindow - MaxSize, Size: MaxSize},
		{Filters: []Filter{{Field: FieldDeleted, Values: []string{"TRUE", "false"}}, {Field: FieldTags, Values: []string{"PII.Sensitive"}}}},
		{Aggregations: []Field{FieldEntityType, FieldService, FieldTags, FieldOwners, FieldDomains}, Buckets: MaxBuckets},
	}
	for _, q := range valid {
		if err := q.Validate(); err != nil {
			t.Errorf("%+v: %v", q, err)
		}
	}
	invalid := []struct {
		q   Query
		msg string
	}{
		{Query{Mode: "hybrid"}, `Unsupported search mode "hybrid" (supported: keyword)`},
		{Query{K: MaxK + 1}, "Search k must be between 0 and 1000"},
		{Query{Threshold: 1.5}, "Search threshold must be between 0.0 and 1.0"},
		{Query{From: -1}, "Search from must be at least 0"},
		{Query{Size: -1}, "Search size must be between 0 and 1000"},
		{Query{Size: MaxSize + 1}, "Search size must be between 0 and 1000"},
		{Query{From: MaxWindow, Size: 1}, "Search from + size must be at most 10000"},
		{Query{Buckets: MaxBuckets + 1}, "Search buckets must be between 0 and 100"},
		{Query{Filters: []Filter{{Field: "tier", Values: []string{"x"}}}}, "Unsupported search filter field tier"},
		{Query{Filters: []Filter{{Field: FieldOwners}}}, "Search filter on owners has no values"},
		{Query{Filters: []Filter{{Field: FieldDeleted, Values: []string{"maybe"}}}}, `Invalid deleted filter value "maybe" (use true or false)`},
		{Query{Aggregations: []Field{FieldDeleted}}, "Unsupported search aggregation deleted"},
	}
	for _, c := range invalid {
		err := c.q.Validate()
		if meridian.ErrorCode(err) != meridian.EInvalid || meridian.ErrorMessage(err) != c.msg {
			t.Errorf("%+v: error %v, want EInvalid %q", c.q, err, c.msg)
		}
	}
}

func TestBucketLimitDefaults(t *testing.T) {
	if got := (Query{}).BucketLimit(); got != DefaultBuckets {
		t.Errorf("default = %d", got)
	}
	if got := (Query{Buckets: 3}).BucketLimit(); got != 3 {
		t.Errorf("3 = %d", got)
	}
}
