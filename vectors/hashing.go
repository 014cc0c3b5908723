package vectors

import (
	"context"
	"math"
	"sync"
	"unicode/utf8"

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

// FNV-1a, 64-bit: each feature is hashed as its bytes (an n-gram's after a 1 byte),
// without allocating them.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// fnvGram is the hash state after the 1 byte that starts an n-gram.
var fnvGram = fnvString(fnvOffset, "\x01")

// fnvString continues the FNV-1a hash h over the bytes of s.
func fnvString[S ~string | ~[]byte](h uint64, s S) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// maxPooledFeatures is the most features a scratch keeps room for between embeds.
const maxPooledFeatures = 1 << 14

// scratch is what one embed works in; embedScratch keeps them between calls, so an
// embed allocates only its answer (and search.Words its words).
type scratch struct {
	words, grams []uint64 // the hashes of the features, one per occurrence
	gram         []byte   // the word between < and >, each rune as UTF-8
	offs         []int    // where each rune of gram starts, and its length
	tally        tally
	v            []float64
}

var embedScratch = sync.Pool{New: func() any {
	return &scratch{v: make([]float64, HashingDimension)}
}}

// embed hashes every occurrence of a feature of text (two features differ by their
// 64-bit hash, as their position and sign are taken from it), counts the occurrences
// of each feature, and adds each feature to its position once, weighted by its count.
func (Hashing) embed(text string) []float32 {
	words := search.Words(text)
	sc := embedScratch.Get().(*scratch)
	defer func() {
		if len(sc.tally.keys) > 2*maxPooledFeatures { // keep a pooled scratch small
			*sc = scratch{v: sc.v}
		}
		embedScratch.Put(sc)
	}()
	hw, hg, g, offs, v := sc.words[:0], sc.grams[:0], sc.gram, sc.offs, sc.v
	clear(v)
	for _, w := range words {
		if search.IsStopWord(w) {
			continue
		}
		hw = append(hw, fnvString(fnvOffset, w))
		// The n-grams are of the word's runes between < and >, each rune as UTF-8
		// (an invalid byte as U+FFFD): offs[i] is where rune i starts in g.
		g, offs = append(g[:0], '<'), append(offs[:0], 0)
		for _, r := range w {
			offs = append(offs, len(g))
			g = utf8.AppendRune(g, r)
		}
		offs = append(offs, len(g))
		g = append(g, '>')
		offs = append(offs, len(g))
		runes := len(offs) - 1
		for n := 3; n <= 4; n++ {
			for i := 0; i+n <= runes; i++ {
				hg = append(hg, fnvString(fnvGram, g[offs[i]:offs[i+n]]))
			}
		}
	}
	addFeatures(v, hw, wordWeight, &sc.tally)
	addFeatures(v, hg, ngramWeight, &sc.tally)
	sc.words, sc.grams, sc.gram, sc.offs = hw, hg, g, offs
	return normalise(v)
}

// addFeatures counts the hashes of one type of feature and adds each feature to its
// signed position in v, weighted by weight and its count (sublinear: 1 + ln tf).
func addFeatures(v []float64, hashes []uint64, weight float64, t *tally) {
	t.count(hashes)
	for _, i := range t.used {
		x := t.keys[i]
		w := weight * (1 + math.Log(float64(t.counts[i])))
		if x>>63 == 1 {
			w = -w
		}
		v[x%HashingDimension] += w
	}
}

// tally counts equal hashes in an open-addressing table of at least twice as many
// slots as hashes, probed linearly from the hash's low bits (FNV-1a spreads them).
// It is emptied by the next count, slot by used slot.
type tally struct {
	keys   []uint64
	counts []int32 // 0: a free slot
	used   []int   // the slots counted into, in the order first counted
}

// count empties the table and counts the hashes into it.
func (t *tally) count(hashes []uint64) {
	for _, i := range t.used {
		t.counts[i] = 0
	}
	t.used = t.used[:0]
	if size := 2 * len(hashes); len(t.keys) < size {
		n := 64
		for n < size {
			n *= 2
		}
		t.keys, t.counts = make([]uint64, n), make([]int32, n)
	}
	mask := uint64(len(t.keys) - 1)
	for _, x := range hashes {
		i := x & mask
		for t.counts[i] != 0 && t.keys[i] != x {
			i = (i + 1) & mask
		}
		if t.counts[i] == 0 {
			t.keys[i] = x
			t.used = append(t.used, int(i))
		}
		t.counts[i]++
	}
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
