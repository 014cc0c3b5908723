package graph

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
)

var reader = &meridian.Principal{ID: "u1", Name: "reader", Roles: []string{meridian.RoleDataConsumer}}

// newTestService serves descriptions from an embedded store.
func newTestService(t testing.TB, cfg Config, descs []Description) *Service {
	t.Helper()
	b := NewEmbedded()
	if err := b.Load(context.Background(), descs); err != nil {
		t.Fatal(err)
	}
	s := NewSync(meridian.DefaultRegistry(), nil, b, nil)
	s.MarkReady()
	cfg.Backend, cfg.Sync = b, s
	return NewService(cfg)
}

func TestCheckRefusesEveryForbiddenForm(t *testing.T) {
	cases := []struct {
		name, q, code string
	}{
		{"insert data", `INSERT DATA { <a:b> <a:c> <a:d> }`, CodeFormNotAllowed},
		{"delete where", `DELETE WHERE { ?s ?p ?o }`, CodeFormNotAllowed},
		{"modify", `DELETE { ?s ?p ?o } INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }`, CodeFormNotAllowed},
		{"with", `WITH <g:1> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }`, CodeFormNotAllowed},
		{"load", `LOAD <http://example.org/x>`, CodeFormNotAllowed},
		{"clear", `CLEAR ALL`, CodeFormNotAllowed},
		{"drop", `DROP GRAPH <g:1>`, CodeFormNotAllowed},
		{"create", `CREATE GRAPH <g:1>`, CodeFormNotAllowed},
		{"add copy move", `ADD <g:1> TO <g:2>`, CodeFormNotAllowed},
		{"copy", `COPY DEFAULT TO <g:2>`, CodeFormNotAllowed},
		{"move", `MOVE <g:1> TO DEFAULT`, CodeFormNotAllowed},
		{"update after a query", "SELECT * WHERE { ?s ?p ?o } ; INSERT DATA { <a:b> <a:c> 1 }", CodeFormNotAllowed},
		{"service", `SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }`, CodeFormNotAllowed},
		{"service in a subquery", `SELECT * WHERE { { SELECT ?s WHERE { SERVICE SILENT <http://x/> { ?s ?p ?o } } } }`, CodeFormNotAllowed},
		{"service in exists", `SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <http://x/> { ?s ?p ?o } } }`, CodeFormNotAllowed},
		{"from", `SELECT * FROM <g:1> WHERE { ?s ?p ?o }`, CodeGraphSelection},
		{"from named", `SELECT * FROM NAMED <g:1> WHERE { ?s ?p ?o }`, CodeGraphSelection},
		{"graph", `SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }`, CodeGraphSelection},
		{"graph deep inside", `ASK { { ?s ?p ?o } UNION { OPTIONAL { GRAPH <g:1> { ?s ?p ?o } } } }`, CodeGraphSelection},
		{"construct from", `CONSTRUCT WHERE { ?s ?p ?o } `, ""},
		{"lower-case keywords", `select * where { graph ?g { ?s ?p ?o } }`, CodeGraphSelection},
		{"empty", "   ", CodeQueryInvalid},
		{"not a query", "HELLO", CodeQueryInvalid},
		{"unbalanced", "SELECT * WHERE { ?s ?p ?o ", CodeQueryInvalid},
		{"unterminated string", `SELECT * WHERE { ?s ?p "x }`, CodeQueryInvalid},
		{"too deep", "SELECT * WHERE " + strings.Repeat("{", 100) + strings.Repeat("}", 100), CodeQueryInvalid},
		{"too long", "SELECT * WHERE { ?s ?p ?o } #" + strings.Repeat("x", MaxQueryBytes), CodeLimitExceeded},
		{"limit above max", "SELECT * WHERE { ?s ?p ?o } LIMIT 10001", CodeLimitExceeded},
		{"keywords in strings and IRIs are data", `SELECT * WHERE { ?s <http://x/GRAPH/FROM> "INSERT DELETE SERVICE" }`, ""},
		{"prefixed names are data", `PREFIX ex: <http://x/> SELECT * WHERE { ?s ex:graph ex:delete }`, ""},
		{"describe", `DESCRIBE <http://x/a>`, ""},
		{"regex with a literal pattern", `SELECT * WHERE { ?s ?p ?o FILTER(REGEX(STR(?o), "^a(b|c)", "i")) }`, ""},
		{"regex with a pattern from the data", `SELECT * WHERE { ?s ?p ?o FILTER(REGEX(?o, ?o)) }`, CodeQueryInvalid},
		{"replace with a computed pattern", `SELECT (REPLACE(?o, CONCAT("a", ?o), "") AS ?x) WHERE { ?s ?p ?o }`, CodeQueryInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(c.q)
			if got := GraphCode(err); got != c.code {
				t.Fatalf("code %q (%v), want %q", got, err, c.code)
			}
			if err != nil && meridian.HTTPStatus(meridian.ErrorCode(err)) != 400 {
				t.Fatalf("status %d", meridian.HTTPStatus(meridian.ErrorCode(err)))
			}
		})
	}
}

