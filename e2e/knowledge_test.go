package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestKnowledgeKindsOverREST drives knowledge articles (pages), context memories and
// personas through REST like every other kind: create, get by name, the standard
// operations (PUT, PATCH, versions, delete and restore) and their own rules.
func TestKnowledgeKindsOverREST(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin

	t.Run("page", func(t *testing.T) {
		c.must(http.StatusCreated, "POST", "/api/v1/knowledgeCenter/pages", map[string]any{
			"name": "Finance_handbook", "pageType": "Page", "content": "How finance works."})
		e := c.must(http.StatusCreated, "POST", "/api/v1/knowledgeCenter/pages", map[string]any{
			"name": "Refund_policy", "parent": "Finance_handbook", "description": "Refunds.", "content": "# Refunds\n\nBooked as negative orders."})
		if e["fullyQualifiedName"] != "Finance_handbook.Refund_policy" || e["pageType"] != "Article" ||
			str(object(e["parent"])["fullyQualifiedName"]) != "Finance_handbook" {
			t.Fatalf("created %v", e)
		}
		kids := c.must(http.StatusOK, "GET", "/api/v1/knowledgeCenter/pages?parent=Finance_handbook", nil)
		if len(list(kids["data"])) != 1 {
			t.Errorf("pages under Finance_handbook = %v", kids["data"])
		}
		expectError(t, c.do("POST", "/api/v1/knowledgeCenter/pages", map[string]any{"name": "x", "parent": "NoSuchPage"}, nil), 404, "NoSuchPage")
		expectError(t, c.do("POST", "/api/v1/knowledgeCenter/pages", map[string]any{"name": "x", "pageType": "Blog"}, nil), 400, "pageType")
		expectError(t, c.do("PATCH", "/api/v1/knowledgeCenter/pages/name/"+esc("Finance_handbook.Refund_policy"),
			ops(patchOp("replace", "/parent", map[string]any{"id": e["id"], "type": "page"})), nil), 400, "parent")
		standardOperations(t, s, "/api/v1/knowledgeCenter/pages", "name/", e, map[string]any{
			"name": "Refund_policy", "parent": "Finance_handbook", "description": "Refunds and chargebacks.",
			"content": "# Refunds\n\nBooked as negative orders."})
	})

	t.Run("contextMemory", func(t *testing.T) {
		e := c.must(http.StatusCreated, "POST", "/api/v1/contextMemories", map[string]any{
			"name": "fiscal_year", "question": "When does our fiscal year start?", "answer": "On 1 February."})
		if e["fullyQualifiedName"] != "fiscal_year" || e["memoryType"] != "Fact" || e["memoryScope"] != "Organization" {
			t.Fatalf("created %v", e)
		}
		expectError(t, c.do("POST", "/api/v1/contextMemories", map[string]any{"name": "x", "question": "q"}, nil), 400, "answer")
		expectError(t, c.do("POST", "/api/v1/contextMemories", map[string]any{"name": "x", "question": " ", "answer": "a"}, nil), 400, "question must not be blank")
		expectError(t, c.do("POST", "/api/v1/contextMemories", map[string]any{"name": "x", "question": "q", "answer": "a", "memoryScope": "Galaxy"}, nil), 400, "memoryScope")
		if l := c.must(http.StatusOK, "GET", "/api/v1/contextMemories?memoryScope=Organization", nil); len(list(l["data"])) != 1 {
			t.Errorf("memoryScope=Organization = %v", l["data"])
		}
		standardOperations(t, s, "/api/v1/contextMemories", "name/", e, map[string]any{
			"name": "fiscal_year", "question": "When does our fiscal year start?", "answer": "On 1 February.",
			"description": "Finance calendar."})
	})

	t.Run("persona", func(t *testing.T) {
		e := c.must(http.StatusCreated, "POST", "/api/v1/personas", map[string]any{
			"name": "DataEngineer", "displayName": "Data Engineer", "context": "Prefer lineage and quality details."})
		id := str(e["id"])
		if e["fullyQualifiedName"] != "DataEngineer" || e["default"] != false {
			t.Fatalf("created %v", e)
		}
		if g := c.must(http.StatusOK, "GET", "/api/v1/personas/name/DataEngineer", nil); g["id"] != id || g["context"] != "Prefer lineage and quality details." {
			t.Errorf("by name = %v", g)
		}
		p := c.must(http.StatusOK, "PATCH", "/api/v1/personas/"+id, ops(patchOp("replace", "/context", "Show pipelines first.")))
		wantVersion(t, p, 0.2)
		if fc := fieldChange(p, "fieldsUpdated", "context"); fc == nil {
			t.Errorf("changeDescription = %v", p["changeDescription"])
		}
		h := c.must(http.StatusOK, "GET", "/api/v1/personas/"+id+"/versions", nil)
		if len(list(h["versions"])) != 2 {
			t.Errorf("versions = %v", h["versions"])
		}
		old := c.must(http.StatusOK, "GET", "/api/v1/personas/"+id+"/versions/0.1", nil)
		if old["context"] != "Prefer lineage and quality details." {
			t.Errorf("version 0.1 = %v", old)
		}
		expectError(t, c.do("POST", "/api/v1/personas", map[string]any{"name": "x", "context": 42}, nil), 400, "context")
	})
}

