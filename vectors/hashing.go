package vectors

import (
	"context"
	"math"
	"sync"

	"github.com/meridian-catalog/meridian/search"
)

// HashingModel is the model id of the hashing embedder.
const HashingModel = "hashing-v1"

// HashingDimension is the hashing embedder's dimension.
const HashingDimension = 512

// Hashing is a weightless feature-hashing embedder: every word of the text (split as
// search.Words splits it, search's stop words left out) and every character 3-
// and 4-gram of each word is hashed to a signed position of a 512-d vector, weighted
// by its count (sublinear: 1 + ln tf), and the vector is L2-normalised. It needs no
// model file, is deterministic across machines and runs, and catches plurals, typos and
// shared word stems through the n-grams. It is the fallback embedder and the one tests
// use. A text with no words gives the zero vector.
type Hashing struct{}

var _ Embedder = Hashing{}

// Model returns HashingModel.
func (Hashing) Model() string { return HashingModel }

// Dimension returns HashingDimension.
func (Hashing) Dimension() int { return HashingDimension }

// Embed embeds each text. It never fails, except when ctx has ended.
func (h Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.embed(t)
	}
	return out, nil
}

// Feature weights: a whole word counts more than one of its n-grams.
const (
	wordWeight  = 1.0
	ngramWeight = 0.35
)

// feature is the count of one hashed feature of a text.
type feature struct {
	gram bool // a character n-gram, not a word
	tf   int
}

// FNV-1a, 64-bit: each feature is hashed as its bytes (an n-gram's after a 1 byte),
// without allocating them.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// fnvGram is the hash state after the 1 byte that starts an n-gram.
var fnvGram = fnvString(fnvOffset, "\x01")

// fnvString continues the FNV-1a hash h over the bytes of s.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// maxPooledFeatures is the most features of a counts map kept for the next embed.
const maxPooledFeatures = 1 << 12

// scratch is what one embed works in; embedScratch keeps them between calls, so an
// embed allocates only its answer.
type scratch struct {
	counts map[uint64]feature
	offs   []int
	v      []float64
}

var embedScratch = sync.Pool{New: func() any {
	return &scratch{counts: map[uint64]feature{}, v: make([]float64, HashingDimension)}
}}

// embed counts the features of text by their hash (two features differ by their
// 64-bit hash, as their position and sign are taken from it), then adds each to its
// position.
func (Hashing) embed(text string) []float32 {
	words := search.Words(text)
	sc := embedScratch.Get().(*scratch)
	defer func() {
		if len(sc.counts) > maxPooledFeatures { // a map does not shrink: start small again
			sc.counts = map[uint64]feature{}
		}
		embedScratch.Put(sc)
	}()
	counts, offs, v := sc.counts, sc.offs[:0], sc.v
	clear(counts)
	clear(v)
	for _, w := range words {
		if search.IsStopWord(w) {
			continue
		}
		x := fnvString(fnvOffset, w)
		counts[x] = feature{tf: counts[x].tf + 1}
		// The n-grams are of the word's runes between < and >, each rune as UTF-8
		// (an invalid byte as U+FFFD): offs[i] is where rune i starts in g.
		g := string([]rune("<" + w + ">"))
		offs = offs[:0]
		for i := range g {
			offs = append(offs, i)
		}
		offs = append(offs, len(g))
		runes := len(offs) - 1
		for n := 3; n <= 4; n++ {
			for i := 0; i+n <= runes; i++ {
				x := fnvString(fnvGram, g[offs[i]:offs[i+n]])
				counts[x] = feature{gram: true, tf: counts[x].tf + 1}
			}
		}
	}
	sc.offs = offs
	for x, f := range counts {
		w := wordWeight
		if f.gram {
			w = ngramWeight
		}
		w *= 1 + math.Log(float64(f.tf))
		if x>>63 == 1 {
			w = -w
		}
		v[x%HashingDimension] += w
	}
	return normalise(v)
}

func normalise(v []float64) []float32 {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}
