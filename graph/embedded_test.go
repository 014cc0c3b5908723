package graph

import (
	"context"
	"fmt"
	"testing"
	"time"
)

const ex = "http://example.org/"

// chain returns descriptions of n entities, each derived from the previous one.
func chain(n int) []Description {
	var out []Description
	for i := 0; i < n; i++ {
		s := IRI(fmt.Sprintf("%se%d", ex, i))
		d := Description{Entity: s.Value, Triples: []Triple{
			{s, IRI(rdfType), IRI(ex + "Thing")},
			{s, IRI(ex + "name"), Literal(fmt.Sprintf("n%d", i))},
		}}
		if i > 0 {
			d.Triples = append(d.Triples, Triple{s, IRI(ex + "from"), IRI(fmt.Sprintf("%se%d", ex, i-1))})
		}
		out = append(out, d)
	}
	return out
}

func query(t *testing.T, b Backend, q string, lim Limits) *Result {
	t.Helper()
	r, err := b.Query(context.Background(), q, lim)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func TestEmbeddedAnswersPatternsJoinsAndPaths(t *testing.T) {
	b := NewEmbedded()
	if err := b.Load(context.Background(), chain(50)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, q string
		rows    int
	}{
		{"type lookup", "SELECT ?s WHERE { ?s a <" + ex + "Thing> }", 50},
		{"join", "SELECT ?s ?n WHERE { ?s <" + ex + "from> ?u . ?u <" + ex + "name> ?n }", 49},
		{"closure", "SELECT ?u WHERE { <" + ex + "e10> <" + ex + "from>+ ?u }", 10},
		{"limit", "SELECT * WHERE { ?s ?p ?o } LIMIT 7", 7},
		{"describe", "DESCRIBE <" + ex + "e3>", 3},
		{"construct", "CONSTRUCT { ?s <" + ex + "up> ?u } WHERE { ?s <" + ex + "from> ?u }", 49},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := query(t, b, c.q, Limits{})
			n := len(r.Rows) + len(r.Triples)
			if n != c.rows {
				t.Fatalf("got %d rows, want %d", n, c.rows)
			}
		})
	}
	if r := query(t, b, "ASK { <"+ex+"e1> <"+ex+"from> <"+ex+"e0> }", Limits{}); !r.Boolean {
		t.Fatal("ASK answered false")
	}
}

func TestEmbeddedReplacesRemovesAndHidesDescriptions(t *testing.T) {
	b := NewEmbedded()
	ctx := context.Background()
	_ = b.Load(ctx, chain(3))
	s := b.Store()
	before := s.Len()
	d := chain(3)[1]
	d.Triples = d.Triples[:1]
	_ = b.Apply(ctx, Delta{Put: []Description{d}})
	if got := s.Len(); got != before-2 {
		t.Fatalf("after replace: %d triples, want %d", got, before-2)
	}
	count := func(lim Limits) int {
		return len(query(t, b, "SELECT ?s WHERE { ?s a <"+ex+"Thing> }", lim).Rows)
	}
	d.Deleted = true
	_ = b.Apply(ctx, Delta{Put: []Description{d}})
	if got := count(Limits{}); got != 2 {
		t.Fatalf("soft-deleted entity visible: %d rows", got)
	}
	if got := count(Limits{IncludeDeleted: true}); got != 3 {
		t.Fatalf("admin view: %d rows, want 3", got)
	}
	_ = b.Apply(ctx, Delta{Remove: []string{d.Entity, chain(3)[2].Entity}})
	if got := count(Limits{IncludeDeleted: true}); got != 1 {
		t.Fatalf("after remove: %d rows, want 1", got)
	}
	if s.Terms() != 5 { // e0, rdf:type, Thing, name, "n0"
		t.Fatalf("unused terms kept: %d", s.Terms())
	}
}

func TestEmbeddedStopsPathologicalQueries(t *testing.T) {
	b := NewEmbedded()
	_ = b.Load(context.Background(), chain(400))
	cartesian := "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
	_, err := b.Query(context.Background(), cartesian, Limits{Work: 100_000})
	if GraphCode(err) != CodeWorkExceeded {
		t.Fatalf("work cap: got %v", err)
	}
	start := time.Now()
	_, err = b.Query(context.Background(), cartesian, Limits{Work: 1 << 40, Timeout: 300 * time.Millisecond})
	if GraphCode(err) != CodeTimeout {
		t.Fatalf("timeout: got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("timeout took %s", time.Since(start))
	}
}