// TestTypeScriptSDKKnowledgeTools calls the knowledge tools with the official TypeScript
// SDK over streamable HTTP, against a catalog seeded over REST: a memory and an article
// are written, then read back whole and by the passages a question picks.
func TestTypeScriptSDKKnowledgeTools(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	c := s.admin
	c.must(http.StatusCreated, "POST", "/api/v1/glossaries", map[string]any{"name": "BusinessTerms", "description": "Terms."})
	c.must(http.StatusCreated, "POST", "/api/v1/glossaryTerms", map[string]any{"name": "Revenue", "glossary": "BusinessTerms",
		"description": "Income from sales, before costs.", "synonyms": []any{"Turnover"}})
	c.must(http.StatusCreated, "POST", "/api/v1/knowledgeCenter/pages", map[string]any{"name": "Finance_handbook", "pageType": "Page",
		"content": "How finance works."})
	article := "# Refunds\n\nRefunds are booked as negative orders on the day the money goes back.\n\n" +
		"# Chargebacks\n\nChargebacks arrive from the payment provider weeks later and are kept in the disputes table.\n\n" +
		"# Calendar\n\nMonth-end close takes three working days."

	token := s.cliToken(t, "steward", "DataSteward", "1h")
	run := m.runTSClient(t, httpTarget(s, "/mcp", token), []call{
		{"create_context_memory", map[string]any{"name": "fiscal_year", "question": "When does our fiscal year start?",
			"answer": "On 1 February.", "type": "Fact", "scope": "Organization"}},
		{"create_context_memory", map[string]any{"name": "fiscal_year", "question": "When does our fiscal year start?",
			"answer": "On 1 March since 2026."}},
		{"create_article", map[string]any{"name": "Refund_policy", "parent": "Finance_handbook", "title": "Refund policy",
			"content": article}},
		{"get_knowledge_content", map[string]any{"entityType": "contextMemory", "fqn": "fiscal_year"}},
		{"get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Finance_handbook.Refund_policy",
			"query": "where are chargebacks stored?", "size": 1}},
		{"get_knowledge_content", map[string]any{"entity_type": "glossaryTerm", "fqn": "BusinessTerms.Revenue", "format": "json"}},
		{"get_knowledge_content", map[string]any{"entityType": "table", "fqn": "x"}},
		{"get_knowledge_content", map[string]any{"entityType": "page", "fqn": "No_such_page"}},
		{"create_context_memory", map[string]any{"name": "m", "answer": "a"}},
	})
	for _, name := range []string{"create_context_memory", "create_article", "get_knowledge_content"} {
		if !slices.Contains(run.Tools, name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	if len(run.Results) != 9 {
		t.Fatalf("results = %d, want 9", len(run.Results))
	}
	for i, r := range run.Results[:6] {
		if r.Error != nil || r.IsError || r.StructuredContent == nil {
			t.Fatalf("call %d %s failed: %s", i, r.Tool, r)
		}
	}
	sc := func(i int) map[string]any { return run.Results[i].StructuredContent }

	if sc(0)["changeType"] != "entityCreated" || sc(1)["changeType"] != "entityUpdated" || sc(1)["updatedBy"] != "steward" {
		t.Errorf("upsert by name: %v then %v", run.Results[0], run.Results[1])
	}
	if sc(2)["fullyQualifiedName"] != "Finance_handbook.Refund_policy" || sc(2)["displayName"] != "Refund policy" {
		t.Errorf("create_article = %s", run.Results[2])
	}
	if md := str(sc(3)["markdown"]); !strings.Contains(md, "On 1 March since 2026.") || !strings.Contains(md, "When does our fiscal year start?") {
		t.Errorf("memory content = %q", md)
	}
	ps := list(sc(4)["passages"])
	if len(ps) != 1 || !strings.Contains(str(object(ps[0])["text"]), "disputes table") || object(ps[0])["heading"] != "Chargebacks" ||
		sc(4)["contentTruncated"] != true {
		t.Errorf("passages for the chargebacks question = %s", run.Results[4])
	}
	secs := list(sc(5)["sections"])
	if len(secs) != 2 || str(object(secs[0])["text"]) != "Income from sales, before costs." || str(object(secs[1])["text"]) != "Turnover" {
		t.Errorf("glossary term sections = %s", run.Results[5])
	}
	for i, w := range []struct {
		status int
		msg    string
	}{{400, "must be one of"}, {404, "No_such_page"}, {400, "'question' is required"}} {
		r := run.Results[6+i]
		if !r.IsError || r.Text == nil || r.StructuredContent != nil {
			t.Errorf("%s: want an isError result: %s", r.Tool, r)
			continue
		}
		var body struct {
			Error      string  `json:"error"`
			StatusCode float64 `json:"statusCode"`
			Hint       string  `json:"hint"`
		}
		if err := json.Unmarshal([]byte(*r.Text), &body); err != nil || int(body.StatusCode) != w.status ||
			!strings.Contains(body.Error, w.msg) || body.Hint == "" {
			t.Errorf("%s: %s, want %d with %q and a hint", r.Tool, *r.Text, w.status, w.msg)
		}
	}
	// The memory the tool wrote is a catalog entity like any other.
	mem := c.must(http.StatusOK, "GET", "/api/v1/contextMemories/name/fiscal_year", nil)
	if mem["answer"] != "On 1 March since 2026." || mem["memoryType"] != "Fact" {
		t.Errorf("memory over REST = %v", mem)
	}
	wantVersion(t, mem, 0.2)
}
