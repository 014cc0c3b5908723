package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// graphFixture creates two tables with a lineage edge and a tag, and a DataConsumer.
func graphFixture(t *testing.T, s *server) (reader *principal, raw, mart map[string]any) {
	t.Helper()
	c := s.admin
	sch, _ := hierarchy(t, c, "kg_svc", "dwh", "sales")
	c.must(http.StatusCreated, "POST", "/api/v1/classifications", map[string]any{"name": "Tier", "description": "tiers"})
	c.must(http.StatusCreated, "POST", "/api/v1/tags", map[string]any{"name": "Gold", "classification": "Tier", "description": "gold"})
	raw = table(t, c, sch, "raw_orders", nil)
	mart = table(t, c, sch, "orders_mart", map[string]any{"description": "The orders mart",
		"tags": []any{map[string]any{"tagFQN": "Tier.Gold", "source": "Classification", "labelType": "Manual", "state": "Confirmed"}}})
	c.must(http.StatusOK, "PUT", "/api/v1/lineage", map[string]any{"edge": map[string]any{
		"fromEntity": map[string]any{"id": raw["id"], "type": "table"},
		"toEntity":   map[string]any{"id": mart["id"], "type": "table"},
	}})
	return s.user(t, "kg_reader", "DataConsumer"), raw, mart
}

func sparqlGet(c *client, q string, headers map[string]string) *response {
	return c.do("GET", "/api/v1/rdf/sparql?query="+url.QueryEscape(q), nil, headers)
}

