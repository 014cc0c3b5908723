package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	rdf "github.com/tggo/goRDFlib"

	"github.com/meridian-catalog/meridian/graph/remote"
	"github.com/meridian-catalog/meridian/graph/remote/remotetest"
)

func iri(s string) rdf.URIRef { return rdf.NewURIRefUnsafe(s) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func TestInsertedTriplesComeBackUnchanged(t *testing.T) {
	c := remotetest.Client(t, remote.Config{})
	p := iri("urn:meridian:p")
	objects := map[string]rdf.Term{
		"plain":     rdf.NewLiteral("hello"),
		"quotes":    rdf.NewLiteral(`say "hi" \ bye`),
		"newlines":  rdf.NewLiteral("line1\nline2\r\n\ttabbed"),
		"unicode":   rdf.NewLiteral("Zürich – 東京 ✓"),
		"injection": rdf.NewLiteral(`" } } DROP ALL ; INSERT DATA { <urn:x> <urn:y> "z`),
		"lang":      rdf.NewLiteral("bonjour", rdf.WithLang("fr")),
		"typed":     rdf.NewLiteral("42", rdf.WithDatatype(iri("http://www.w3.org/2001/XMLSchema#integer"))),
		"iri":       iri("urn:meridian:target"),
	}
	var triples []rdf.Triple
	for name, o := range objects {
		triples = append(triples, rdf.Triple{Subject: iri("urn:meridian:s:" + name), Predicate: p, Object: o})
	}
	if err := c.InsertData(ctx(t), triples); err != nil {
		t.Fatal(err)
	}
	res, err := c.Limited(ctx(t), fmt.Sprintf("SELECT ?s ?o WHERE { GRAPH <%s> { ?s <urn:meridian:p> ?o } }", c.Graph()), 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]rdf.Term{}
	for _, b := range res.Result.Bindings {
		got[strings.TrimPrefix(b["s"].String(), "urn:meridian:s:")] = b["o"]
	}
	for name, want := range objects {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: missing", name)
			continue
		}
		if g.N3() != want.N3() {
			t.Errorf("%s: got %s, want %s", name, g.N3(), want.N3())
		}
	}
	if n, err := c.Count(ctx(t)); err != nil || n != len(objects) {
		t.Fatalf("count = %d, %v; want %d (an injected literal must not add triples)", n, err, len(objects))
	}
	if err := c.DeleteData(ctx(t), triples[:2]); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx(t)); n != len(objects)-2 {
		t.Fatalf("after DELETE DATA count = %d, want %d", n, len(objects)-2)
	}
	if err := c.DeleteSubjects(ctx(t), []string{"urn:meridian:s:plain", "urn:meridian:s:quotes", "urn:meridian:s:lang"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx(t)); n >= len(objects)-2 {
		t.Fatalf("DeleteSubjects removed nothing: count = %d", n)
	}
}

// chain is n triples s_i p o_i in the graph.
func chain(n int) []rdf.Triple {
	out := make([]rdf.Triple, n)
	for i := range out {
		out[i] = rdf.Triple{Subject: iri(fmt.Sprintf("urn:meridian:row:%06d", i)), Predicate: iri("urn:meridian:n"),
			Object: rdf.NewLiteral(fmt.Sprint(i), rdf.WithDatatype(iri("http://www.w3.org/2001/XMLSchema#integer")))}
	}
	return out
}

func TestBatchTooLargeForTheServerIsSplit(t *testing.T) {
	// Virtuoso's SPARQL compiler refuses an INSERT DATA of a few thousand triples.
	c := remotetest.Client(t, remote.Config{BatchTriples: 20000})
	if err := c.InsertData(ctx(t), chain(12000)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Count(ctx(t)); err != nil || n != 12000 {
		t.Fatalf("count = %d, %v; want 12000", n, err)
	}
}

func TestLimitedReportsCompleteness(t *testing.T) {
	c := remotetest.Client(t, remote.Config{})
	if err := c.InsertData(ctx(t), chain(10050)); err != nil {
		t.Fatal(err)
	}
	all := fmt.Sprintf("SELECT ?s WHERE { GRAPH <%s> { ?s <urn:meridian:n> ?n } }", c.Graph())
	upTo := func(n int) string {
		return fmt.Sprintf("SELECT ?s WHERE { GRAPH <%s> { ?s <urn:meridian:n> ?n FILTER (?n < %d) } }", c.Graph(), n)
	}
	tests := []struct {
		name         string
		query        string
		limit        int
		rows         int
		completeness string
	}{
		{"more rows than the limit", all, 100, 100, remote.Truncated},
		{"fewer rows than the limit", upTo(50), 100, 50, remote.Complete},
		{"exactly the limit", upTo(100), 100, 100, remote.Complete},
		{"the query's own smaller limit", all + " LIMIT 7", 100, 7, remote.Complete},
		{"the query's own larger limit", all + " LIMIT 5000", 100, 100, remote.Truncated},
		{"past the server's silent cap", all, 10000, 10000, remote.Truncated},
		{"exactly the server's cap", upTo(10000), 10000, 10000, remote.Complete},
		{"ordered, past the cap", all + " ORDER BY ?s", 10000, 10000, remote.Truncated},
		{"ordered, exactly the cap", upTo(10000) + " ORDER BY DESC(?s)", 10000, 10000, remote.Complete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Limited(ctx(t), tt.query, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Result.Bindings) != tt.rows || res.Completeness != tt.completeness {
				t.Fatalf("rows %d %s, want %d %s", len(res.Result.Bindings), res.Completeness, tt.rows, tt.completeness)
			}
		})
	}
}

