package remote

import (
	"strings"
	"testing"

	rdf "github.com/tggo/goRDFlib"
	"github.com/tggo/goRDFlib/sparql"
)

func TestWithLimitSetsOnlyTheTopLevelLimit(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"adds one", "SELECT * WHERE { ?s ?p ?o }", "SELECT * WHERE { ?s ?p ?o } LIMIT 11 "},
		{"replaces the top-level one", "SELECT * WHERE { ?s ?p ?o } LIMIT 5000", "SELECT * WHERE { ?s ?p ?o } LIMIT 11"},
		{"keeps a sub-query's", "SELECT * { { SELECT ?s { ?s ?p ?o } LIMIT 3 } }", "SELECT * { { SELECT ?s { ?s ?p ?o } LIMIT 3 } } LIMIT 11 "},
		{"before a trailing VALUES", "SELECT * { ?s ?p ?o } VALUES ?s { <urn:a> }", "SELECT * { ?s ?p ?o }  LIMIT 11 VALUES ?s { <urn:a> }"},
		{"ignores LIMIT in a string", `SELECT * { ?s ?p "} LIMIT 3" }`, `SELECT * { ?s ?p "} LIMIT 3" } LIMIT 11 `},
		{"ignores LIMIT in a comment", "SELECT * { ?s ?p ?o } # LIMIT 3\n", "SELECT * { ?s ?p ?o } # LIMIT 3\n LIMIT 11 "},
		{"after a comment that ends the text", "SELECT * { ?s ?p ?o } # last", "SELECT * { ?s ?p ?o } # last\nLIMIT 11 "},
		{"an IRI with braces-like text", "SELECT * { ?s <urn:x#LIMIT> ?o } limit 2", "SELECT * { ?s <urn:x#LIMIT> ?o } limit 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WithLimit(tt.in, 11)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
			if _, err := sparql.Parse(got); err != nil {
				t.Fatalf("the rewritten query does not parse: %v", err)
			}
		})
	}
	for _, bad := range []string{"SELECT * { ?s ?p ?o", `SELECT * { ?s ?p ?o } "open`, "SELECT * { ?s ?p ?o } '''open"} {
		if _, err := WithLimit(bad, 1); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestWithoutOrderByDropsTheTopLevelClause(t *testing.T) {
	got := withoutOrderBy("SELECT * { { SELECT ?s { ?s ?p ?o } ORDER BY ?s } } ORDER BY DESC(?s) ?o LIMIT 3")
	if strings.Count(got, "ORDER BY") != 1 || !strings.Contains(got, "LIMIT 3") {
		t.Fatalf("got %q", got)
	}
}

func TestRewriteTransitiveOnlyWithAConstantEnd(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"upstream", "SELECT ?u { <urn:a> prov:wasDerivedFrom+ ?u }",
			"SELECT ?u { { SELECT ?u WHERE { ?__t0 prov:wasDerivedFrom ?u OPTION (TRANSITIVE, t_distinct, t_in(?__t0), t_out(?u), t_min(1)) . FILTER (?__t0 = <urn:a>) } LIMIT 1000000 } }"},
		{"downstream, star, joined", "SELECT ?d { ?d <http://www.w3.org/ns/prov#wasDerivedFrom>* ex:t . ?d a ?k }",
			"SELECT ?d { { SELECT ?d WHERE { ?d <http://www.w3.org/ns/prov#wasDerivedFrom> ?__t0 OPTION (TRANSITIVE, t_distinct, t_in(?__t0), t_out(?d), t_min(0)) . FILTER (?__t0 = ex:t) } LIMIT 1000000 } . ?d a ?k }"},
		{"both ends constant", "ASK { <urn:a> p:d+ <urn:b> }", "ASK { <urn:a> p:d <urn:b> OPTION (TRANSITIVE, t_distinct, t_min(1)) }"},
		{"followed by a predicate list", "SELECT * { <urn:a> p:d+ ?b ; p:e ?c }", "SELECT * { <urn:a> p:d+ ?b ; p:e ?c }"},
		{"variables at both ends", "SELECT * { ?a prov:wasDerivedFrom+ ?b }", "SELECT * { ?a prov:wasDerivedFrom+ ?b }"},
		{"inside a string", `SELECT * { ?a rdfs:label "<urn:a> p:x+ ?b" }`, `SELECT * { ?a rdfs:label "<urn:a> p:x+ ?b" }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RewriteTransitive(tt.in); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestTermsCannotEscapeTheirSyntax(t *testing.T) {
	tests := []struct {
		name string
		term rdf.Term
		want string
	}{
		{"IRI with forbidden characters", rdf.NewURIRefUnsafe("urn:a> <urn:b"), "<urn:a%3E%20%3Curn:b>"},
		{"literal with quotes and controls", rdf.NewLiteral("a\"b\\c\n\x00"), `"a\"b\\c\n\u0000"`},
		{"invalid UTF-8", rdf.NewLiteral("a\xffb"), "\"a\uFFFDb\""},
		{"bad language tag dropped", rdf.NewLiteral("x", rdf.WithLang("en } DROP")), `"x"`},
		{"typed", rdf.NewLiteral("1", rdf.WithDatatype(rdf.NewURIRefUnsafe("http://www.w3.org/2001/XMLSchema#integer"))),
			`"1"^^<http://www.w3.org/2001/XMLSchema#integer>`},
		{"blank node", rdf.NewBNode("a-b"), "_:bax2Db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Term(tt.term); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDigestChallengeIsParsed(t *testing.T) {
	c := parseChallenge(`realm="Virtuoso \"x\"", nonce="abc", qop="auth,auth-int", opaque="o", algorithm=MD5`)
	if c.realm != `Virtuoso "x"` || c.nonce != "abc" || !hasQopAuth(c.qop) || c.opaque != "o" || c.algorithm != "MD5" {
		t.Fatalf("%+v", c)
	}
}

// FuzzRewriting feeds arbitrary query text to the rewriting functions: no panic, and a
// rewritten limit is always found again.
func FuzzRewriting(f *testing.F) {
	for _, s := range []string{"SELECT * { ?s ?p ?o } LIMIT 3", `SELECT * { ?s ?p "''' }`, "ASK { <a> p:q+ ?x }",
		"SELECT * { ?s ?p ?o } ORDER BY ?s VALUES ?s { 1 }", "{{}}}", "<", `"\`, "# {\n}",
		`SELECT   {}"`, "SELECT * {} # c", "SELECT * {} '''x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		_ = RewriteTransitive(q)
		_ = withoutOrderBy(q)
		_ = topLevelInt(q, "OFFSET")
		out, err := WithLimit(q, 42)
		if err == nil && topLevelInt(out, "LIMIT") != 42 && topLevelInt(q, "LIMIT") < 0 && strings.Count(out, "LIMIT") == strings.Count(q, "LIMIT")+1 {
			// An added LIMIT must be found at the top level of any query a parser takes.
			if _, perr := sparql.Parse(q); perr == nil {
				t.Fatalf("added LIMIT not found in %q", out)
			}
		}
	})
}