func TestGraphSPARQLProtocolOverREST(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	reader, raw, mart := graphFixture(t, s)
	upstream := `SELECT ?f WHERE { ?m dct:identifier "` + str(mart["fullyQualifiedName"]) + `" ; prov:wasDerivedFrom+ ?u . ?u dct:identifier ?f }`
	eventually(t, 5*time.Second, "the lineage edge is in the graph", func() bool {
		r := sparqlGet(reader.c, upstream, map[string]string{"Accept": "application/sparql-results+json"})
		return r.status == 200 && strings.Contains(string(r.raw), str(raw["fullyQualifiedName"]))
	})

	t.Run("GET answers SPARQL JSON with completeness", func(t *testing.T) {
		r := sparqlGet(reader.c, upstream, map[string]string{"Accept": "application/sparql-results+json"})
		var v struct {
			Head struct {
				Vars []string `json:"vars"`
			} `json:"head"`
			Results struct {
				Bindings []map[string]map[string]string `json:"bindings"`
			} `json:"results"`
		}
		if err := json.Unmarshal(r.raw, &v); err != nil || len(v.Results.Bindings) != 1 || v.Head.Vars[0] != "f" ||
			!strings.HasPrefix(r.header.Get("Content-Type"), "application/sparql-results+json") || r.header.Get("X-Meridian-Completeness") != "COMPLETE" {
			t.Fatalf("%s (%v)", r, err)
		}
	})
	t.Run("POST sparql-query as CSV", func(t *testing.T) {
		r := reader.c.do("POST", "/api/v1/rdf/sparql", "SELECT ?n WHERE { ?t a dcat:Dataset ; rdfs:label ?n } ORDER BY ?n",
			map[string]string{"Content-Type": "application/sparql-query", "Accept": "text/csv"})
		if r.status != 200 || string(r.raw) != "n\r\norders_mart\r\nraw_orders\r\n" {
			t.Fatalf("%s", r)
		}
	})
	t.Run("POST form as XML", func(t *testing.T) {
		form := url.Values{"query": {"ASK { ?t mer:tag ?g . ?g dct:identifier \"Tier.Gold\" }"}}
		r := reader.c.do("POST", "/api/v1/rdf/sparql", form.Encode(),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/sparql-results+xml"})
		if r.status != 200 || !strings.Contains(string(r.raw), "<boolean>true</boolean>") {
			t.Fatalf("%s", r)
		}
	})
	t.Run("CONSTRUCT as Turtle and TSV", func(t *testing.T) {
		q := `CONSTRUCT { ?t dct:identifier ?f } WHERE { ?t a mer:Table ; dct:identifier ?f }`
		r := sparqlGet(reader.c, q, map[string]string{"Accept": "text/turtle"})
		if r.status != 200 || !strings.Contains(string(r.raw), "dct:identifier \""+str(mart["fullyQualifiedName"])+"\"") {
			t.Fatalf("%s", r)
		}
		r = sparqlGet(reader.c, q, map[string]string{"Accept": "text/tab-separated-values"})
		if r.status != 200 || !strings.HasPrefix(string(r.raw), "?s\t?p\t?o\r\n") {
			t.Fatalf("%s", r)
		}
	})
	t.Run("refusals are 4xx with stable codes", func(t *testing.T) {
		for _, c := range []struct {
			name string
			r    *response
			code string
		}{
			{"update", sparqlGet(reader.c, `INSERT DATA { <a:b> <a:c> 1 }`, nil), "QUERY_FORM_NOT_ALLOWED"},
			{"service", sparqlGet(reader.c, `SELECT * WHERE { SERVICE <http://x/> { ?s ?p ?o } }`, nil), "QUERY_FORM_NOT_ALLOWED"},
			{"graph", sparqlGet(reader.c, `SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }`, nil), "GRAPH_SELECTION_NOT_ALLOWED"},
			{"dataset parameter", reader.c.do("GET", "/api/v1/rdf/sparql?default-graph-uri=g%3A1&query=ASK%7B%7D", nil, nil), "GRAPH_SELECTION_NOT_ALLOWED"},
			{"syntax", sparqlGet(reader.c, `SELECT * WHERE { ?s ?p }`, nil), "QUERY_INVALID"},
			{"limit", sparqlGet(reader.c, `SELECT * WHERE { ?s ?p ?o } LIMIT 20000`, nil), "QUERY_LIMIT_EXCEEDED"},
			{"sparql-update body", reader.c.do("POST", "/api/v1/rdf/sparql", "CLEAR ALL", map[string]string{"Content-Type": "application/sparql-update"}), "QUERY_FORM_NOT_ALLOWED"},
		} {
			if c.r.status != 400 || !strings.Contains(str(object(c.r.body)["message"]), c.code) {
				t.Errorf("%s: %s, want 400 %s", c.name, c.r, c.code)
			}
		}
		if r := sparqlGet(reader.c, "SELECT * WHERE { ?s ?p ?o }", map[string]string{"Accept": "text/turtle"}); r.status != 406 {
			t.Errorf("turtle for SELECT: %s", r)
		}
		if r := s.client(t, "").do("GET", "/api/v1/rdf/sparql?query=ASK%7B%7D", nil, nil); r.status != 401 {
			t.Errorf("no token: %s", r)
		}
	})
	t.Run("soft-deleted entities are hidden unless an admin asks", func(t *testing.T) {
		s.admin.must(http.StatusOK, "DELETE", "/api/v1/tables/"+str(raw["id"]), nil)
		q := `SELECT ?t WHERE { ?t rdfs:label "raw_orders" }`
		eventually(t, 5*time.Second, "the deleted table is hidden", func() bool {
			r := sparqlGet(reader.c, q, map[string]string{"Accept": "text/csv"})
			return r.status == 200 && string(r.raw) == "t\r\n"
		})
		r := s.admin.do("GET", "/api/v1/rdf/sparql?includeDeleted=true&query="+url.QueryEscape(q), nil, map[string]string{"Accept": "text/csv"})
		if r.status != 200 || !strings.Contains(string(r.raw), str(raw["id"])) {
			t.Fatalf("admin: %s", r)
		}
		if r := reader.c.do("GET", "/api/v1/rdf/sparql?includeDeleted=true&query="+url.QueryEscape(q), nil, nil); r.status != 403 {
			t.Fatalf("reader: %s", r)
		}
		s.admin.must(http.StatusOK, "PUT", "/api/v1/tables/restore", map[string]any{"id": raw["id"]})
	})
	t.Run("entity description as Turtle and JSON-LD", func(t *testing.T) {
		path := "/api/v1/rdf/entity/table/" + str(mart["id"])
		r := reader.c.do("GET", path, nil, map[string]string{"Accept": "text/turtle"})
		if r.status != 200 || !strings.Contains(string(r.raw), "a mer:Table , dcat:Dataset") && !strings.Contains(string(r.raw), "dcat:Dataset") ||
			!strings.Contains(string(r.raw), "mer:Column") {
			t.Fatalf("%s", r)
		}
		r = reader.c.do("GET", path, nil, map[string]string{"Accept": "application/ld+json"})
		if r.status != 200 || object(r.body)["@graph"] == nil {
			t.Fatalf("%s", r)
		}
		if r := reader.c.do("GET", "/api/v1/rdf/entity/table/00000000-0000-0000-0000-000000000000", nil, nil); r.status != 404 {
			t.Fatalf("missing entity: %s", r)
		}
	})
	t.Run("ontology", func(t *testing.T) {
		r := reader.c.do("GET", "/api/v1/rdf/ontology", nil, nil)
		if r.status != 200 || !strings.Contains(string(r.raw), "mer:Table a owl:Class") || !strings.Contains(string(r.raw), "rdfs:subClassOf") {
			t.Fatalf("%s", r)
		}
	})
	t.Run("rebuild is an admin job", func(t *testing.T) {
		if r := reader.c.do("POST", "/api/v1/rdf/rebuild", nil, nil); r.status != 403 {
			t.Fatalf("reader: %s", r)
		}
		job := s.admin.must(http.StatusAccepted, "POST", "/api/v1/rdf/rebuild", nil)
		eventually(t, 10*time.Second, "the rebuild job completes", func() bool {
			j := s.admin.must(http.StatusOK, "GET", "/api/v1/jobs/"+str(job["jobId"]), nil)
			return j["status"] == "completed"
		})
		r := sparqlGet(reader.c, upstream, map[string]string{"Accept": "text/csv"})
		if r.status != 200 || !strings.Contains(string(r.raw), str(raw["fullyQualifiedName"])) {
			t.Fatalf("after the rebuild: %s", r)
		}
	})
}

// mcpTool calls one tool over MCP's HTTP transport and returns the tool result.
func mcpTool(t *testing.T, c *client, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	call := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}}
	r := c.do("POST", "/mcp", call, mcpHeaders())
	if r.status != 200 {
		t.Fatalf("%s", r)
	}
	raw := string(r.raw)
	if i := strings.Index(raw, "data: "); i >= 0 && !strings.HasPrefix(strings.TrimSpace(raw), "{") {
		raw = strings.TrimSpace(strings.SplitN(raw[i+6:], "\n", 2)[0])
	}
	var v struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil || len(v.Result.Content) == 0 {
		t.Fatalf("%s: %v", r, err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(v.Result.Content[0].Text), &out); err != nil {
		t.Fatalf("%s: %v", v.Result.Content[0].Text, err)
	}
	return out, v.Result.IsError
}

