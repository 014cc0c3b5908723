package search

import (
	"context"
	"slices"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// fixed answers every query with the same hits.
type fixed []Hit

func (f fixed) Search(context.Context, *meridian.Principal, Query) (Result, error) {
	return Result{Hits: f, Total: len(f)}, nil
}

func fqns(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.FQN)
	}
	return out
}

func TestHybridFusesBothSides(t *testing.T) {
	keyword := fixed{{ID: "1", FQN: "a", Score: 10, Source: []byte(`{"k":1}`)}, {ID: "2", FQN: "b", Score: 5}}
	vector := fixed{{ID: "3", FQN: "c", Score: 0.9, Passage: "c text"}, {ID: "1", FQN: "a", Score: 0.5, Passage: "a text"}}
	e := &Engine{Keyword: keyword, Vector: vector}
	res, err := e.Search(context.Background(), nil, Query{Mode: Hybrid, Text: "q", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	// a: 0.3·1 + 0.7·0.5 = 0.65; c: 0.7·0.9 = 0.63; b: 0.3·0.5 = 0.15.
	if got := fqns(res.Hits); !slices.Equal(got, []string{"a", "c", "b"}) || res.Total != 3 {
		t.Fatalf("hits = %v total %d", got, res.Total)
	}
	if a := res.Hits[0]; string(a.Source) != `{"k":1}` || a.Passage != "a text" {
		t.Errorf("a = %+v", a)
	}
	res, _ = e.Search(context.Background(), nil, Query{Mode: Hybrid, Text: "q", Size: 1, From: 1, Threshold: 0.5})
	if got := fqns(res.Hits); !slices.Equal(got, []string{"c"}) || res.Total != 2 {
		t.Errorf("threshold page = %v total %d", got, res.Total)
	}
	if rrf := Fuse(FuseRRF, keyword, vector); rrf[0].FQN != "a" {
		t.Errorf("rrf = %v", fqns(rrf))
	}
}

func TestEngineRefusesWhatItCannotAnswer(t *testing.T) {
	for _, c := range []struct {
		e   *Engine
		q   Query
		msg string
	}{
		{&Engine{Keyword: fixed{}}, Query{Mode: "fuzzy"}, `Unsupported search mode "fuzzy" (supported: keyword, vector, hybrid)`},
		{&Engine{Keyword: fixed{}}, Query{Mode: Vector, Text: "x"}, "Search mode vector is not available: no embedder is configured"},
		{&Engine{Keyword: fixed{}, Vector: fixed{}}, Query{Mode: Hybrid}, "Search mode hybrid needs a query text"},
		{&Engine{Keyword: fixed{}, Vector: fixed{}}, Query{Mode: Vector, Text: "x", Aggregations: []Field{FieldTags}}, "Search aggregations are only supported in keyword mode"},
		{&Engine{Keyword: fixed{}, Vector: fixed{}}, Query{Mode: Vector, Text: "x", K: MaxK + 1}, "Search k must be between 0 and 1000"},
	} {
		_, err := c.e.Search(context.Background(), nil, c.q)
		if meridian.ErrorCode(err) != meridian.EInvalid || meridian.ErrorMessage(err) != c.msg {
			t.Errorf("%+v: %v, want %q", c.q, err, c.msg)
		}
	}
}

// lazyVector is a Lazy vector side: its ranking is fixed, it hides the ids in hidden,
// and it records the ids whose sources were read.
type lazyVector struct {
	fixed
	hidden map[string]bool
	read   []string
}

func (l *lazyVector) Ranking(context.Context, *meridian.Principal, Query) ([]Hit, error) {
	return slices.Clone(l.fixed), nil
}

func (l *lazyVector) Sources(_ context.Context, _ *meridian.Principal, hits []Hit, _ bool) ([]Hit, error) {
	var out []Hit
	for _, h := range hits {
		l.read = append(l.read, h.ID)
		if !l.hidden[h.ID] {
			h.Source = []byte(`{"v":"` + h.ID + `"}`)
			out = append(out, h)
		}
	}
	return out, nil
}

func TestHybridReadsOnlyThePagesDocuments(t *testing.T) {
	keyword := fixed{{ID: "1", FQN: "a", Score: 10, Source: []byte(`{"k":1}`)}}
	vector := &lazyVector{fixed: fixed{
		{ID: "1", FQN: "a", Score: 0.9}, {ID: "2", FQN: "b", Score: 0.8}, {ID: "3", FQN: "c", Score: 0.7},
		{ID: "4", FQN: "d", Score: 0.6}, {ID: "5", FQN: "e", Score: 0.5},
	}, hidden: map[string]bool{"2": true}}
	e := &Engine{Keyword: keyword, Vector: vector}
	res, err := e.Search(context.Background(), nil, Query{Mode: Hybrid, Text: "q", Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	// b is hidden, so the page is a (its keyword source, never read) and c; d and e
	// stay unread, and the total leaves b out.
	if got := fqns(res.Hits); !slices.Equal(got, []string{"a", "c"}) || res.Total != 4 {
		t.Fatalf("hits = %v total %d", got, res.Total)
	}
	if !slices.Equal(vector.read, []string{"2", "3"}) {
		t.Errorf("sources read for %v, want [2 3]", vector.read)
	}
	if string(res.Hits[0].Source) != `{"k":1}` || string(res.Hits[1].Source) != `{"v":"3"}` {
		t.Errorf("sources = %s, %s", res.Hits[0].Source, res.Hits[1].Source)
	}
}
