package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Search conformance: every driver ranks, filters and pages keyword search alike, and
// a write is searchable as soon as it returns.

// Search runs a search as admin and fails the test on error.
func (f *Fixture) Search(r store.SearchRequest) store.SearchResponse {
	f.T.Helper()
	res, err := f.E.Search(f.Ctx, f.Admin, r)
	if err != nil {
		f.T.Fatalf("search %+v: %v", r, err)
	}
	return res
}

// hitNames returns the _source names of the hits, in order.
func hitNames(t *testing.T, res store.SearchResponse) []string {
	t.Helper()
	names := []string{}
	for _, h := range res.Hits.Hits {
		var src map[string]any
		if err := json.Unmarshal(h.Source, &src); err != nil {
			t.Fatalf("hit %s: bad _source %s: %v", h.ID, h.Source, err)
		}
		name, _ := src["name"].(string)
		names = append(names, name)
	}
	return names
}

func wantNames(t *testing.T, what string, res store.SearchResponse, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := hitNames(t, res); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: hits = %q, want %q", what, got, want)
	}
}

func boolp(b bool) *bool { return &b }

// testSearchRanking: name and display name outrank description, which outranks column
// names; the answer has Elasticsearch's shape.
func testSearchRanking(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("zeta_notes", `[{"name":"ledger_id","dataType":"BIGINT"}]`)
	f.Create("table", `{"name":"alpha","description":"The ledger of record","databaseSchema":"svc.db.sch",
		"columns":[{"name":"id","dataType":"BIGINT"}]}`)
	f.Create("table", `{"name":"gamma","displayName":"Ledger Book","databaseSchema":"svc.db.sch",
		"columns":[{"name":"id","dataType":"BIGINT"}]}`)
	ledger := f.Table("ledger", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("unrelated", `[{"name":"id","dataType":"BIGINT"}]`)

	res := f.Search(store.SearchRequest{Query: "ledger", Index: "table"})
	wantNames(t, "ledger", res, "ledger", "gamma", "alpha", "zeta_notes")
	if res.Hits.Total.Value != 4 || res.Hits.Total.Relation != "eq" {
		t.Fatalf("total = %+v", res.Hits.Total)
	}
	hits := res.Hits.Hits
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("scores not descending: %v then %v", hits[i-1].Score, hits[i].Score)
		}
	}
	if hits[0].Score <= hits[1].Score || hits[1].Score <= hits[2].Score || hits[2].Score <= hits[3].Score {
		t.Fatalf("every field tier must score strictly lower: %v %v %v %v", hits[0].Score, hits[1].Score, hits[2].Score, hits[3].Score)
	}
	if res.Hits.MaxScore == nil || *res.Hits.MaxScore != hits[0].Score {
		t.Fatalf("max_score = %v, want %v", res.Hits.MaxScore, hits[0].Score)
	}
	top := hits[0]
	if top.Index != "table_search_index" || top.ID != ledger.ID() {
		t.Fatalf("top hit = %s %s, want table_search_index %s", top.Index, top.ID, ledger.ID())
	}
	var src map[string]any
	if err := json.Unmarshal(top.Source, &src); err != nil || src["entityType"] != "table" ||
		src["fullyQualifiedName"] != "svc.db.sch.ledger" || src["id"] != ledger.ID() {
		t.Fatalf("_source = %s (%v)", top.Source, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Took     *int64 `json:"took"`
		TimedOut *bool  `json:"timed_out"`
		Hits     struct {
			Total struct {
				Value    int    `json:"value"`
				Relation string `json:"relation"`
			} `json:"total"`
			MaxScore *float64 `json:"max_score"`
			Hits     []struct {
				Index  string         `json:"_index"`
				ID     string         `json:"_id"`
				Score  *float64       `json:"_score"`
				Source map[string]any `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(b, &shape); err != nil || shape.Took == nil || shape.TimedOut == nil || *shape.TimedOut ||
		shape.Hits.Total.Value != 4 || shape.Hits.MaxScore == nil || len(shape.Hits.Hits) != 4 ||
		shape.Hits.Hits[0].Score == nil || shape.Hits.Hits[0].Source["name"] != "ledger" {
		t.Fatalf("response JSON = %s (%v)", b, err)
	}

	none := f.Search(store.SearchRequest{Query: "nosuchword", Index: "table"})
	if none.Hits.Total.Value != 0 || len(none.Hits.Hits) != 0 || none.Hits.MaxScore != nil {
		t.Fatalf("no match = %+v", none.Hits)
	}
	if b, _ := json.Marshal(none); !json.Valid(b) || string(mustField(t, b, "hits", "hits")) != "[]" ||
		string(mustField(t, b, "hits", "max_score")) != "null" {
		t.Fatalf("empty answer JSON = %s", b)
	}
}

func mustField(t *testing.T, b []byte, path ...string) json.RawMessage {
	t.Helper()
	raw := json.RawMessage(b)
	for _, p := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		raw = m[p]
	}
	return raw
}

// testSearchWords: snake_case and camelCase names are split into words, every word is
// required, and a prefix matches.
func testSearchWords(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("customer_orders", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("customerAccounts", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("invoices", `[{"name":"id","dataType":"BIGINT"}]`)

	wantNames(t, "orders", f.Search(store.SearchRequest{Query: "orders", Index: "table"}), "customer_orders")
	wantNames(t, "customer orders", f.Search(store.SearchRequest{Query: "customer orders", Index: "table"}), "customer_orders")
	wantNames(t, "customer", f.Search(store.SearchRequest{Query: "customer", Index: "table"}), "customerAccounts", "customer_orders")
	wantNames(t, "cust", f.Search(store.SearchRequest{Query: "cust", Index: "table"}), "customerAccounts", "customer_orders")
	wantNames(t, "Customer ACC (case, prefix)", f.Search(store.SearchRequest{Query: "Customer ACC", Index: "table"}), "customerAccounts")
	wantNames(t, "customerOrders (camelCase query)", f.Search(store.SearchRequest{Query: "customerOrders", Index: "table"}), "customer_orders")
	wantNames(t, "every word required", f.Search(store.SearchRequest{Query: "customer invoices", Index: "table"}))
	wantNames(t, "lucene syntax is tolerated", f.Search(store.SearchRequest{Query: `cust* AND "orders"`, Index: "table"}), "customer_orders")
	wantNames(t, "field:value keeps the value", f.Search(store.SearchRequest{Query: "name:invoices", Index: "table"}), "invoices")
	all := f.Search(store.SearchRequest{Query: "*", Index: "table"})
	wantNames(t, "match all in FQN order", all, "customerAccounts", "customer_orders", "invoices")
	if all.Hits.Total.Value != 3 {
		t.Fatalf("match all total = %d", all.Hits.Total.Value)
	}
	// Parent names are searchable at the lowest weight: the schema's children match.
	if got := f.Search(store.SearchRequest{Query: "sch", Index: "table"}); got.Hits.Total.Value != 3 {
		t.Fatalf("parent FQN words: total = %d, want 3", got.Hits.Total.Value)
	}
}

// testSearchStableOrder: equal scores are ordered by FQN, whatever the insertion order.
func testSearchStableOrder(t *testing.T, f *Fixture) {
	f.Hierarchy()
	for _, n := range []string{"sales_d", "sales_b", "sales_c", "sales_a"} {
		f.Table(n, `[{"name":"id","dataType":"BIGINT"}]`)
	}
	res := f.Search(store.SearchRequest{Query: "sales", Index: "table"})
	wantNames(t, "equal scores", res, "sales_a", "sales_b", "sales_c", "sales_d")
	for _, h := range res.Hits.Hits[1:] {
		if h.Score != res.Hits.Hits[0].Score {
			t.Fatalf("equal documents must score alike: %v", res.Hits.Hits)
		}
	}
	for i := 0; i < 3; i++ {
		wantNames(t, "repeat", f.Search(store.SearchRequest{Query: "sales", Index: "table"}), "sales_a", "sales_b", "sales_c", "sales_d")
	}
}

// testSearchIndexes: the index parameter selects kinds.
func testSearchIndexes(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("orders", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Create("glossary", `{"name":"OrdersGlossary","description":"about orders"}`)
	f.Create("dashboardService", `{"name":"looker","serviceType":"Looker"}`)
	f.Create("dashboard", `{"name":"orders_dash","service":"looker"}`)

	wantNames(t, "table", f.Search(store.SearchRequest{Query: "orders", Index: "table"}), "orders")
	wantNames(t, "table_search_index", f.Search(store.SearchRequest{Query: "orders", Index: "table_search_index"}), "orders")
	wantNames(t, "dashboard_search_index", f.Search(store.SearchRequest{Query: "orders", Index: "dashboard_search_index"}), "orders_dash")
	wantNames(t, "dataAsset (no glossary)", f.Search(store.SearchRequest{Query: "orders", Index: "dataAsset"}), "orders", "orders_dash")
	wantNames(t, "default index is dataAsset", f.Search(store.SearchRequest{Query: "orders"}), "orders", "orders_dash")
	// The glossary also has the word in its description, so it outranks the dashboard.
	wantNames(t, "all", f.Search(store.SearchRequest{Query: "orders", Index: "all"}), "orders", "OrdersGlossary", "orders_dash")
	wantNames(t, "glossary", f.Search(store.SearchRequest{Query: "orders", Index: "glossary"}), "OrdersGlossary")
	_, err := f.E.Search(f.Ctx, f.Admin, store.SearchRequest{Query: "orders", Index: "nonsense_index"})
	WantCode(t, err, meridian.EInvalid)
	WantMessage(t, err, "Unknown search index nonsense_index")
}

// testSearchFilters: term filters on entityType, service, tags, owners, domains.
func testSearchFilters(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Create("databaseService", `{"name":"warehouse","serviceType":"Mysql"}`)
	f.Create("database", `{"name":"dw","service":"warehouse"}`)
	f.Create("databaseSchema", `{"name":"main","database":"warehouse.dw"}`)
	f.Create("classification", `{"name":"PII","description":"personal data"}`)
	f.Create("tag", `{"name":"Sensitive","description":"sensitive","classification":"PII"}`)
	alice := f.Create("user", `{"name":"alice","email":"alice@example.com"}`)
	f.Create("domain", `{"name":"Sales","description":"The sales domain","domainType":"Source-aligned"}`)

	f.Create("table", `{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"BIGINT"}],
		"tags":[{"tagFQN":"PII.Sensitive"}],"owners":[{"id":"`+alice.ID()+`","type":"user"}],"domains":["Sales"]}`)
	f.Create("table", `{"name":"orders_archive","databaseSchema":"warehouse.dw.main","columns":[{"name":"id","dataType":"BIGINT"}]}`)
	f.Create("dashboardService", `{"name":"looker","serviceType":"Looker"}`)
	f.Create("dashboard", `{"name":"orders_board","service":"looker","owners":[{"id":"`+alice.ID()+`","type":"user"}]}`)

	cases := []struct {
		name, filter string
		want         []string
	}{
		{"entityType", `{"query":{"term":{"entityType":"table"}}}`, []string{"orders", "orders_archive"}},
		{"service.name", `{"query":{"term":{"service.name":"warehouse"}}}`, []string{"orders_archive"}},
		{"service.name.keyword", `{"query":{"term":{"service.name.keyword":"looker"}}}`, []string{"orders_board"}},
		{"tags.tagFQN", `{"query":{"bool":{"must":[{"term":{"tags.tagFQN":"PII.Sensitive"}}]}}}`, []string{"orders"}},
		{"owners.name", `{"query":{"term":{"owners.name":"alice"}}}`, []string{"orders", "orders_board"}},
		{"owners and entityType", `{"query":{"bool":{"filter":[{"term":{"owners.name":"alice"}},{"term":{"entityType":"dashboard"}}]}}}`, []string{"orders_board"}},
		{"domains", `{"query":{"term":{"domains.fullyQualifiedName":"Sales"}}}`, []string{"orders"}},
		{"terms on service", `{"terms":{"service.name":["svc","looker"]}}`, []string{"orders", "orders_board"}},
		{"match_all", `{"query":{"match_all":{}}}`, []string{"orders", "orders_board", "orders_archive"}},
	}
	for _, c := range cases {
		res := f.Search(store.SearchRequest{Query: "orders", Index: "dataAsset", QueryFilter: c.filter})
		wantNames(t, c.name, res, c.want...)
		if res.Hits.Total.Value != len(c.want) {
			t.Fatalf("%s: total = %d, want %d", c.name, res.Hits.Total.Value, len(c.want))
		}
	}
	// A term filter in q works like one in query_filter.
	wantNames(t, "q tags.tagFQN:", f.Search(store.SearchRequest{Query: "orders tags.tagFQN:PII.Sensitive"}), "orders")
	// No words, only a filter.
	wantNames(t, "filter without words", f.Search(store.SearchRequest{Index: "table", QueryFilter: `{"term":{"service.name":"svc"}}`}), "orders")
}

// testSearchDeleted: soft-deleted entities are excluded unless asked for; hard-deleted
// ones are gone from the index.
func testSearchDeleted(t *testing.T, f *Fixture) {
	f.Hierarchy()
	soft := f.Table("orders_old", `[{"name":"id","dataType":"BIGINT"}]`)
	hard := f.Table("orders_gone", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("orders", `[{"name":"id","dataType":"BIGINT"}]`)
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(soft.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(hard.ID()), store.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	wantNames(t, "default", f.Search(store.SearchRequest{Query: "orders", Index: "table"}), "orders")
	wantNames(t, "deleted=false", f.Search(store.SearchRequest{Query: "orders", Index: "table", Deleted: boolp(false)}), "orders")
	del := f.Search(store.SearchRequest{Query: "orders", Index: "table", Deleted: boolp(true)})
	wantNames(t, "deleted=true", del, "orders_old")
	var src map[string]any
	if err := json.Unmarshal(del.Hits.Hits[0].Source, &src); err != nil || src["deleted"] != true {
		t.Fatalf("deleted _source = %s", del.Hits.Hits[0].Source)
	}
	wantNames(t, "deleted filter", f.Search(store.SearchRequest{Query: "orders", Index: "table",
		QueryFilter: `{"query":{"term":{"deleted":true}}}`}), "orders_old")
	wantNames(t, "deleted filter true or false", f.Search(store.SearchRequest{Query: "orders", Index: "table",
		QueryFilter: `{"query":{"terms":{"deleted":[true,false]}}}`}), "orders", "orders_old")
	if res := f.Search(store.SearchRequest{Index: "all", Deleted: boolp(true)}); res.Hits.Total.Value != 1 {
		t.Fatalf("hard-deleted entity still indexed: %q", hitNames(t, res))
	}
	if _, err := f.E.Restore(f.Ctx, f.Admin, "table", soft.ID()); err != nil {
		t.Fatal(err)
	}
	wantNames(t, "restored", f.Search(store.SearchRequest{Query: "orders", Index: "table"}), "orders", "orders_old")
}

// testSearchAfterWrite: a PATCH is searchable as soon as it returns; the old text is
// not.
func testSearchAfterWrite(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("events", `[{"name":"id","dataType":"BIGINT"}]`)
	wantNames(t, "before", f.Search(store.SearchRequest{Query: "clickstream", Index: "table"}))
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/description","value":"Raw clickstream events"}]`)
	res := f.Search(store.SearchRequest{Query: "clickstream", Index: "table"})
	wantNames(t, "after patch", res, "events")
	var src map[string]any
	if err := json.Unmarshal(res.Hits.Hits[0].Source, &src); err != nil || src["description"] != "Raw clickstream events" {
		t.Fatalf("_source is not the new version: %s", res.Hits.Hits[0].Source)
	}
	f.Patch("table", tbl.ID(), `[{"op":"replace","path":"/description","value":"Page views"}]`)
	wantNames(t, "old text gone", f.Search(store.SearchRequest{Query: "clickstream", Index: "table"}))
	wantNames(t, "new text", f.Search(store.SearchRequest{Query: "page views", Index: "table"}), "events")
}

