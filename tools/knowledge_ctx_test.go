package tools_test

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/tools"
)

// refundArticle is a markdown body with headings and paragraphs of several topics.
const refundArticle = `# Refunds

Refunds are booked as negative orders in the orders table, on the day the money goes back.

A refund never changes the original order row.

# Chargebacks

Chargebacks arrive from the payment provider a few weeks later and are kept in the disputes table.

# Fiscal calendar

The fiscal year starts on 1 February.`

func TestCreateContextMemory(t *testing.T) {
	f := newFixture(t, tools.Config{})
	args := map[string]any{"name": "fiscal_year", "question": "When does our fiscal year start?", "answer": "On 1 February.",
		"type": "fact", "scope": "organization"}
	t.Run("creates with type and scope normalized", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "create_context_memory", args)
		if out["changeType"] != meridian.EventEntityCreated || out["fullyQualifiedName"] != "fiscal_year" ||
			out["memoryType"] != "Fact" || out["memoryScope"] != "Organization" || out["entityType"] != "contextMemory" {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("the same call again changes nothing", func(t *testing.T) {
		if out := f.ok(t, f.c.Admin, "create_context_memory", args); out["changeType"] != meridian.EventEntityNoChange {
			t.Fatalf("changeType %v", out["changeType"])
		}
	})
	t.Run("a new answer under the same name updates the memory", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "create_context_memory", map[string]any{"name": "fiscal_year",
			"question": "When does our fiscal year start?", "answer": "On 1 March since 2026."})
		if out["changeType"] != meridian.EventEntityUpdated || out["answer"] != "On 1 March since 2026." || out["memoryType"] != "Fact" {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("a long answer is cut in the answer, whole in the catalog", func(t *testing.T) {
		long := strings.Repeat("word ", 1000)
		out := f.ok(t, f.c.Admin, "create_context_memory", map[string]any{"name": "long", "question": "q?", "answer": long})
		if out["answerTruncated"] != true || len(out["answer"].(string)) > 2100 {
			t.Fatalf("answer %d chars, flag %v", len(out["answer"].(string)), out["answerTruncated"])
		}
		read := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "contextMemory", "fqn": "long", "format": "json"})
		if read["totalCharacters"].(float64) < 4999 {
			t.Fatalf("stored text %v characters", read["totalCharacters"])
		}
	})
}

func TestCreateArticle(t *testing.T) {
	f := newFixture(t, tools.Config{})
	t.Run("a top-level page and a child article", func(t *testing.T) {
		parent := f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Finance_handbook", "content": "How finance works.",
			"pageType": "page", "title": "Finance handbook"})
		if parent["fullyQualifiedName"] != "Finance_handbook" || parent["pageType"] != "Page" || parent["displayName"] != "Finance handbook" {
			t.Fatalf("parent %v", parent)
		}
		child := f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Refund_policy", "body": refundArticle,
			"parentPage": "Finance_handbook", "owners": []any{"admin"}})
		if child["fullyQualifiedName"] != "Finance_handbook.Refund_policy" || child["pageType"] != "Article" ||
			obj(child["parent"])["fullyQualifiedName"] != "Finance_handbook" || len(list(child["owners"])) != 1 {
			t.Fatalf("child %v", child)
		}
	})
	t.Run("the same article again changes nothing", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Refund_policy", "content": refundArticle,
			"parent": "Finance_handbook", "owners": []any{"admin"}})
		if out["changeType"] != meridian.EventEntityNoChange {
			t.Fatalf("changeType %v", out["changeType"])
		}
	})
}

