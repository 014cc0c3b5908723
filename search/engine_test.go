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
