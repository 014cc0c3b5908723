package elastic

import (
	"reflect"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

func TestParseSearchQuery(t *testing.T) {
	cases := []struct {
		in      string
		terms   []string
		filters []search.Filter
	}{
		{"", nil, nil},
		{"*", nil, nil},
		{"  ", nil, nil},
		{"customer_orders", []string{"customer", "orders"}, nil},
		{"customerOrders", []string{"customer", "orders"}, nil},
		{"cust*", []string{"cust"}, nil},
		{`customer AND orders OR x && y || z`, []string{"customer", "orders", "x", "y", "z"}, nil},
		{`"customer orders"`, []string{"customer", "orders"}, nil},
		{"(a) [b] {c} ~d ^e +f", []string{"a", "b", "c", "d", "e", "f"}, nil},
		{"columnNames:address", []string{"address"}, nil},
		{"name:*", nil, nil},
		{"orders tags.tagFQN:PII.Sensitive", []string{"orders"}, []search.Filter{{Field: "tags", Values: []string{"PII.Sensitive"}}}},
		{`owners.name:"alice" entityType:table`, nil,
			[]search.Filter{{Field: "owners", Values: []string{"alice"}}, {Field: "entityType", Values: []string{"table"}}}},
		{"deleted:TRUE", nil, []search.Filter{{Field: "deleted", Values: []string{"true"}}}},
		{"12:30", []string{"12", "30"}, nil},
	}
	for _, c := range cases {
		terms, filters, err := ParseSearchQuery(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(terms, c.terms) || !reflect.DeepEqual(filters, c.filters) {
			t.Errorf("%q: got %q %+v, want %q %+v", c.in, terms, filters, c.terms, c.filters)
		}
	}
	for _, in := range []string{"a NOT b", "a -b", "!a", "deleted:maybe"} {
		if _, _, err := ParseSearchQuery(in); meridian.ErrorCode(err) != meridian.EInvalid {
			t.Errorf("%q: error %v, want EInvalid", in, err)
		}
	}
}
