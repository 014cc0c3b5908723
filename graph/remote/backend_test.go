package remote_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/graph"
	"github.com/meridian-catalog/meridian/graph/remote"
	"github.com/meridian-catalog/meridian/graph/remote/remotetest"
)

const (
	ns       = "https://meridian.example/id/"
	prov     = "http://www.w3.org/ns/prov#"
	skos     = "http://www.w3.org/2004/02/skos/core#"
	dcat     = "http://www.w3.org/ns/dcat#"
	dct      = "http://purl.org/dc/terms/"
	rdfType  = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
	rdfsLbl  = "http://www.w3.org/2000/01/rdf-schema#label"
	mer      = "https://meridian.example/ontology#"
	prefixes = "PREFIX prov: <" + prov + "> PREFIX skos: <" + skos + "> PREFIX dcat: <" + dcat + "> PREFIX dct: <" + dct +
		"> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX m: <" + mer + "> "
)

// catalog describes a small catalog the way the projection does: tables with columns,
// a dense lineage DAG between them, a tag hierarchy, owners.
func catalog(tables int) []graph.Description {
	iri := graph.IRI
	var out []graph.Description
	for i := 0; i < 6; i++ {
		tag := iri(fmt.Sprintf("%stag/PII.l%d", ns, i))
		d := graph.Description{Entity: tag.Value, Triples: []graph.Triple{
			{S: tag, P: iri(rdfType), O: iri(skos + "Concept")},
			{S: tag, P: iri(rdfsLbl), O: graph.Literal(fmt.Sprintf("l%d", i))},
		}}
		if i > 0 {
			parent := iri(fmt.Sprintf("%stag/PII.l%d", ns, (i-1)/2))
			d.Triples = append(d.Triples, graph.Triple{S: tag, P: iri(skos + "broader"), O: parent})
		}
		out = append(out, d)
	}
	for i := 0; i < tables; i++ {
		t := iri(fmt.Sprintf("%stable/svc.db.s.t%03d", ns, i))
		d := graph.Description{Entity: t.Value, Triples: []graph.Triple{
			{S: t, P: iri(rdfType), O: iri(dcat + "Dataset")},
			{S: t, P: iri(rdfType), O: iri(mer + "Table")},
			{S: t, P: iri(dct + "identifier"), O: graph.Literal(fmt.Sprintf("svc.db.s.t%03d", i))},
			{S: t, P: iri(rdfsLbl), O: graph.Literal(fmt.Sprintf("t%03d", i))},
			{S: t, P: iri(dct + "description"), O: graph.Literal(fmt.Sprintf("Table \"%d\" — ünïcode\nsecond line", i))},
			{S: t, P: iri(mer + "owner"), O: iri(fmt.Sprintf("%suser/u%d", ns, i%4))},
			{S: t, P: iri(mer + "rowCount"), O: graph.TypedLiteral(fmt.Sprint(i*100), "http://www.w3.org/2001/XMLSchema#integer")},
		}}
		for c := 0; c < 3; c++ {
			col := iri(fmt.Sprintf("%s/column/c%d", t.Value, c))
			d.Triples = append(d.Triples,
				graph.Triple{S: t, P: iri(mer + "column"), O: col},
				graph.Triple{S: col, P: iri(rdfType), O: iri(mer + "Column")},
				graph.Triple{S: col, P: iri(rdfsLbl), O: graph.Literal(fmt.Sprintf("c%d", c))})
			if c == 0 {
				d.Triples = append(d.Triples, graph.Triple{S: col, P: iri(mer + "tag"), O: iri(fmt.Sprintf("%stag/PII.l%d", ns, i%6))})
			}
		}
		// Dense lineage: each table derives from up to three earlier ones.
		for _, k := range []int{1, 2, 5} {
			if i-k >= 0 {
				d.Triples = append(d.Triples, graph.Triple{S: t, P: iri(prov + "wasDerivedFrom"), O: iri(fmt.Sprintf("%stable/svc.db.s.t%03d", ns, i-k))})
			}
		}
		if i%7 == 3 {
			d.Triples = append(d.Triples, graph.Triple{S: t, P: iri(mer + "tag"), O: iri(ns + "tag/PII.l1")})
		}
		out = append(out, d)
	}
	return out
}

