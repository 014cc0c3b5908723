package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// semanticQuestion is a natural question that shares no every-word match with the
// orders table's text, so strict keyword search finds nothing.
const semanticQuestion = "which table has customer orders?"

// seedSemanticCatalog creates over REST a few tables with descriptions, a glossary
// term, a context memory and a knowledge article, waits until the vectors indexer has
// caught up, and returns the orders table's FQN.
func seedSemanticCatalog(t *testing.T, s *server) string {
	t.Helper()
	c := s.admin
	c.must(http.StatusCreated, "POST", "/api/v1/services/databaseServices", map[string]any{"name": "shop_db", "serviceType": "Mysql"})
	c.must(http.StatusCreated, "POST", "/api/v1/databases", map[string]any{"name": "sales", "service": "shop_db"})
	c.must(http.StatusCreated, "POST", "/api/v1/databaseSchemas", map[string]any{"name": "public", "database": "shop_db.sales"})
	for _, tb := range []struct{ name, desc string }{
		{"orders", "Every purchase a customer makes in the web shop, one row per order with its amount."},
		{"inventory", "Stock levels of each product in every warehouse."},
		{"employees", "Staff records: hire date, department and salary band."},
		{"web_sessions", "Clickstream sessions of visitors on the website."},
	} {
		c.must(http.StatusCreated, "POST", "/api/v1/tables", map[string]any{"name": tb.name, "databaseSchema": "shop_db.sales.public",
			"description": tb.desc, "columns": []any{map[string]any{"name": "id", "dataType": "BIGINT"}}})
	}
	c.must(http.StatusCreated, "POST", "/api/v1/glossaries", map[string]any{"name": "Business", "description": "Business words"})
	c.must(http.StatusCreated, "POST", "/api/v1/glossaryTerms", map[string]any{"name": "Churn", "glossary": "Business",
		"description": "The share of customers who stop buying from us within a month."})
	c.must(http.StatusCreated, "POST", "/api/v1/contextMemories", map[string]any{"name": "fiscal_year",
		"question": "When does our fiscal year start?", "answer": "The fiscal year starts on 1 February."})
	c.must(http.StatusCreated, "POST", "/api/v1/knowledgeCenter/pages", map[string]any{"name": "Refund_policy",
		"content": "# Refunds\n\nCustomers may return goods within 30 days for a full refund of the purchase price."})
	waitForVectors(t, s)
	return "shop_db.sales.public.orders"
}