func TestGetKnowledgeContent(t *testing.T) {
	f := newFixture(t, tools.Config{})
	f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Finance_handbook", "content": "How finance works."})
	f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Refund_policy", "content": refundArticle,
		"parent": "Finance_handbook", "description": "How refunds and chargebacks are recorded."})
	f.ok(t, f.c.Admin, "create_context_memory", map[string]any{"name": "fiscal_year",
		"question": "When does our fiscal year start?", "answer": "On 1 February."})
	f.c.Create(t, "glossary", meridian.Entity{"name": "Business", "description": "Business terms"})
	f.c.Create(t, "glossaryTerm", meridian.Entity{"name": "Revenue", "glossary": "Business",
		"description": "Income from sales, before costs.", "synonyms": []any{"Turnover"}})
	f.ok(t, f.c.Admin, "create_metric", map[string]any{"name": "total_revenue", "description": "Sum of order amounts.",
		"metricExpressionLanguage": "SQL", "metricExpressionCode": "SUM(amount)"})
	const article = "Finance_handbook.Refund_policy"

	t.Run("without query the whole text as markdown", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": article})
		md := out["markdown"].(string)
		if !strings.HasPrefix(md, "# Refund_policy\n") || !strings.Contains(md, "## Description") ||
			!strings.Contains(md, "The fiscal year starts on 1 February.") || out["contentTruncated"] != false {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("each kind's knowledge fields", func(t *testing.T) {
		for _, c := range []struct{ typ, fqn, want string }{
			{"contextMemory", "fiscal_year", "## Answer\n\nOn 1 February."},
			{"glossaryTerm", "Business.Revenue", "## Synonyms\n\nTurnover"},
			{"metric", "total_revenue", "SUM(amount) (SQL)"},
		} {
			out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entity_type": c.typ, "name": c.fqn})
			if !strings.Contains(out["markdown"].(string), c.want) {
				t.Errorf("%s %s: markdown %q lacks %q", c.typ, c.fqn, out["markdown"], c.want)
			}
		}
	})
	t.Run("json format gives sections", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "contextMemory", "fqn": "fiscal_year", "format": "JSON"})
		secs := list(out["sections"])
		if out["markdown"] != nil || len(secs) != 2 || obj(secs[0])["field"] != "question" || obj(secs[1])["text"] != "On 1 February." {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("a query picks the relevant passages first", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": article,
			"query": "where are chargebacks kept?", "size": 1})
		ps := list(out["passages"])
		if len(ps) != 1 || !strings.Contains(obj(ps[0])["text"].(string), "disputes table") ||
			obj(ps[0])["heading"] != "Chargebacks" || obj(ps[0])["truncated"] != true || out["contentTruncated"] != true {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("plurals match singulars", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": article, "query": "refund order"})
		ps := list(out["passages"])
		if len(ps) == 0 || !strings.Contains(obj(ps[0])["text"].(string), "negative orders") {
			t.Fatalf("got %v", ps)
		}
	})
	t.Run("no match returns the first passages with a hint", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": article, "query": "kubernetes"})
		if num(out["matchedPassages"]) != 0 || num(out["returned"]) != 3 || out["hint"] == nil ||
			obj(list(out["passages"])[0])["field"] != "description" {
			t.Fatalf("got %v", out)
		}
	})
	t.Run("size above 10 is clamped", func(t *testing.T) {
		long := strings.Repeat("Orders are shipped daily.\n\n", 40)
		f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Shipping", "content": long})
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Shipping", "query": "orders", "size": 50})
		if num(out["returned"]) != 10 || num(out["totalPassages"]) != 40 {
			t.Fatalf("returned %v of %v", out["returned"], out["totalPassages"])
		}
	})
	t.Run("a text longer than the budget is cut and flagged", func(t *testing.T) {
		big := strings.Repeat("Paragraph about invoices and payments. ", 5000) // 195,000 characters
		f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Big", "content": big})
		res := f.call(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Big"})
		if res.IsError || res.Structured["contentTruncated"] != true || len(res.Text) > tools.DefaultBudget || res.Structured["hint"] == nil {
			t.Fatalf("isError %v, %d characters, flag %v", res.IsError, len(res.Text), res.Structured["contentTruncated"])
		}
		out := f.ok(t, f.c.Admin, "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Big", "query": "invoices", "size": 10})
		for _, p := range list(out["passages"]) {
			if n := len([]rune(obj(p)["text"].(string))); n > 600 || obj(p)["truncated"] != true {
				t.Fatalf("passage of %d characters, truncated %v", n, obj(p)["truncated"])
			}
		}
	})
}

