package search

import (
	"strings"
	"unicode"
)

// Words splits text into lower-case search words: runs of letters and digits, with
// snake_case and camelCase names split into their words ("customerOrders" and
// "customer_orders" both give "customer", "orders"). Queries and documents go through
// the same function, so both sides agree on the tokens.
func Words(text string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, w := range splitCamel(tok) {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// splitCamel splits "customerOrderID2024" into "customer", "Order", "ID", "2024".
func splitCamel(s string) []string {
	r := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(r); i++ {
		prev, cur := r[i-1], r[i]
		boundary := (unicode.IsLower(prev) && unicode.IsUpper(cur)) ||
			(unicode.IsLetter(prev) && unicode.IsDigit(cur)) || (unicode.IsDigit(prev) && unicode.IsLetter(cur)) ||
			(unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(r) && unicode.IsLower(r[i+1]))
		if boundary {
			out = append(out, string(r[start:i]))
			start = i
		}
	}
	return append(out, string(r[start:]))
}