// testSearchPaging: from and size page through the hits; the total counts them all.
func testSearchPaging(t *testing.T, f *Fixture) {
	f.Hierarchy()
	for _, n := range []string{"metrics_e", "metrics_c", "metrics_a", "metrics_d", "metrics_b"} {
		f.Table(n, `[{"name":"id","dataType":"BIGINT"}]`)
	}
	page := func(from, size int) store.SearchResponse {
		return f.Search(store.SearchRequest{Query: "metrics", Index: "table", From: from, Size: size})
	}
	p1, p2, p3 := page(0, 2), page(2, 2), page(4, 2)
	wantNames(t, "page 1", p1, "metrics_a", "metrics_b")
	wantNames(t, "page 2", p2, "metrics_c", "metrics_d")
	wantNames(t, "page 3", p3, "metrics_e")
	for _, p := range []store.SearchResponse{p1, p2, p3, page(10, 2)} {
		if p.Hits.Total.Value != 5 {
			t.Fatalf("total = %d, want 5", p.Hits.Total.Value)
		}
	}
	wantNames(t, "past the end", page(10, 2))
	wantNames(t, "default size", page(0, 0), "metrics_a", "metrics_b", "metrics_c", "metrics_d", "metrics_e")

	bad := []struct {
		req store.SearchRequest
		msg string
	}{
		{store.SearchRequest{From: -1}, "[query param from must be greater than or equal to 0]"},
		{store.SearchRequest{Size: store.MaxSearchSize + 1}, "[query param size must be less than or equal to 1000]"},
		{store.SearchRequest{From: 9500, Size: 1000}, "Result window is too large, from + size must be less than or equal to: [10000] but was [10500]"},
		{store.SearchRequest{QueryFilter: `{"range":{"updatedAt":{"gte":1}}}`}, "Unsupported query_filter: range on updatedAt. " +
			"Supported: match_all, term/terms/match, bool.must/bool.filter, and bool.should on one field, on entityType, service.name, tags.tagFQN, owners.name, domains.fullyQualifiedName, deleted"},
	}
	for _, b := range bad {
		_, err := f.E.Search(f.Ctx, f.Admin, b.req)
		WantCode(t, err, meridian.EInvalid)
		WantMessage(t, err, b.msg)
	}
}