func TestGraphToolsOverMCP(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	reader, raw, mart := graphFixture(t, s)
	eventually(t, 5*time.Second, "the tag is in the graph", func() bool {
		out, isErr := mcpTool(t, reader.c, "find_by_tag", map[string]any{"tag": "Tier.Gold"})
		return !isErr && len(list(out["data"])) == 1
	})
	out, isErr := mcpTool(t, reader.c, "sparql_query", map[string]any{"format": "csv",
		"query": `SELECT ?f WHERE { ?m rdfs:label "orders_mart" ; prov:wasDerivedFrom ?u . ?u dct:identifier ?f }`})
	if isErr || out["completeness"] != "COMPLETE" || str(out["result"]) != "f\r\n"+str(raw["fullyQualifiedName"])+"\r\n" {
		t.Fatalf("sparql_query: %v", out)
	}
	out, isErr = mcpTool(t, reader.c, "sparql_query", map[string]any{"query": `DELETE WHERE { ?s ?p ?o }`})
	if !isErr || !strings.Contains(str(out["error"]), "QUERY_FORM_NOT_ALLOWED") || out["statusCode"] != float64(400) || str(out["hint"]) == "" {
		t.Fatalf("update: %v", out)
	}
	out, isErr = mcpTool(t, reader.c, "entity_neighborhood", map[string]any{"entityType": "table", "fqn": mart["fullyQualifiedName"], "depth": 1})
	if isErr || !strings.Contains(str(out["turtle"]), "prov:wasDerivedFrom") || len(list(out["edges"])) == 0 {
		t.Fatalf("entity_neighborhood: %v", out)
	}
	out, isErr = mcpTool(t, reader.c, "ontology_describe", map[string]any{})
	if isErr || len(list(out["classes"])) < 10 || object(out["prefixes"])["prov"] != "http://www.w3.org/ns/prov#" {
		t.Fatalf("ontology_describe: %v", out)
	}
}
