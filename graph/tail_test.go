package graph

import (
	"strings"
	"testing"
)

func TestTextAfterTheQueryIsRefused(t *testing.T) {
	const p = "SELECT ?s WHERE { ?s ?p ?o } "
	tests := []struct {
		name, q string
		ok      bool
	}{
		{"modifiers in order", "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(?o) > 1) ORDER BY DESC(?n) ?s LIMIT 5 OFFSET 2", true},
		{"offset before limit", p + "OFFSET 2 LIMIT 5", true},
		{"group by an expression with an alias and a call", "SELECT ?k WHERE { ?s ?p ?o } GROUP BY (STR(?p) AS ?k) LCASE(STR(?o))", true},
		{"order by a function of a prefixed name", "PREFIX f: <http://x/> SELECT ?s WHERE { ?s ?p ?o } ORDER BY f:len(?s) ASC(?o)", true},
		{"a final VALUES block", p + "LIMIT 3 VALUES (?s ?o) { (<urn:a> 1) (UNDEF 2) }", true},
		{"a trailing comment", p + "# done", true},
		{"construct with a template", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 3", true},
		{"construct without WHERE", "CONSTRUCT { ?s ?p ?o } { ?s ?p ?o }", true},
		{"construct where shorthand", "CONSTRUCT WHERE { ?s ?p ?o } LIMIT 1", true},
		{"ask", "ASK { ?s ?p ?o }", true},
		{"describe without a pattern", "DESCRIBE <urn:a> ?x", true},
		{"describe with a pattern", "DESCRIBE ?s WHERE { ?s ?p ?o } LIMIT 2", true},
		{"a sub-query's modifiers", "SELECT * { { SELECT ?s { ?s ?p ?o } ORDER BY ?s LIMIT 3 } }", true},

		{"a stray word", p + "garbage", false},
		{"a misspelt LIMIT", p + "LIMT 5", false},
		{"LIMIT before ORDER BY", p + "LIMIT 5 ORDER BY ?s", false},
		{"LIMIT twice", p + "LIMIT 5 LIMIT 6", false},
		{"LIMIT without a number", p + "LIMIT ?x", false},
		{"a negative LIMIT", p + "LIMIT -1", false},
		{"ORDER BY without a condition", p + "ORDER BY LIMIT 5", false},
		{"HAVING a bare variable", p + "HAVING ?s", false},
		{"a second pattern", p + "{ ?a ?b ?c }", false},
		{"a semicolon", p + ";", false},
		{"text after VALUES", p + "VALUES ?s { <urn:a> } LIMIT 1", false},
		{"VALUES without braces", p + "VALUES ?s <urn:a>", false},
		{"a string after the pattern", p + `"x"`, false},
		{"construct template without a pattern", "CONSTRUCT { ?s ?p ?o } LIMIT 1", false},
		{"describe followed by junk", "DESCRIBE <urn:a> garbage", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(tt.q)
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && GraphCode(err) != CodeQueryInvalid {
				t.Fatalf("got %v, want %s", err, CodeQueryInvalid)
			}
		})
	}
}

func TestTailMessageNamesTheUnexpectedText(t *testing.T) {
	_, err := Check("SELECT * WHERE { ?s ?p ?o } LIMT 5")
	if err == nil || !strings.Contains(err.Error(), `"LIMT"`) || !strings.Contains(err.Error(), "offset 28") {
		t.Fatalf("%v", err)
	}
}
