package search

import (
	"strings"
	"testing"

	"github.com/kljensen/snowball/english"
)

func TestStemAnswersAlikeFromItsCache(t *testing.T) {
	long := strings.Repeat("organisational", 4)
	for _, w := range []string{"ordering", "customers", "companies", "payments", long} {
		want := english.Stem(w, true)
		for i := range 3 {
			if got := Stem(w); got != want {
				t.Errorf("Stem(%s), call %d = %s, want %s", w, i+1, got, want)
			}
		}
	}
}

func TestStemCacheStaysBounded(t *testing.T) {
	// Words without a digit, all different, longer than three letters: each is stemmed.
	for i := range maxStems + 100 {
		var b strings.Builder
		for n := i; ; n /= 26 {
			b.WriteByte(byte('a' + n%26))
			if n < 26 {
				break
			}
		}
		Stem("word" + b.String() + "ing")
	}
	var n int
	stems.Range(func(any, any) bool { n++; return true })
	if n > maxStems {
		t.Errorf("the cache holds %d stems, want at most %d", n, maxStems)
	}
}