// waitForVectors polls the outbox consumers until the vectors indexer has no backlog.
func waitForVectors(t *testing.T, s *server) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, st := range list(s.admin.must(http.StatusOK, "GET", "/api/v1/events/consumers", nil)["data"]) {
			if m := object(st); m["name"] == "vectors" && m["pending"] == float64(0) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the vectors indexer did not catch up within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hitFQNs are the fullyQualifiedNames of an Elasticsearch-shaped answer's hits.
func hitFQNs(answer map[string]any) []string {
	var out []string
	for _, h := range list(object(answer["hits"])["hits"]) {
		out = append(out, str(object(object(h)["_source"])["fullyQualifiedName"]))
	}
	return out
}

func inTop3(fqns []string, want string) bool {
	i := slices.Index(fqns, want)
	return i >= 0 && i < 3
}

func TestSemanticSearchOverREST(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	orders := seedSemanticCatalog(t, s)
	c := s.admin
	q := url.QueryEscape(semanticQuestion)

	keyword := c.must(http.StatusOK, "GET", "/api/v1/search/query?index=table&q="+q, nil)
	if n := object(object(keyword["hits"])["total"])["value"]; n != float64(0) {
		t.Logf("strict keyword search now finds %v hits for %q (keyword forgiveness has landed?)", n, semanticQuestion)
	}
	hybrid := c.must(http.StatusOK, "GET", "/api/v1/search/hybrid?index=table&q="+q, nil)
	if got := hitFQNs(hybrid); !inTop3(got, orders) {
		t.Fatalf("hybrid: orders not in the top 3: %v", got)
	}
	semantic := c.must(http.StatusOK, "GET", "/api/v1/search/semantic?q="+q+"&size=3", nil)
	hits := list(object(semantic["hits"])["hits"])
	if len(hits) == 0 || len(hits) > 3 {
		t.Fatalf("semantic: %d hits", len(hits))
	}
	for _, h := range hits {
		m := object(h)
		if m["_score"] == nil || len(list(object(m["highlight"])["passage"])) != 1 || m["_index"] == "" {
			t.Fatalf("semantic hit without _score, _index or highlight.passage: %v", m)
		}
	}
	if got := hitFQNs(semantic); !inTop3(got, orders) {
		t.Errorf("semantic: orders not in the top 3: %v", got)
	}
	vq := c.must(http.StatusOK, "POST", "/api/v1/search/vector/query", map[string]any{"query": semanticQuestion, "size": 3,
		"filters": map[string]any{"entityType": []any{"table"}}})
	var vfqns []string
	for _, h := range list(vq["hits"]) {
		m := object(h)
		if m["_score"] == nil || m["entityType"] != "table" {
			t.Fatalf("vector/query hit: %v", m)
		}
		vfqns = append(vfqns, str(m["fullyQualifiedName"]))
	}
	if !inTop3(vfqns, orders) || vq["tookMillis"] == nil {
		t.Errorf("vector/query: %v", vq)
	}

	for _, bad := range []struct{ method, path string }{
		{"GET", "/api/v1/search/hybrid?q="},
		{"GET", "/api/v1/search/semantic?q=orders&threshold=2"},
		{"GET", "/api/v1/search/semantic?q=orders&k=0"},
		{"GET", "/api/v1/search/semantic?q=orders&index=nosuch"},
		{"GET", "/api/v1/search/hybrid?q=orders&size=100000"},
		{"GET", "/api/v1/search/hybrid?q=" + strings.Repeat("a", 1200)},
	} {
		expectError(t, c.do(bad.method, bad.path, nil, nil), http.StatusBadRequest, "")
	}
	expectError(t, c.do("POST", "/api/v1/search/vector/query", map[string]any{"query": "orders", "filters": map[string]any{"owner": []any{"x"}}}, nil),
		http.StatusBadRequest, "known filters")
	expectError(t, c.do("POST", "/api/v1/search/vector/query", map[string]any{"query": " "}, nil), http.StatusBadRequest, "query is required")
	expectError(t, s.client(t, "").do("GET", "/api/v1/search/hybrid?q=orders", nil, nil), http.StatusUnauthorized, "")
}

func TestSemanticToolsOverHTTP(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	orders := seedSemanticCatalog(t, s)
	run := m.runTSClient(t, httpTarget(s, "/mcp", s.admin.token), []call{
		{Tool: "semantic_search", Arguments: map[string]any{"query": semanticQuestion, "filters": map[string]any{"entityType": []any{"table"}}, "size": 3}},
		{Tool: "find_context", Arguments: map[string]any{"query": semanticQuestion, "format": "json"}},
		{Tool: "search_company_context", Arguments: map[string]any{"query": "when does the fiscal year start", "size": 1}},
		{Tool: "nlq_search", Arguments: map[string]any{"query": "tables in shop_db about customer purchases"}},
		{Tool: "search_metadata", Arguments: map[string]any{"query": semanticQuestion, "entityType": "table"}},
		{Tool: "semantic_search", Arguments: map[string]any{"query": "orders", "filters": map[string]any{"owner": []any{"x"}}}},
	})
	fqns := func(r toolResult) []string {
		var out []string
		for _, h := range list(r.StructuredContent["results"]) {
			out = append(out, str(object(h)["fullyQualifiedName"]))
		}
		return out
	}
	for i, r := range run.Results[:4] {
		if r.IsError || r.StructuredContent == nil {
			t.Fatalf("call %d %s failed: %s", i, r.Tool, r)
		}
	}
	if got := fqns(run.Results[0]); !inTop3(got, orders) {
		t.Errorf("semantic_search: %v", got)
	}
	if h := object(list(run.Results[0].StructuredContent["results"])[0]); h["passage"] == nil || h["score"] == nil {
		t.Errorf("semantic_search hit without passage or score: %v", h)
	}
	if got := fqns(run.Results[1]); !inTop3(got, orders) {
		t.Errorf("find_context: %v", got)
	}
	company := run.Results[2].StructuredContent
	if got := fqns(run.Results[2]); len(got) != 1 || got[0] != "fiscal_year" || company["nextCursor"] == nil {
		t.Errorf("search_company_context: %v", company)
	}
	nlq := run.Results[3].StructuredContent
	in := object(nlq["interpretation"])
	if fmt.Sprint(in["entityTypes"]) != "[table]" || fmt.Sprint(in["services"]) != "[shop_db]" || in["residualQuery"] != "customer purchases" {
		t.Errorf("nlq_search interpretation: %v", in)
	}
	if got := fqns(run.Results[3]); len(got) == 0 || got[0] != orders {
		t.Errorf("nlq_search: %v", got)
	}
	if n := run.Results[4].StructuredContent["totalFound"]; n != float64(0) {
		t.Logf("search_metadata now finds %v hits for %q (keyword forgiveness has landed?)", n, semanticQuestion)
	}
	if r := run.Results[5]; !r.IsError || r.Text == nil || !strings.Contains(*r.Text, "known filters: entityType, service, tags") {
		t.Errorf("unknown filter: %s", r)
	}
}