// sameAnswerQueries is the fixed set of queries both backends must answer alike.
var sameAnswerQueries = []struct{ name, q string }{
	{"lineage closure upstream", prefixes + "SELECT ?up WHERE { <" + ns + "table/svc.db.s.t039> prov:wasDerivedFrom+ ?up }"},
	{"lineage closure downstream", prefixes + "SELECT DISTINCT ?down WHERE { ?down prov:wasDerivedFrom+ <" + ns + "table/svc.db.s.t002> }"},
	{"tag descendants", prefixes + "SELECT ?t WHERE { ?t skos:broader* <" + ns + "tag/PII.l1> }"},
	{"tagged through descendants", prefixes + "SELECT DISTINCT ?table WHERE { ?t skos:broader* <" + ns + "tag/PII.l1> . ?table m:column ?c . ?c m:tag ?t }"},
	{"two-join select", prefixes + "SELECT ?t ?l WHERE { ?t m:column ?c . ?c m:tag ?tag . ?tag rdfs:label ?l }"},
	{"columns of tables owned by u1", prefixes + "SELECT ?id ?cl WHERE { ?t m:owner <" + ns + "user/u1> . ?t dct:identifier ?id . ?t m:column ?c . ?c rdfs:label ?cl }"},
	{"neighbourhood out", prefixes + "SELECT ?p ?o WHERE { <" + ns + "table/svc.db.s.t010> ?p ?o }"},
	{"neighbourhood in", prefixes + "SELECT ?s ?p WHERE { ?s ?p <" + ns + "table/svc.db.s.t010> }"},
	{"aggregate", prefixes + "SELECT ?o (COUNT(?t) AS ?n) WHERE { ?t m:owner ?o } GROUP BY ?o ORDER BY ?o"},
	{"order and limit", prefixes + "SELECT ?id WHERE { ?t dct:identifier ?id } ORDER BY DESC(?id) LIMIT 5"},
	{"typed literal filter", prefixes + "SELECT ?t WHERE { ?t m:rowCount ?n FILTER (?n >= 3500) }"},
	{"construct", prefixes + "CONSTRUCT { ?t m:upstream ?u } WHERE { ?t prov:wasDerivedFrom ?u . ?t m:owner <" + ns + "user/u2> }"},
	{"describe", "DESCRIBE <" + ns + "table/svc.db.s.t007>"},
	{"ask true", prefixes + "ASK { <" + ns + "table/svc.db.s.t009> prov:wasDerivedFrom <" + ns + "table/svc.db.s.t004> }"},
	{"ask false", prefixes + "ASK { <" + ns + "table/svc.db.s.t004> prov:wasDerivedFrom <" + ns + "table/svc.db.s.t009> }"},
}

// answer is a result in a comparable form: sorted rows (by variable name), or sorted
// triples, or the boolean, and the completeness.
func answer(r *graph.Result) string {
	term := func(t graph.Term) string {
		return fmt.Sprintf("%d|%s|%s|%s", t.Kind, t.Value, t.Datatype, t.Lang)
	}
	var lines []string
	switch r.Form {
	case graph.FormAsk:
		return fmt.Sprint("ASK ", r.Boolean)
	case graph.FormSelect:
		for _, row := range r.Rows {
			cells := map[string]string{}
			for i, v := range r.Vars {
				cells[v] = term(row[i])
			}
			names := make([]string, 0, len(cells))
			for n := range cells {
				names = append(names, n)
			}
			sort.Strings(names)
			var parts []string
			for _, n := range names {
				parts = append(parts, n+"="+cells[n])
			}
			lines = append(lines, strings.Join(parts, " "))
		}
	default:
		for _, t := range r.Triples {
			lines = append(lines, term(t.S)+" "+term(t.P)+" "+term(t.O))
		}
	}
	sort.Strings(lines)
	return fmt.Sprintf("%s %s %d\n%s", r.Form, r.Completeness, len(lines), strings.Join(lines, "\n"))
}

