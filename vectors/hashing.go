package vectors

import (
	"context"
	"hash/fnv"
	"math"

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

func (Hashing) embed(text string) []float32 {
	type feature struct {
		gram bool // a character n-gram, not a word
		text string
	}
	counts := map[feature]int{}
	for _, w := range search.Words(text) {
		if search.IsStopWord(w) {
			continue
		}
		counts[feature{false, w}]++
		r := []rune("<" + w + ">")
		for n := 3; n <= 4; n++ {
			for i := 0; i+n <= len(r); i++ {
				counts[feature{true, string(r[i : i+n])}]++
			}
		}
	}
	v := make([]float64, HashingDimension)
	for f, tf := range counts {
		h := fnv.New64a()
		if f.gram {
			h.Write([]byte{1})
		}
		h.Write([]byte(f.text))
		x := h.Sum64()
		w := wordWeight
		if f.gram {
			w = ngramWeight
		}
		w *= 1 + math.Log(float64(tf))
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
