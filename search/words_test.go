package search

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
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

// wordsBefore is Words as first written (split into runs, then each run at its case
// and digit boundaries): the one-pass Words must give the same words.
func wordsBefore(text string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		r := []rune(tok)
		start := 0
		for i := 1; i < len(r); i++ {
			prev, cur := r[i-1], r[i]
			if (unicode.IsLower(prev) && unicode.IsUpper(cur)) ||
				(unicode.IsLetter(prev) && unicode.IsDigit(cur)) || (unicode.IsDigit(prev) && unicode.IsLetter(cur)) ||
				(unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(r) && unicode.IsLower(r[i+1])) {
				out = append(out, strings.ToLower(string(r[start:i])))
				start = i
			}
		}
		out = append(out, strings.ToLower(string(r[start:])))
	}
	return out
}

func FuzzWordsSplitsAsBefore(f *testing.F) {
	for _, s := range []string{"customer_orders", "CustomerOrderID", "HTTPServer", "orders2024 v2", "Überweisung-Daten",
		"ǅemal", "ABCdef", "a\xffB", "日本語Text123", "ΣΑΣ", "x1Y2z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Words(s), wordsBefore(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("Words(%q) = %q, split as before it is %q", s, got, want)
		}
	})
}