// backends returns the embedded store and a remote one on Virtuoso, both loaded alike.
func backends(t *testing.T, load func(b graph.Backend) error) map[string]graph.Backend {
	c := remotetest.Client(t, remote.Config{})
	out := map[string]graph.Backend{"embedded": graph.NewEmbedded(), "virtuoso": remote.NewBackend(c)}
	t.Cleanup(func() { _ = out["virtuoso"].Reset(context.Background()) })
	for name, b := range out {
		if err := load(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

func TestSameAnswersEmbeddedAndOnVirtuoso(t *testing.T) {
	ctx := context.Background()
	bs := backends(t, func(b graph.Backend) error {
		if err := b.Reset(ctx); err != nil {
			return err
		}
		return b.Load(ctx, catalog(40))
	})
	for _, q := range sameAnswerQueries {
		t.Run(q.name, func(t *testing.T) {
			want := ""
			for _, name := range []string{"embedded", "virtuoso"} {
				r, err := bs[name].Query(ctx, q.q, graph.Limits{})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got := answer(r)
				if name == "embedded" {
					want = got
					if strings.HasPrefix(got, "SELECT COMPLETE 0") {
						t.Fatalf("the embedded store answers nothing; the query proves nothing")
					}
					continue
				}
				if got != want {
					t.Fatalf("virtuoso answers\n%s\nthe embedded store\n%s", got, want)
				}
			}
		})
	}
}

func TestSameAnswersAfterChanges(t *testing.T) {
	ctx := context.Background()
	descs := catalog(20)
	bs := backends(t, func(b graph.Backend) error {
		if err := b.Reset(ctx); err != nil {
			return err
		}
		return b.Load(ctx, descs)
	})
	// t005 loses its columns and lineage, t006 is soft-deleted, t007 is removed; then
	// t008 (derived from t006) is written again, and at last t006 is restored.
	t5 := descs[6+5]
	t5.Triples = t5.Triples[:7]
	t6 := descs[6+6]
	t6.Deleted = true
	steps := []graph.Delta{
		{Put: []graph.Description{t5, t6}, Remove: []string{descs[6+7].Entity}},
		{Put: []graph.Description{descs[6+8]}},
		{Put: []graph.Description{descs[6+6]}},
	}
	for step := range steps {
		t.Run(fmt.Sprint("step ", step), func(t *testing.T) {
			// Applying the same delta twice changes nothing more.
			for _, b := range bs {
				for i := 0; i < 2; i++ {
					if err := b.Apply(ctx, steps[step]); err != nil {
						t.Fatal(err)
					}
				}
			}
			compareAfterChanges(t, bs)
		})
	}
}

func compareAfterChanges(t *testing.T, bs map[string]graph.Backend) {
	ctx := context.Background()
	queries := []struct {
		name, q string
		lim     graph.Limits
	}{
		{"all triples", "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", graph.Limits{Rows: 10000}},
		{"all triples with the deleted", "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", graph.Limits{Rows: 10000, IncludeDeleted: true}},
		{"closure", prefixes + "SELECT ?up WHERE { <" + ns + "table/svc.db.s.t019> prov:wasDerivedFrom+ ?up }", graph.Limits{}},
		{"truncated", "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", graph.Limits{Rows: 10}},
	}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			e, err := bs["embedded"].Query(ctx, q.q, q.lim)
			if err != nil {
				t.Fatal(err)
			}
			v, err := bs["virtuoso"].Query(ctx, q.q, q.lim)
			if err != nil {
				t.Fatal(err)
			}
			if q.lim.Rows == 10 {
				// Which ten rows is up to each store; the count and the flag are not.
				if len(e.Rows) != 10 || len(v.Rows) != 10 || e.Completeness != graph.Truncated || v.Completeness != graph.Truncated {
					t.Fatalf("embedded %d %s, virtuoso %d %s", len(e.Rows), e.Completeness, len(v.Rows), v.Completeness)
				}
				return
			}
			if answer(e) != answer(v) {
				t.Fatalf("virtuoso answers\n%s\nthe embedded store\n%s", answer(v), answer(e))
			}
		})
	}
}

