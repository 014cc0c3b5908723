package vectors

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// Searcher answers vector-mode searches (search.Vector) over the index with one
// embedder: the query text is embedded, the K nearest entities of that embedder's model
// and dimension are found (never another model's), those under the threshold are
// dropped, and the page's hits are read through the engine, which checks that the
// caller may view each (one it may not, or that is gone, is left out).
type Searcher struct {
	ents  *store.Entities
	index *Index
	emb   Embedder
}

var _ search.Service = (*Searcher)(nil)

// NewSearcher returns the vector search over index with emb.
func NewSearcher(ents *store.Entities, index *Index, emb Embedder) *Searcher {
	return &Searcher{ents: ents, index: index, emb: emb}
}

// fieldsShown are the fields a vector hit's source carries when its kind has them.
var fieldsShown = []string{"owners", "tags", "domains"}

// shownFields is the ?fields= value of a hit's kind.
func shownFields(k *meridian.Kind) string {
	var out []string
	for _, f := range fieldsShown {
		if k.HasField(f) {
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}

var _ search.Lazy = (*Searcher)(nil)

// Search answers q in vector mode: Ranking, then the page's documents (Sources).
// Errors: those of Ranking and Sources.
func (s *Searcher) Search(ctx context.Context, p *meridian.Principal, q search.Query) (search.Result, error) {
	hits, err := s.Ranking(ctx, p, q)
	if err != nil {
		return search.Result{}, err
	}
	res := search.Page(hits, q.From, q.Size)
	shown, err := s.Sources(ctx, p, res.Hits, q.SearchesDeleted())
	if err != nil {
		return search.Result{}, err
	}
	res.Total -= len(res.Hits) - len(shown)
	res.Hits = shown
	return res, nil
}

// Ranking returns the K nearest entities that reach q's threshold, best first, without
// their documents. Errors: EInvalid (the query fails Validate, an unknown kind, a
// filter on owners or domains, which vectors do not keep), EInternal (the embedder
// failed: its message says why), and those of the index.
func (s *Searcher) Ranking(ctx context.Context, p *meridian.Principal, q search.Query) ([]search.Hit, error) {
	if err := q.AsKeyword().Validate(); err != nil {
		return nil, err
	}
	deleted := q.SearchesDeleted()
	vq := Query{Model: s.emb.Model(), Dim: s.emb.Dimension(), K: q.K, Kinds: q.Kinds, Deleted: &deleted}
	if vq.K == 0 {
		vq.K = search.DefaultK
	}
	for _, k := range q.Kinds {
		if _, ok := s.ents.Registry().Kind(k); !ok {
			return nil, meridian.Errorf(meridian.EInvalid, "Unknown entity type %s", k)
		}
	}
	for _, f := range q.Filters {
		switch f.Field {
		case search.FieldEntityType:
			vq.Kinds = append(vq.Kinds, f.Values...)
		case search.FieldService:
			vq.Services = append(vq.Services, f.Values...)
		case search.FieldTags:
			vq.Tags = append(vq.Tags, f.Values...)
		case search.FieldDeleted:
		default:
			return nil, meridian.Errorf(meridian.EInvalid, "Search filter field %s is not supported in %s mode (supported: %s, %s, %s, %s)",
				f.Field, q.Mode, search.FieldEntityType, search.FieldService, search.FieldTags, search.FieldDeleted)
		}
	}
	vecs, err := s.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, meridian.Errorf(meridian.EInternal, "The embedder failed: %v", err)
	}
	vq.Vector = vecs[0]
	found, err := s.index.Search(ctx, vq)
	if err != nil {
		return nil, err
	}
	var hits []search.Hit
	for _, h := range found {
		if h.Score >= q.Threshold {
			hits = append(hits, search.Hit{ID: h.EntityID, Kind: h.Kind, FQN: h.FQN, Score: h.Score, Passage: h.Text})
		}
	}
	return hits, nil
}

// sourceReads bounds the hits one Sources call reads at once.
const sourceReads = 4

// Sources reads each hit's entity through the engine, as the caller (owners, tags and
// domains where its kind has them), into its Source with its entityType; one the
// caller may not view, or that is gone, is left out. Up to sourceReads hits are read
// at once: each is a read transaction of a few round trips on PostgreSQL, and a page
// read one after another waited for all of them in turn. Errors: those of the
// engine's Get other than ENotFound and EForbidden.
func (s *Searcher) Sources(ctx context.Context, p *meridian.Principal, hits []search.Hit, deleted bool) ([]search.Hit, error) {
	include := store.IncludeNonDeleted
	if deleted {
		include = store.IncludeDeleted
	}
	read := make([]search.Hit, len(hits)) // a hit read and shown has its Source
	errs := make([]error, len(hits))
	slots := make(chan struct{}, sourceReads)
	var wg sync.WaitGroup
	for i, h := range hits {
		k, ok := s.ents.Registry().Kind(h.Kind)
		if !ok {
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			e, err := s.ents.Get(ctx, p, h.Kind, store.ByID(h.ID), store.GetOptions{Fields: shownFields(k), Include: include})
			switch meridian.ErrorCode(err) {
			case "":
			case meridian.ENotFound, meridian.EForbidden:
				return
			default:
				errs[i] = err
				return
			}
			e["entityType"] = h.Kind // Get's answer is the caller's own copy
			if h.Source, errs[i] = json.Marshal(e); errs[i] == nil {
				read[i] = h
			}
		})
	}
	wg.Wait()
	out := make([]search.Hit, 0, len(hits))
	for i := range hits {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if read[i].Source != nil {
			out = append(out, read[i])
		}
	}
	return out, nil
}
