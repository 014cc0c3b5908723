package graph

import (
	"context"
	"sort"
	"strings"
	"testing"
)

// conceptTree is a small SKOS tree, each node with its name as dct:identifier:
// D → C → B → A and Y → X (skos:broader).
func conceptTree() []Description {
	broader := map[string]string{"A": "", "B": "A", "C": "B", "D": "C", "X": "", "Y": "X"}
	var out []Description
	for name, parent := range broader {
		s := IRI(ex + name)
		d := Description{Entity: s.Value, Triples: []Triple{{s, IRI(NSDCT + "identifier"), Literal(name)}}}
		if parent != "" {
			d.Triples = append(d.Triples, Triple{s, IRI(NSSKOS + "broader"), IRI(ex + parent)})
		}
		out = append(out, d)
	}
	return out
}

// TestEmbeddedPathAnswersDoNotDependOnPatternOrder checks property paths (*, +, ?, ^,
// sequences) with a free and a bound end, written in both orders, against answers
// worked out by hand from the tree. Written path-first, goRDFlib binds ?top to every
// node of the graph, literals included, and then matched `?top dct:identifier "B"` for
// a literal ?top as if ?top were free (wrong rows): see plan.
func TestEmbeddedPathAnswersDoNotDependOnPatternOrder(t *testing.T) {
	b := NewEmbedded()
	if err := b.Load(context.Background(), conceptTree()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		path, bound string // two patterns, tried in both orders
		want        string // the ?t values, sorted, IRIs by their local name
	}{
		{"zero or more to a bound top", "?t skos:broader* ?top", `?top dct:identifier "B"`, "B C D"},
		{"one or more to a bound top", "?t skos:broader+ ?top", `?top dct:identifier "B"`, "C D"},
		{"zero or one to a bound top", "?t skos:broader? ?top", `?top dct:identifier "B"`, "B C"},
		{"inverse step", "?t ^skos:broader ?top", `?top dct:identifier "B"`, "A"},
		{"inverse closure", "?t (^skos:broader)* ?top", `?top dct:identifier "C"`, "A B C"},
		{"sequence", "?t skos:broader/skos:broader ?top", `?top dct:identifier "A"`, "C"},
		{"sequence with a closure", "?t skos:broader/skos:broader* ?top", `?top dct:identifier "A"`, "B C D"},
		{"sequence ending in a literal", `?t skos:broader/dct:identifier "A"`, "?t dct:identifier ?n", "B"},
		{"bound start, free end", "?s skos:broader+ ?t", `?s dct:identifier "D"`, "A B C"},
		{"bound start, zero or more", "?s skos:broader* ?t", `?s dct:identifier "Y"`, "X Y"},
		{"literal as a subject", "?x dct:identifier ?t", "?t ?p ?o", ""},
		{"literal as a subject of a closure's neighbour", "?x skos:broader* ?t", "?t dct:identifier ?n . ?n ?p ?o", ""},
	}
	for _, c := range cases {
		for _, order := range []string{c.path + " . " + c.bound, c.bound + " . " + c.path} {
			t.Run(c.name+"/"+order, func(t *testing.T) {
				r := query(t, b, prologue()+"SELECT ?t WHERE { "+order+" }", Limits{})
				if got := tValues(r); got != c.want {
					t.Fatalf("got [%s], want [%s]", got, c.want)
				}
			})
		}
	}
}

// TestEmbeddedOptionalIgnoresLiteralSubjects: an OPTIONAL group whose subject is bound
// to a literal by the main pattern matches nothing.
func TestEmbeddedOptionalIgnoresLiteralSubjects(t *testing.T) {
	b := NewEmbedded()
	if err := b.Load(context.Background(), conceptTree()); err != nil {
		t.Fatal(err)
	}
	q := "SELECT ?t WHERE { ?x dct:identifier ?t OPTIONAL { ?t skos:broader ?z } FILTER(BOUND(?z)) }"
	if got := tValues(query(t, b, prologue()+q, Limits{})); got != "" {
		t.Fatalf("got [%s], want none", got)
	}
	q = "SELECT ?t WHERE { ?x dct:identifier \"C\" OPTIONAL { ?x skos:broader ?t } }"
	if got := tValues(query(t, b, prologue()+q, Limits{})); got != "B" {
		t.Fatalf("got [%s], want [B]", got)
	}
}

func tValues(r *Result) string {
	var out []string
	for _, row := range r.Rows {
		out = append(out, strings.TrimPrefix(row[0].Value, ex))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestEmbeddedLiteralsAtPathEndsAndInExists checks the cases goRDFlib v0.1.5 answered
// wrongly, against answers worked out by hand from the tree: a property path starting
// at a literal (a constant, a variable bound to one, or the middle of a sequence), and
// an EXISTS whose pattern uses a variable bound to a literal as a subject. Before the
// fix, a literal start was evaluated as a free one (`"B" ^dct:identifier ?t` answered
// all six concepts) and EXISTS { ?lit ?p ?o } was true.
func TestEmbeddedLiteralsAtPathEndsAndInExists(t *testing.T) {
	b := NewEmbedded()
	if err := b.Load(context.Background(), conceptTree()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, where string
		want        string // the ?t values, sorted; IRIs by their local name, literals as text
		rows        int
	}{
		{"constant literal through an inverse step", `"B" ^dct:identifier ?t`, "B", 1},
		{"constant literal, zero or more", `"B" skos:broader* ?t`, "B", 1},
		{"constant literal, one or more", `"B" skos:broader+ ?t`, "", 0},
		{"bound literal, zero or more", `?x dct:identifier ?n . ?n skos:broader* ?t`, "A B C D X Y", 6},
		{"bound literal, one or more", `?x dct:identifier ?n . ?n skos:broader+ ?t`, "", 0},
		{"bound literal, forward step", `?x dct:identifier ?n . ?n ^skos:broader ?t`, "", 0},
		{"bound literal through a sequence", `?x dct:identifier ?n . ?n (^dct:identifier)/skos:broader ?t`, "A B C X", 4},
		{"literal bound by VALUES", `VALUES ?n { "B" } ?n skos:broader* ?t`, "B", 1},
		{"literal in the middle of a sequence", `?t dct:identifier/^dct:identifier ?s . ?s dct:identifier "C"`, "C", 1},
		{"path to a literal end, zero or more", `?t (^skos:broader)* "B"`, "B", 1},
		{"literal to a literal end: found nothing, never every row", `?x dct:identifier ?n . ?n skos:broader* "B" BIND(?n AS ?t)`, "", 0},
		{"EXISTS on a literal subject", `?x dct:identifier ?t FILTER EXISTS { ?t ?p ?o }`, "", 0},
		{"NOT EXISTS on a literal subject", `?x dct:identifier ?t FILTER NOT EXISTS { ?t ?p ?o }`, "A B C D X Y", 6},
		{"EXISTS on an IRI subject", `?t dct:identifier ?n FILTER EXISTS { ?t skos:broader ?o }`, "B C D Y", 4},
		{"EXISTS with a path from a literal", `?x dct:identifier ?n FILTER EXISTS { ?n ^dct:identifier ?t . ?t skos:broader ?z } BIND(?x AS ?t)`, "B C D Y", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := query(t, b, prologue()+"SELECT ?t WHERE { "+c.where+" }", Limits{})
			if got := tValues(r); got != c.want || len(r.Rows) != c.rows {
				t.Fatalf("got [%s] in %d rows, want [%s] in %d", got, len(r.Rows), c.want, c.rows)
			}
		})
	}
}
