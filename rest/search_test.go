package rest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSearchQuery(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ path, body string }{
		{"/api/v1/services/databaseServices", `{"name":"svc","serviceType":"Mysql"}`},
		{"/api/v1/databases", `{"name":"db","service":"svc"}`},
		{"/api/v1/databaseSchemas", `{"name":"sch","database":"svc.db"}`},
		{"/api/v1/tables", `{"name":"customer_orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"BIGINT"}]}`},
		{"/api/v1/tables", `{"name":"invoices","databaseSchema":"svc.db.sch","description":"customer invoices","columns":[{"name":"id","dataType":"BIGINT"}]}`},
	} {
		if r := f.call(http.MethodPost, c.path, c.body); r.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", c.path, r.status, r.body)
		}
	}
	search := func(params string) response { return f.call(http.MethodGet, "/api/v1/search/query?"+params, "") }

	r := search("q=customer&index=table_search_index")
	if r.status != http.StatusOK {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	body := r.json(t)
	hits := body["hits"].(map[string]any)
	if total := hits["total"].(map[string]any); total["value"] != float64(2) || total["relation"] != "eq" {
		t.Fatalf("total = %v", hits["total"])
	}
	if body["timed_out"] != false || body["took"] == nil || hits["max_score"] == nil {
		t.Fatalf("answer = %s", r.body)
	}
	// Below the count limit the total is exact either way.
	for _, track := range []string{"true", "false"} {
		r := search("q=customer&index=table_search_index&track_total_hits=" + track)
		if total := r.json(t)["hits"].(map[string]any)["total"].(map[string]any); r.status != http.StatusOK || total["value"] != float64(2) || total["relation"] != "eq" {
			t.Fatalf("track_total_hits=%s: %d %s", track, r.status, r.body)
		}
	}
	list := hits["hits"].([]any)
	first := list[0].(map[string]any)
	src := first["_source"].(map[string]any)
	if first["_index"] != "table_search_index" || src["name"] != "customer_orders" || src["entityType"] != "table" ||
		first["_id"] != src["id"] || first["_score"] == nil {
		t.Fatalf("first hit = %v", first)
	}

	// size=0 counts without hits.
	c := search("q=customer&index=table&size=0").json(t)["hits"].(map[string]any)
	if c["total"].(map[string]any)["value"] != float64(2) || len(c["hits"].([]any)) != 0 || c["max_score"] != nil {
		t.Fatalf("size=0 = %v", c)
	}
	// Paging and a filter.
	p := search("q=customer&index=table&from=1&size=1").json(t)["hits"].(map[string]any)
	if len(p["hits"].([]any)) != 1 || p["hits"].([]any)[0].(map[string]any)["_source"].(map[string]any)["name"] != "invoices" {
		t.Fatalf("page 2 = %v", p)
	}
	qf := url.QueryEscape(`{"query":{"bool":{"must":[{"term":{"entityType":"databaseSchema"}}]}}}`)
	if h := search("q=*&index=all&query_filter=" + qf).json(t)["hits"].(map[string]any); h["total"].(map[string]any)["value"] != float64(1) {
		t.Fatalf("query_filter = %v", h)
	}
	if h := search("q=customer&deleted=true").json(t)["hits"].(map[string]any); h["total"].(map[string]any)["value"] != float64(0) {
		t.Fatalf("deleted=true = %v", h)
	}
	// Elasticsearch's dialect: Lucene syntax tolerated, field:value in q, keyword fields.
	for _, c := range []struct{ params, want string }{
		// Both words match only customer_orders: too few for the page, so invoices,
		// matching one word, follows it (the keyword search relaxes).
		{"q=" + url.QueryEscape(`cust* AND "orders"`), "customer_orders,invoices"},
		{"q=name:invoices", "invoices"},
		{"q=" + url.QueryEscape("customer entityType:databaseSchema") + "&index=all", ""},
		{"q=" + url.QueryEscape("sch entityType:databaseSchema") + "&index=all", "sch"},
		{"q=customer&query_filter=" + url.QueryEscape(`{"term":{"service.name.keyword":"SVC"}}`), "customer_orders,invoices"},
		{"q=customer&query_filter=" + url.QueryEscape(`{"query":{"term":{"deleted":true}}}`), ""},
		{"index=table&query_filter=" + url.QueryEscape(`{"terms":{"deleted":[true,false]}}`), "customer_orders,invoices"},
	} {
		var names []string
		for _, h := range search(c.params).json(t)["hits"].(map[string]any)["hits"].([]any) {
			names = append(names, h.(map[string]any)["_source"].(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, ","); got != c.want {
			t.Errorf("%s: hits %s, want %s", c.params, got, c.want)
		}
	}

	const sup = ". Supported: match_all, term/terms/match, bool.must/bool.filter, and bool.should on one field, on entityType, service.name, tags.tagFQN, owners.name, domains.fullyQualifiedName, deleted"
	for _, b := range []struct{ params, msg string }{
		{"q=x&index=nope", "Unknown search index nope"},
		{"q=x&deleted=maybe", "[query param deleted must be true or false]"},
		{"q=x&track_total_hits=1", "[query param track_total_hits must be true or false]"},
		{"q=x&size=abc", "[query param size must be an integer]"},
		{"q=x&from=-1", "[query param from must be greater than or equal to 0]"},
		{"q=x&size=1001", "[query param size must be less than or equal to 1000]"},
		{"q=x&from=9999&size=2", "Result window is too large, from + size must be less than or equal to: [10000] but was [10001]"},
		{"q=x&query_filter=" + url.QueryEscape(`{"query":{"bool":{"must_not":[]}}}`), "Unsupported query_filter: bool.must_not" + sup},
		{"q=x&query_filter=" + url.QueryEscape(`{"range":{"updatedAt":{"gt":0}}}`), "Unsupported query_filter: range on updatedAt" + sup},
		{"q=x&query_filter=nope", "Unsupported query_filter: malformed JSON (invalid character 'o' in literal null (expecting 'u'))" + sup},
	} {
		wantError(t, search(b.params), http.StatusBadRequest, b.msg)
	}
	if r := f.do(http.MethodGet, "/api/v1/search/query?q=x", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.status)
	}
	// A read-only principal may search.
	reader := f.userToken("reader", nil, false)
	if r := f.do(http.MethodGet, "/api/v1/search/query?q=customer", reader, nil); r.status != http.StatusOK {
		t.Fatalf("non-admin search: %d %s", r.status, r.body)
	}
}
