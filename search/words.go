package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words splits text into lower-case search words: runs of letters and digits, with
// snake_case and camelCase names split into their words ("customerOrders" and
// "customer_orders" both give "customer", "orders"). Queries and documents go through
// the same function, so both sides agree on the tokens.
//
// A run splits where a lower-case letter meets an upper-case one ("customerOrder"),
// where letters meet digits either way ("orders2024", "2024orders"), and before the
// last of several upper-case letters that a lower-case one follows ("HTTPServer" gives
// "HTTP", "Server"). It is one pass over text: each word is a slice of text, copied
// only when lower-casing changes it.
func Words(text string) []string {
	var out []string
	start := -1   // where the current word starts; -1 outside a run
	var prev rune // the rune before i, in the current run
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, strings.ToLower(text[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 && wordBoundary(prev, r, text[i+utf8.RuneLen(r):]) {
			out = append(out, strings.ToLower(text[start:i]))
			start = i
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, strings.ToLower(text[start:]))
	}
	return out
}

// wordBoundary reports whether a run of letters and digits splits between prev and
// cur, with rest the text after cur.
func wordBoundary(prev, cur rune, rest string) bool {
	switch {
	case unicode.IsLower(prev) && unicode.IsUpper(cur),
		unicode.IsLetter(prev) && unicode.IsDigit(cur),
		unicode.IsDigit(prev) && unicode.IsLetter(cur):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(cur):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}
