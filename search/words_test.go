package search

import (
	"reflect"
	"testing"
)

func TestWordsSplitsSnakeAndCamelCase(t *testing.T) {
	cases := map[string][]string{
		"customer_orders":        {"customer", "orders"},
		"customerOrders":         {"customer", "orders"},
		"CustomerOrderID":        {"customer", "order", "id"},
		"HTTPServer":             {"http", "server"},
		"orders2024 v2":          {"orders", "2024", "v", "2"},
		"warehouse.sales.public": {"warehouse", "sales", "public"},
		"Überweisung-Daten":      {"überweisung", "daten"},
		"":                       nil,
	}
	for in, want := range cases {
		if got := Words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}
