package graph

import (
	"encoding/json"
	"strings"
	"testing"

	rdflib "github.com/tggo/goRDFlib"
	"github.com/tggo/goRDFlib/nt"
	"github.com/tggo/goRDFlib/turtle"
)

// trickyTriples hold the literals and IRIs an encoder can get wrong.
func trickyTriples() []Triple {
	s := IRI(EntityIRI("table", "5f0c"))
	return []Triple{
		{s, IRI(dctDescription), Literal("a \"quoted\"\nmulti-line\ttext with \\ and ünïcödé and \u0001")},
		{s, IRI(rdfsLabel), Term{Kind: KindLiteral, Value: "étiquette", Lang: "fr"}},
		{s, IRI(PropertyIRI("rows")), TypedLiteral("42", xsdInteger)},
		{s, IRI(PropertyIRI("odd")), TypedLiteral("x", "http://example.org/dt#odd")},
		{s, IRI(merColumnProp), IRI(ColumnIRI(EntityIRI("table", "5f0c"), []string{"a b", "c/d"}))},
		{s, IRI(NSMer + "not a name"), Literal("")},
		{Blank("b-1"), IRI(rdfType), IRI(merColumn)},
	}
}

func TestEncodedGraphsParseBackWhole(t *testing.T) {
	ts := trickyTriples()
	for _, c := range []struct {
		format Format
		parse  func(g *rdflib.Graph, text string) error
	}{
		{FormatTurtle, func(g *rdflib.Graph, text string) error { return turtle.Parse(g, strings.NewReader(text)) }},
		{FormatNTriple, func(g *rdflib.Graph, text string) error { return nt.Parse(g, strings.NewReader(text)) }},
	} {
		t.Run(string(c.format), func(t *testing.T) {
			body, comp, err := Encode(&Result{Form: FormConstruct, Triples: ts, Completeness: Complete}, c.format, 0)
			if err != nil || comp != Complete {
				t.Fatal(err, comp)
			}
			g := rdflib.NewGraph()
			if err := c.parse(g, string(body)); err != nil {
				t.Fatalf("%v\n%s", err, body)
			}
			if g.Len() != len(ts) {
				t.Fatalf("%d triples parsed, want %d\n%s", g.Len(), len(ts), body)
			}
			for _, want := range ts[:4] {
				found := false
				g.Triples(nil, nil, nil)(func(tr rdflib.Triple) bool {
					if fromRDF(tr.Object) == want.O {
						found = true
						return false
					}
					return true
				})
				if !found {
					t.Errorf("object %+v lost\n%s", want.O, body)
				}
			}
		})
	}
	t.Run("jsonld", func(t *testing.T) {
		body, _, err := Encode(&Result{Form: FormDescribe, Triples: ts, Completeness: Complete}, FormatJSONLD, 0)
		var v map[string]any
		if err != nil || json.Unmarshal(body, &v) != nil || len(v["@graph"].([]any)) != 2 {
			t.Fatalf("%v %s", err, body)
		}
	})
}