func TestQueryBoundsRowsAndBytesWithCompleteness(t *testing.T) {
	s := newTestService(t, Config{}, chain(3000))
	ctx := context.Background()
	all := "SELECT ?s WHERE { ?s a <" + ex + "Thing> }"
	cases := []struct {
		name  string
		req   Request
		rows  int
		comp  Completeness
		code  string
		check func(t *testing.T, body []byte)
	}{
		{name: "default outer limit", req: Request{Query: all}, rows: DefaultRows, comp: Truncated},
		{name: "caller limit", req: Request{Query: all, Limit: 10}, rows: 10, comp: Truncated},
		{name: "query limit within the bound", req: Request{Query: all + " LIMIT 2000"}, rows: 2000, comp: Complete},
		{name: "everything fits", req: Request{Query: all, Limit: 5000}, rows: 3000, comp: Complete},
		{name: "limit above max", req: Request{Query: all, Limit: MaxRows + 1}, code: CodeLimitExceeded},
		{name: "timeout above max", req: Request{Query: all, Timeout: time.Hour}, code: CodeLimitExceeded},
		{name: "byte cap keeps JSON whole", req: Request{Query: all, MaxBytes: 2000}, comp: Truncated, rows: -1,
			check: func(t *testing.T, body []byte) {
				var v struct {
					Results struct {
						Bindings []any `json:"bindings"`
					} `json:"results"`
					Completeness string `json:"completeness"`
				}
				if err := json.Unmarshal(body, &v); err != nil || len(body) > 2000 || v.Completeness != "TRUNCATED" || len(v.Results.Bindings) == 0 {
					t.Fatalf("%d bytes, %v: %.200s", len(body), err, body)
				}
			}},
		{name: "byte cap keeps XML whole", req: Request{Query: all, MaxBytes: 3000, Format: FormatXML}, comp: Truncated, rows: -1,
			check: func(t *testing.T, body []byte) {
				if err := xml.Unmarshal(body, new(any)); err != nil && !strings.Contains(err.Error(), "EOF") || !strings.HasSuffix(string(body), "</sparql>\n") {
					t.Fatalf("xml: %v %.200s", err, body)
				}
			}},
		{name: "turtle for a select", req: Request{Query: all, Format: FormatTurtle}, code: CodeFormatInvalid},
		{name: "construct as turtle", req: Request{Query: "CONSTRUCT { ?s a <" + ex + "X> } WHERE { ?s a <" + ex + "Thing> } LIMIT 3", Format: FormatTurtle},
			rows: 3, comp: Complete, check: func(t *testing.T, body []byte) {
				if !strings.Contains(string(body), "@prefix mer:") || strings.Count(string(body), " a <"+ex+"X>") != 3 {
					t.Fatalf("turtle: %s", body)
				}
			}},
		{name: "ask as csv", req: Request{Query: "ASK { <" + ex + "e1> ?p ?o }", Format: FormatCSV}, rows: 0, comp: Complete,
			check: func(t *testing.T, body []byte) {
				if string(body) != "_askResult\ntrue\n" {
					t.Fatalf("ask: %q", body)
				}
			}},
		{name: "tsv", req: Request{Query: "SELECT ?n WHERE { <" + ex + "e1> <" + ex + "name> ?n }", Format: FormatTSV}, rows: 1, comp: Complete,
			check: func(t *testing.T, body []byte) {
				if string(body) != "?n\r\n\"n1\"\r\n" {
					t.Fatalf("tsv: %q", body)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ans, err := s.Query(ctx, reader, c.req)
			if GraphCode(err) != c.code {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			if err != nil {
				return
			}
			if c.rows >= 0 && ans.Count != c.rows || ans.Completeness != c.comp {
				t.Fatalf("%d rows %s, want %d %s", ans.Count, ans.Completeness, c.rows, c.comp)
			}
			if c.check != nil {
				c.check(t, ans.Body)
			}
		})
	}
}

func TestPathologicalQueriesStopWithoutHurtingOthers(t *testing.T) {
	s := newTestService(t, Config{Work: 200_000, Timeout: 500 * time.Millisecond}, chain(2000))
	ctx := context.Background()
	cases := []struct{ name, q, code string }{
		{"cartesian product", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", CodeWorkExceeded},
		{"deep property path", "SELECT * WHERE { ?a (<" + ex + "from>|^<" + ex + "from>)* ?b }", CodeWorkExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := s.Query(ctx, reader, Request{Query: c.q})
			if code := GraphCode(err); code != CodeWorkExceeded && code != CodeTimeout {
				t.Fatalf("got %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
			// Another caller is answered at once afterwards.
			other := &meridian.Principal{ID: "u2", Name: "other"}
			if ans, err := s.Query(ctx, other, Request{Query: "ASK { <" + ex + "e1> ?p ?o }"}); err != nil || !strings.Contains(string(ans.Body), "true") {
				t.Fatalf("other caller: %v", err)
			}
		})
	}
	t.Run("time limit", func(t *testing.T) {
		s := newTestService(t, Config{Work: 1 << 40}, chain(2000))
		_, err := s.Query(ctx, reader, Request{Query: "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", Timeout: 300 * time.Millisecond})
		if GraphCode(err) != CodeTimeout {
			t.Fatalf("got %v", err)
		}
	})
}

func TestConcurrencyLimitsPerCallerAndGlobally(t *testing.T) {
	s := newTestService(t, Config{MaxConcurrent: 2, PerCaller: 1}, chain(10))
	a := &meridian.Principal{ID: "a", Name: "a"}
	b := &meridian.Principal{ID: "b", Name: "b"}
	c := &meridian.Principal{ID: "c", Name: "c"}
	releaseA, err := s.acquire(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(context.Background(), a, Request{Query: "ASK { ?s ?p ?o }"}); GraphCode(err) != CodeCapacity || meridian.HTTPStatus(meridian.ErrorCode(err)) != 429 {
		t.Fatalf("second query of a: %v", err)
	}
	releaseB, err := s.acquire(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(context.Background(), c, Request{Query: "ASK { ?s ?p ?o }"}); GraphCode(err) != CodeCapacity {
		t.Fatalf("third caller over the global limit: %v", err)
	}
	releaseA()
	releaseB()
	if _, err := s.Query(context.Background(), c, Request{Query: "ASK { ?s ?p ?o }"}); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestQueriesWaitForTheProjection(t *testing.T) {
	b := NewEmbedded()
	sync := NewSync(meridian.DefaultRegistry(), nil, b, nil)
	s := NewService(Config{Backend: b, Sync: sync})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Query(ctx, reader, Request{Query: "ASK { ?s ?p ?o }"}); GraphCode(err) != CodeUnavailable {
		t.Fatalf("got %v", err)
	}
	go func() { time.Sleep(50 * time.Millisecond); sync.MarkReady() }()
	if _, err := s.Query(context.Background(), reader, Request{Query: "ASK { ?s ?p ?o }"}); err != nil {
		t.Fatalf("once built: %v", err)
	}
}

// queryOnly hides the embedded store's Walker, so the service walks by SPARQL.
type queryOnly struct{ Backend }

func TestNeighbourhoodIsTheSameByIndexAndBySPARQL(t *testing.T) {
	descs := syntheticCatalog(300)
	direct := newTestService(t, Config{}, descs)
	b := queryOnly{direct.cfg.Backend}
	sparql := NewService(Config{Backend: b, Sync: direct.cfg.Sync})
	for _, c := range []struct{ depth, limit int }{{1, 200}, {2, 200}, {3, 50}, {2, 2000}} {
		iri := EntityIRI("table", fmt.Sprintf("00000000-0000-0000-0000-%012d", 17))
		a, err := direct.Neighborhood(context.Background(), reader, iri, c.depth, c.limit, false)
		if err != nil {
			t.Fatal(err)
		}
		q, err := sparql.Neighborhood(context.Background(), reader, iri, c.depth, c.limit, false)
		if err != nil {
			t.Fatal(err)
		}
		// A truncated neighbourhood may keep other triples (the order of the edges
		// differs); a complete one is the same.
		if len(a.Triples) != len(q.Triples) || a.Completeness != q.Completeness || (a.Completeness == Complete && a.Nodes != q.Nodes) {
			t.Fatalf("depth %d limit %d: index %d triples %s %d nodes, SPARQL %d %s %d", c.depth, c.limit,
				len(a.Triples), a.Completeness, a.Nodes, len(q.Triples), q.Completeness, q.Nodes)
		}
	}
}
