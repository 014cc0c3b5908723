package search

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/meridian-catalog/meridian"
)

// Fusion says how Hybrid combines the keyword and vector rankings.
type Fusion string

// Fusions.
const (
	// FuseWeighted scores a hit KeywordWeight·(its keyword score over the best keyword
	// score) + (1 − KeywordWeight)·(its cosine similarity); a side that missed the hit
	// adds 0. The default: it scored best on the labelled set (vectors/testdata).
	FuseWeighted Fusion = "weighted"
	// FuseRRF is reciprocal rank fusion: Σ 1/(RRFK + rank) over both sides.
	FuseRRF Fusion = "rrf"
)

// Fusion defaults.
const (
	KeywordWeight = 0.3
	RRFK          = 60
)

// Engine is the search service of every mode: Keyword queries go to Keyword, Vector
// queries to Vector, and Hybrid runs both on the K best of each and fuses them (Fusion,
// FuseWeighted when empty). Vector and hybrid answers have no aggregations; their Total
// counts the fused candidates that reach the threshold, at most 2·K (less those found
// invisible to the caller while the page was read).
type Engine struct {
	Keyword Service
	Vector  Service // nil: vector and hybrid queries are EInvalid
	Fusion  Fusion
}

var _ Service = (*Engine)(nil)

// Search answers q by its mode. Errors: those of the services, and EInvalid for a
// vector or hybrid query with aggregations, without text, or when no vector service
// is configured.
func (e *Engine) Search(ctx context.Context, p *meridian.Principal, q Query) (Result, error) {
	switch q.Mode {
	case "", Keyword:
		return e.Keyword.Search(ctx, p, q)
	case Vector, Hybrid:
	default:
		return Result{}, meridian.Errorf(meridian.EInvalid, "Unsupported search mode %q (supported: %s, %s, %s)", q.Mode, Keyword, Vector, Hybrid)
	}
	if err := q.AsKeyword().Validate(); err != nil {
		return Result{}, err
	}
	switch {
	case e.Vector == nil:
		return Result{}, meridian.Errorf(meridian.EInvalid, "Search mode %s is not available: no embedder is configured", q.Mode)
	case len(q.Aggregations) > 0:
		return Result{}, meridian.Errorf(meridian.EInvalid, "Search aggregations are only supported in %s mode", Keyword)
	}
	if strings.TrimSpace(q.Text) == "" {
		q.Text = strings.Join(q.Terms, " ")
	}
	if strings.TrimSpace(q.Text) == "" {
		return Result{}, meridian.Errorf(meridian.EInvalid, "Search mode %s needs a query text", q.Mode)
	}
	if q.K == 0 {
		q.K = DefaultK
	}
	if q.Mode == Vector {
		return e.Vector.Search(ctx, p, q)
	}
	return e.hybrid(ctx, p, q)
}

// AsKeyword returns q in Keyword mode, as the keyword service takes it.
func (q Query) AsKeyword() Query {
	q.Mode = Keyword
	return q
}

// Lazy is a Service whose ranking can be read before its documents. Hybrid asks a
// Lazy vector service for its ranking only, and reads the documents of the fused
// page's hits alone: reading all K of them cost more than the vector search itself.
type Lazy interface {
	Service
	// Ranking is Search's whole ranking (every hit, not a page), without Source and
	// without leaving out those the caller may not view. Errors: as Search's.
	Ranking(ctx context.Context, p *meridian.Principal, q Query) ([]Hit, error)
	// Sources returns hits, in order, each with its Source read; a hit the caller may
	// not view, or that is gone, is left out. deleted reads soft-deleted entities.
	// Errors: those of the store.
	Sources(ctx context.Context, p *meridian.Principal, hits []Hit, deleted bool) ([]Hit, error)
}