func TestRemoteQueryErrorsHaveStableCodes(t *testing.T) {
	c := remotetest.Client(t, remote.Config{})
	b := remote.NewBackend(c)
	tests := []struct{ name, q, code string }{
		{"an update", "INSERT DATA { <urn:a> <urn:b> <urn:c> }", graph.CodeFormNotAllowed},
		{"a graph selection", "SELECT * FROM <urn:x> WHERE { ?s ?p ?o }", graph.CodeGraphSelection},
		{"not SPARQL", "SELECT ?x WHERE { ?x ?y }", graph.CodeQueryInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.Query(context.Background(), tt.q, graph.Limits{})
			if got := graph.GraphCode(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
		})
	}
	down := remote.NewBackend(mustClient(t, remote.Config{QueryEndpoint: "http://127.0.0.1:1/sparql"}))
	if _, err := down.Query(context.Background(), "ASK {}", graph.Limits{}); graph.GraphCode(err) != graph.CodeUnavailable {
		t.Fatalf("unreachable store: %v", err)
	}
}

func mustClient(t *testing.T, cfg remote.Config) *remote.Client {
	c, err := remote.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRebuildIsBuiltAsideThenSwitched(t *testing.T) {
	ctx := context.Background()
	c := remotetest.Client(t, remote.Config{})
	b := remote.NewBackend(c)
	t.Cleanup(func() { _ = b.Reset(ctx) })
	old := catalog(5)
	if err := b.Load(ctx, old); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		r, err := b.Query(ctx, "SELECT ?t WHERE { ?t a <"+dcat+"Dataset> }", graph.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Rows)
	}
	if n := count(); n != 5 {
		t.Fatalf("%d tables before the rebuild", n)
	}
	if err := b.BeginRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	next := catalog(8)
	next[6+7].Deleted = true
	if err := b.Load(ctx, next); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 5 {
		t.Fatalf("during the rebuild queries see %d tables, want the old 5", n)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 7 {
		t.Fatalf("after the rebuild %d visible tables, want 7", n)
	}
	r, err := b.Query(ctx, "SELECT ?t WHERE { ?t a <"+dcat+"Dataset> }", graph.Limits{IncludeDeleted: true})
	if err != nil || len(r.Rows) != 8 {
		t.Fatalf("with the deleted: %v rows, %v", r, err)
	}
	// A later change applies to the switched graphs.
	if err := b.Apply(ctx, graph.Delta{Remove: []string{next[6].Entity}}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 6 {
		t.Fatalf("after a removal %d tables, want 6", n)
	}
}

// TestReplacingAnEntityThatOwnsManyNodes replaces a description whose nodes pass one
// ownership query's page (5,000 nodes): every old node's triples go, on Virtuoso as on
// the embedded store.
func TestReplacingAnEntityThatOwnsManyNodes(t *testing.T) {
	ctx := context.Background()
	wide := func(columns int) graph.Description {
		tbl := graph.IRI(ns + "table/svc.db.s.wide")
		d := graph.Description{Entity: tbl.Value, Triples: []graph.Triple{{S: tbl, P: graph.IRI(rdfsLbl), O: graph.Literal("wide")}}}
		for i := 0; i < columns; i++ {
			col := graph.IRI(fmt.Sprintf("%s/column/c%05d", tbl.Value, i))
			d.Triples = append(d.Triples, graph.Triple{S: col, P: graph.IRI(mer + "columnOf"), O: tbl})
		}
		return d
	}
	bs := backends(t, func(b graph.Backend) error {
		if err := b.Reset(ctx); err != nil {
			return err
		}
		if err := b.Load(ctx, catalog(3)); err != nil {
			return err
		}
		return b.Apply(ctx, graph.Delta{Put: []graph.Description{wide(5200)}})
	})
	q := "SELECT (COUNT(*) AS ?n) WHERE { ?c <" + mer + "columnOf> <" + ns + "table/svc.db.s.wide> }"
	for _, step := range []struct {
		delta graph.Delta
		want  string
	}{
		{graph.Delta{}, "5200"},
		{graph.Delta{Put: []graph.Description{wide(3)}}, "3"},
		{graph.Delta{Put: []graph.Description{wide(5100)}}, "5100"},
		{graph.Delta{Remove: []string{ns + "table/svc.db.s.wide"}}, "0"},
	} {
		for name, b := range bs {
			if err := b.Apply(ctx, step.delta); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r, err := b.Query(ctx, q, graph.Limits{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := r.Rows[0][0].Value; got != step.want {
				t.Fatalf("%s: %s columns left, want %s", name, got, step.want)
			}
		}
	}
}
