package graph

import (
	"context"
	"testing"

	"github.com/tggo/goRDFlib/term"
)

// The store looks an IRI up by iriKeyPrefix and the IRI, without building its
// goRDFlib term; the key must be the one the library gives that term.
func TestIRIKeyIsTheLibrarysTermKey(t *testing.T) {
	for _, iri := range []string{"https://meridian.dev/ns#table", "urn:x", "", "http://e.org/a b\"c"} {
		rt, _ := toRDF(IRI(iri))
		if got, want := iriKeyPrefix+iri, term.TermKey(rt); got != want {
			t.Errorf("key of <%s> = %q, the library's is %q", iri, got, want)
		}
	}
}

// A description put again, or put by another entity, shares the terms already in the
// store: ids are reused, and removing one owner keeps what the other still uses.
func TestPutSharesTermsBetweenDescriptions(t *testing.T) {
	s := NewStore()
	a := syntheticRange(0, 1)[0]
	b := syntheticRange(1, 1)[0]
	s.Apply(Delta{Put: []Description{a, b}})
	n := s.Len()
	s.Apply(Delta{Put: []Description{a}}) // the same description again: nothing new
	if s.Len() != n {
		t.Fatalf("putting a description again changed the store: %d triples, want %d", s.Len(), n)
	}
	s.Apply(Delta{Remove: []string{a.Entity}})
	if s.Len() != n-len(a.Triples) {
		t.Fatalf("after removing %s: %d triples, want %d", a.Entity, s.Len(), n-len(a.Triples))
	}
	e := &Embedded{}
	e.store.Store(s)
	res, err := e.Query(context.Background(), prologue()+"SELECT ?o WHERE { <"+b.Entity+"> <"+rdfType+"> ?o }", Limits{Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%s has %d types after the other table went, want 2: %v", b.Entity, len(res.Rows), res.Rows)
	}
}