// hybrid fuses the K best keyword hits and the K nearest entities. The two sides run
// at once: each waits mostly on its own reads.
func (e *Engine) hybrid(ctx context.Context, p *meridian.Principal, q Query) (Result, error) {
	kq := q.AsKeyword()
	kq.From, kq.Size, kq.Threshold = 0, min(q.K, MaxSize), 0
	kq.CountUpTo = max(kq.Size, 1)
	if len(kq.Terms) == 0 {
		kq.Terms = Words(q.Text)
	}
	vq := q
	vq.From, vq.Size, vq.Threshold = 0, min(q.K, MaxSize), 0
	lazy, _ := e.Vector.(Lazy)
	var (
		vec    []Hit
		vecErr error
		wg     sync.WaitGroup
	)
	wg.Go(func() {
		if lazy != nil {
			vec, vecErr = lazy.Ranking(ctx, p, vq)
			return
		}
		var res Result
		res, vecErr = e.Vector.Search(ctx, p, vq)
		vec = res.Hits
	})
	kw, err := e.Keyword.Search(ctx, p, kq)
	wg.Wait()
	if err != nil {
		return Result{}, err
	}
	if vecErr != nil {
		return Result{}, vecErr
	}
	fused := Fuse(e.Fusion, kw.Hits, vec)
	n := 0
	for _, h := range fused {
		if h.Score >= q.Threshold {
			fused[n] = h
			n++
		}
	}
	fused = fused[:n]
	if lazy != nil {
		if fused, err = readPage(ctx, lazy, p, fused, q.From+q.Size, q.SearchesDeleted()); err != nil {
			return Result{}, err
		}
	}
	return Page(fused, q.From, q.Size), nil
}

// readPage reads the Source of the first want hits that have none (the vector side's)
// through lazy, and returns hits without those the caller may not view: the first want
// of them carry their Source, the rest are as ranked.
func readPage(ctx context.Context, lazy Lazy, p *meridian.Principal, hits []Hit, want int, deleted bool) ([]Hit, error) {
	out := make([]Hit, 0, len(hits))
	rest := hits
	for len(out) < want && len(rest) > 0 {
		batch := rest[:min(want-len(out), len(rest))]
		rest = rest[len(batch):]
		var unread []Hit
		for _, h := range batch {
			if h.Source == nil {
				unread = append(unread, h)
			}
		}
		read, err := lazy.Sources(ctx, p, unread, deleted)
		if err != nil {
			return nil, err
		}
		byID := make(map[string]Hit, len(read))
		for _, h := range read {
			byID[h.ID] = h
		}
		for _, h := range batch {
			if h.Source == nil {
				var ok bool
				if h, ok = byID[h.ID]; !ok {
					continue
				}
			}
			out = append(out, h)
		}
	}
	return append(out, rest...), nil
}

// Fuse merges a keyword and a vector ranking, best first (ties by FQN, then id). A
// hit found by both keeps the keyword side's source and the vector side's passage.
func Fuse(f Fusion, keyword, vector []Hit) []Hit {
	byID := map[string]*Hit{}
	var out []*Hit
	get := func(h Hit) *Hit {
		if m := byID[h.ID]; m != nil {
			if m.Passage == "" {
				m.Passage = h.Passage
			}
			return m
		}
		m := h
		m.Score = 0
		byID[h.ID] = &m
		out = append(out, &m)
		return &m
	}
	var best float64
	for _, h := range keyword {
		best = math.Max(best, h.Score)
	}
	for i, h := range keyword {
		m := get(h)
		if f == FuseRRF {
			m.Score += 1 / float64(RRFK+i+1)
		} else if best > 0 {
			m.Score += KeywordWeight * h.Score / best
		}
	}
	for i, h := range vector {
		m := get(h)
		if f == FuseRRF {
			m.Score += 1 / float64(RRFK+i+1)
		} else {
			m.Score += (1 - KeywordWeight) * math.Max(h.Score, 0)
		}
	}
	hits := make([]Hit, len(out))
	for i, h := range out {
		hits[i] = *h
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.FQN, b.FQN), cmp.Compare(a.ID, b.ID))
	})
	return hits
}

// Page cuts one page of ranked hits: Total is every hit, Hits those from from, at most
// size (never nil).
func Page(hits []Hit, from, size int) Result {
	res := Result{Hits: []Hit{}, Total: len(hits)}
	if from < len(hits) {
		res.Hits = append(res.Hits, hits[from:min(from+size, len(hits))]...)
	}
	return res
}
