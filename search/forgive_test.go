package search

import (
	"slices"
	"testing"
)

func TestStemJoinsInflectionsAndKeepsAbbreviations(t *testing.T) {
	for _, group := range [][]string{
		{"order", "orders", "ordered", "ordering"},
		{"customer", "customers"},
		{"company", "companies"},
		{"payment", "payments"},
	} {
		for _, w := range group[1:] {
			if Stem(w) != Stem(group[0]) {
				t.Errorf("Stem(%s) = %s, Stem(%s) = %s", w, Stem(w), group[0], Stem(group[0]))
			}
		}
	}
	for _, w := range []string{"fct", "dim", "ltv", "v2", "2024", "q4s"} {
		if Stem(w) != w {
			t.Errorf("Stem(%s) = %s, want it unchanged", w, Stem(w))
		}
	}
	if got := StemText("customer orders  ordered"); got != "custom order order" {
		t.Errorf("StemText = %q", got)
	}
}

func TestKeywordsDropStopWordsUnlessNothingElseIsLeft(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"which", "table", "has", "customer", "orders", "orders"}, []string{"customer", "orders"}},
		{[]string{"the", "data", "the"}, []string{"the", "data"}},
		{[]string{"", "ltv"}, []string{"ltv"}},
		{nil, nil},
	} {
		if got := Keywords(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Keywords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEditDistanceCountsSwapsAsOneEdit(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"ordrs", "orders", 1, 1},
		{"custmer", "customer", 1, 1},
		{"cusotmer", "customer", 2, 1},
		{"invoice", "invoice", 1, 0},
		{"abc", "abcdef", 2, 3},     // lengths too far apart
		{"kitten", "sitting", 2, 3}, // 3 edits, above the limit
		{"straße", "strase", 1, 1},
	} {
		if got := EditDistance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("EditDistance(%s, %s, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}

func TestCorrectionsPreferCloseThenFrequentWords(t *testing.T) {
	vocab := []WordCount{{"orders", 3}, {"ordrs", 0}, {"ordres", 9}, {"borders", 50}, {"order", 1}, {"other", 100}}
	// ordrs is skipped (the word itself); ordres and orders are one edit away (ordres
	// the more frequent); borders and order are two, other more.
	if got := Corrections("ordrs", vocab); !slices.Equal(got, []string{"ordres", "orders"}) {
		t.Errorf("Corrections(ordrs) = %q", got)
	}
	if got := Corrections("ord", vocab); got != nil {
		t.Errorf("a short word is corrected: %q", got)
	}
	if MaxEdits("abc") != 0 || MaxEdits("orders") != 1 || MaxEdits("customers") != 2 {
		t.Error("MaxEdits")
	}
}