func TestTransitiveClosureOnVirtuoso(t *testing.T) {
	c := remotetest.Client(t, remote.Config{})
	if !c.IsVirtuoso() {
		t.Fatal("the test server did not say it is Virtuoso")
	}
	d := iri("http://www.w3.org/ns/prov#wasDerivedFrom")
	// A dense lineage: every node of layer k derives from every node of layer k-1.
	const layers, width = 12, 12
	var triples []rdf.Triple
	node := func(l, i int) rdf.URIRef { return iri(fmt.Sprintf("urn:meridian:t:%d:%d", l, i)) }
	for l := 1; l < layers; l++ {
		for i := 0; i < width; i++ {
			for j := 0; j < width; j++ {
				triples = append(triples, rdf.Triple{Subject: node(l, i), Predicate: d, Object: node(l-1, j)})
			}
		}
	}
	if err := c.InsertData(ctx(t), triples); err != nil {
		t.Fatal(err)
	}
	up := fmt.Sprintf(`PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT DISTINCT ?up WHERE { GRAPH <%s> { <urn:meridian:t:%d:0> prov:wasDerivedFrom+ ?up } }`, c.Graph(), layers-1)
	down := fmt.Sprintf(`PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT DISTINCT ?down WHERE { GRAPH <%s> { ?down prov:wasDerivedFrom+ <urn:meridian:t:0:0> } }`, c.Graph())
	for _, q := range []string{up, down} {
		rewritten := remote.RewriteTransitive(q)
		if !strings.Contains(rewritten, "OPTION (TRANSITIVE") {
			t.Fatalf("not rewritten: %s", rewritten)
		}
		res, err := c.Limited(ctx(t), rewritten, 10000)
		if err != nil {
			t.Fatal(err)
		}
		if want := (layers - 1) * width; len(res.Result.Bindings) != want || res.Completeness != remote.Complete {
			t.Fatalf("closure has %d nodes (%s), want %d", len(res.Result.Bindings), res.Completeness, want)
		}
	}
}

func TestDigestAuthentication(t *testing.T) {
	base := remotetest.Endpoint()
	authURL := strings.TrimSuffix(base, "/sparql") + "/sparql-auth"
	good := remotetest.Client(t, remote.Config{QueryEndpoint: authURL, User: "dba", Password: "dba"})
	if err := good.Update(ctx(t), fmt.Sprintf("INSERT DATA { GRAPH <%s> { <urn:a> <urn:b> <urn:c> } }", good.Graph())); err != nil {
		t.Fatalf("update through /sparql-auth as dba: %v", err)
	}
	if n, err := good.Count(ctx(t)); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
	bad, err := remote.New(remote.Config{QueryEndpoint: authURL, User: "dba", Password: "not-the-password"})
	if err != nil {
		t.Fatal(err)
	}
	err = bad.Ping(ctx(t))
	if !errors.Is(err, remote.ErrUnauthorized) {
		t.Fatalf("wrong password: %v, want ErrUnauthorized", err)
	}
	if strings.Contains(err.Error(), "not-the-password") || strings.Contains(bad.Config().String(), "not-the-password") {
		t.Fatal("the password appears in an error or in the configuration's description")
	}
}

func TestResponsesAreBounded(t *testing.T) {
	c := remotetest.Client(t, remote.Config{MaxResponseBytes: 2000})
	if err := c.InsertData(ctx(t), chain(200)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Limited(ctx(t), fmt.Sprintf("SELECT ?s ?n WHERE { GRAPH <%s> { ?s <urn:meridian:n> ?n } }", c.Graph()), 1000)
	if !errors.Is(err, remote.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer slow.Close()
	c := remotetest.Client(t, remote.Config{})
	tests := []struct {
		name  string
		cfg   remote.Config
		query string
		want  error
	}{
		{"a slow endpoint", remote.Config{QueryEndpoint: slow.URL, Timeout: 200 * time.Millisecond}, "ASK {}", remote.ErrTimeout},
		{"nothing listening", remote.Config{QueryEndpoint: "http://127.0.0.1:1/sparql"}, "ASK {}", remote.ErrUnreachable},
		{"a syntax error", c.Config(), "SELECT WHERE {", remote.ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := remote.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.Ask(ctx(t), tt.query); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestConstructAnswersAGraph(t *testing.T) {
	c := remotetest.Client(t, remote.Config{})
	if err := c.InsertData(ctx(t), chain(5)); err != nil {
		t.Fatal(err)
	}
	g, err := c.Construct(ctx(t), fmt.Sprintf("CONSTRUCT { ?s <urn:meridian:n> ?n } WHERE { GRAPH <%s> { ?s <urn:meridian:n> ?n } }", c.Graph()))
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for tr := range g.Triples(nil, nil, nil) {
		subjects = append(subjects, tr.Subject.String())
	}
	sort.Strings(subjects)
	if len(subjects) != 5 || subjects[0] != "urn:meridian:row:000000" {
		t.Fatalf("subjects = %v", subjects)
	}
}
