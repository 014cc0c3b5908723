package graph

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
)

// FuzzQuery sends arbitrary query text through the whole SPARQL input path (the
// check, goRDFlib's parser and evaluator over the embedded store, the encoders):
// nothing panics, every refusal is a client error (4xx) with a stable code, and every
// answer is encoded.
func FuzzQuery(f *testing.F) {
	s := newTestService(f, Config{Work: 20_000, Timeout: 250 * time.Millisecond}, chain(200))
	for _, q := range []string{
		"SELECT * WHERE { ?s ?p ?o } LIMIT 5",
		"ASK { <http://example.org/e1> ?p ?o }",
		"CONSTRUCT { ?s <http://x/p> ?o } WHERE { ?s ?p ?o } LIMIT 3",
		"DESCRIBE ?s WHERE { ?s a <http://example.org/Thing> } LIMIT 2",
		"SELECT ?s (COUNT(*) AS ?n) WHERE { ?s <http://example.org/from>+ ?o } GROUP BY ?s ORDER BY DESC(?n)",
		"PREFIX ex: <http://example.org/> SELECT * WHERE { ?s ex:name ?n FILTER(REGEX(?n, \"^n1\")) OPTIONAL { ?s ex:from ?u } }",
		"SELECT * WHERE { { SELECT ?s WHERE { ?s ?p ?o } LIMIT 2 } UNION { VALUES ?s { <a:b> } } MINUS { ?s ?x 1 } }",
		"INSERT DATA { <a:b> <a:c> 1 }",
		"SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }",
		"SELECT * WHERE { ?s ?p \"\\u0000\\\" }",
		"SELECT (<a:b> AS ?x) WHERE { BIND(1/0 AS ?y) }",
		"SELECT ?s WHERE { ?s ?p ?o } LIMT 5",
		"SELECT ?s WHERE { ?s ?p ?o } HAVING (COUNT(?o) > 1) VALUES (?s) { (<a:b>) } #",
	} {
		f.Add(q, "json")
	}
	f.Add("SELECT ?s WHERE { ?s ?p ?o } LIMIT 3", "xml")
	f.Add("CONSTRUCT WHERE { ?s ?p ?o } LIMIT 3", "turtle")
	f.Fuzz(func(t *testing.T, q, format string) {
		fmtv, err := ParseFormat(format)
		if err != nil {
			return
		}
		watchdog := time.AfterFunc(8*time.Second, func() { panic(fmt.Sprintf("hung on %q", q)) })
		ans, err := s.Query(context.Background(), reader, Request{Query: q, Format: fmtv, MaxBytes: 20_000})
		watchdog.Stop()
		if err != nil {
			status := meridian.HTTPStatus(meridian.ErrorCode(err))
			if status >= 500 || GraphCode(err) == "" {
				t.Fatalf("%q: status %d: %v", q, status, err)
			}
			return
		}
		if len(ans.Body) > 20_000 || (ans.Completeness != Complete && ans.Completeness != Truncated) {
			t.Fatalf("%q: %d bytes, completeness %q", q, len(ans.Body), ans.Completeness)
		}
	})
}
