package store

import (
	"reflect"
	"testing"
)

func TestSearchWordsSplitsSnakeAndCamelCase(t *testing.T) {
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
		if got := SearchWords(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SearchWords(%q) = %q, want %q", in, got, want)
		}
	}
}
