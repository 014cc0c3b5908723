package search

import (
	"strings"

	"github.com/kljensen/snowball/english"
)

// Stem returns the English stem of a lower-case word as Words makes them (Snowball's
// Porter2): "orders", "ordered" and "ordering" all give "order". Words with a digit
// and words of three letters or fewer ("fct", "ltv", "v2") are returned as they are.
// The keyword index and keyword queries go through it, so both sides agree.
func Stem(w string) string {
	if len(w) <= 3 || strings.ContainsAny(w, "0123456789") {
		return w
	}
	return english.Stem(w, true)
}

// StemText stems each space-separated word of text, as the keyword index stores it.
func StemText(text string) string {
	ws := strings.Fields(text)
	for i, w := range ws {
		ws[i] = Stem(w)
	}
	return strings.Join(ws, " ")
}