func TestKnowledgeToolsBadInput(t *testing.T) {
	f := newFixture(t, tools.Config{})
	f.ok(t, f.c.Admin, "create_article", map[string]any{"name": "Handbook", "content": "Text."})
	for _, c := range []struct {
		name   string
		tool   string
		args   map[string]any
		status int
		msg    string
	}{
		{"memory without question", "create_context_memory", map[string]any{"name": "m", "answer": "a"}, 400, "'question' is required"},
		{"memory without name", "create_context_memory", map[string]any{"question": "q", "answer": "a"}, 400, "'name' is required"},
		{"memory with a blank answer", "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "   "}, 400, "'answer' is required"},
		{"memory with an unknown type", "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "a", "type": "Rumour"}, 400, "must be one of"},
		{"memory with an unknown scope", "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "a", "memoryScope": "Galaxy"}, 400, "must be one of"},
		{"memory with a name holding ::", "create_context_memory", map[string]any{"name": "a::b", "question": "q", "answer": "a"}, 400, "name"},
		{"memory with an unknown owner", "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "a", "owners": []any{"nobody"}}, 404, "nobody"},
		{"memory with an unknown tag", "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "a", "tags": []any{"No.Such"}}, 404, "No.Such"},
		{"memory with an unknown argument", "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "a", "colour": "red"}, 400, "Unknown parameter"},
		{"article without content", "create_article", map[string]any{"name": "x"}, 400, "'content' is required"},
		{"article under a missing parent", "create_article", map[string]any{"name": "x", "content": "c", "parent": "NoSuchPage"}, 404, "NoSuchPage"},
		{"article with an unknown pageType", "create_article", map[string]any{"name": "x", "content": "c", "pageType": "Blog"}, 400, "must be one of"},
		{"article over 1,000,000 characters", "create_article", map[string]any{"name": "x", "content": strings.Repeat("a", 1000001)}, 400, "content"},
		{"read without entityType", "get_knowledge_content", map[string]any{"fqn": "Handbook"}, 400, "'entityType' is required"},
		{"read without fqn", "get_knowledge_content", map[string]any{"entityType": "page"}, 400, "'fqn' is required"},
		{"read an unknown entityType", "get_knowledge_content", map[string]any{"entityType": "table", "fqn": "Handbook"}, 400, "must be one of"},
		{"read an unknown fqn", "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "NoSuchPage"}, 404, "NoSuchPage"},
		{"read with size 0", "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Handbook", "query": "x", "size": 0}, 400, "at least 1"},
		{"read with size not a number", "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Handbook", "size": "three"}, 400, "integer"},
		{"read with an unknown format", "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Handbook", "format": "html"}, 400, "must be one of"},
		{"read with a query too long", "get_knowledge_content", map[string]any{"entityType": "page", "fqn": "Handbook", "query": strings.Repeat("x", 1001)}, 400, "query"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := f.fail(t, f.c.Admin, c.tool, c.args)
			if body.StatusCode != c.status || !strings.Contains(body.Error, c.msg) {
				t.Fatalf("got %d %q (hint %q), want %d and %q", body.StatusCode, body.Error, body.Hint, c.status, c.msg)
			}
		})
	}
	t.Run("write tools are refused to a read-only token", func(t *testing.T) {
		ro := *f.c.Admin
		ro.Scopes = []string{meridian.ScopeRead}
		body := f.fail(t, &ro, "create_context_memory", map[string]any{"name": "m", "question": "q", "answer": "a"})
		if body.StatusCode != 403 {
			t.Fatalf("got %v", body)
		}
	})
}
