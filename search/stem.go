package search

import (
	"strings"
	"sync"
	"sync/atomic"

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
	if len(w) > maxStemmedLen {
		return english.Stem(w, true)
	}
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if stemCount.Load() < maxStems && stemCount.Add(1) <= maxStems {
		stems.Store(strings.Clone(w), s)
	}
	return s
}

// The stems already computed, by word: a catalog repeats the same words (column names,
// descriptions) across thousands of entities, and stemming them was a third of the CPU
// of writing an entity's keyword index entry. At most maxStems words of at most maxStemmedLen bytes are kept, so the
// memory stays bounded whatever is indexed.
var (
	stems     sync.Map // word → stem
	stemCount atomic.Int64
)

const (
	maxStems      = 1 << 17
	maxStemmedLen = 40
)

// StemText stems each space-separated word of text, as the keyword index stores it.
func StemText(text string) string {
	var b strings.Builder
	b.Grow(len(text)) // stems are about as long as their words
	for w := range strings.FieldsSeq(text) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Stem(w))
	}
	return b.String()
}
