package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// Search conformance: every driver ranks, filters, pages and aggregates keyword search
// alike, and a write is searchable as soon as it returns. The engine-level cases run
// typed queries through store.Entities; the driver-level ones run store.Tx.Search on
// fixed documents. The Elasticsearch dialect is tested at the REST edge.

// Search runs a search as admin and fails the test on error.
func (f *Fixture) Search(q search.Query) search.Result {
	f.T.Helper()
	res, err := f.E.Search(f.Ctx, f.Admin, q)
	if err != nil {
		f.T.Fatalf("search %+v: %v", q, err)
	}
	return res
}

// words is a keyword query for text in the kinds, a page of 10 hits.
func words(text string, kinds ...string) search.Query {
	return search.Query{Terms: search.Words(text), Kinds: kinds, Size: 10}
}

// hitNames returns the source names of the hits, in order.
func hitNames(t *testing.T, res search.Result) []string {
	t.Helper()
	names := []string{}
	for _, h := range res.Hits {
		var src map[string]any
		if err := json.Unmarshal(h.Source, &src); err != nil {
			t.Fatalf("hit %s: bad source %s: %v", h.ID, h.Source, err)
		}
		name, _ := src["name"].(string)
		names = append(names, name)
	}
	return names
}

func wantNames(t *testing.T, what string, res search.Result, want ...string) {
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
// names; hits carry their kind, id and source.
func testSearchRanking(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("zeta_notes", `[{"name":"ledger_id","dataType":"BIGINT"}]`)
	f.Create("table", `{"name":"alpha","description":"The ledger of record","databaseSchema":"svc.db.sch",
		"columns":[{"name":"id","dataType":"BIGINT"}]}`)
	f.Create("table", `{"name":"gamma","displayName":"Ledger Book","databaseSchema":"svc.db.sch",
		"columns":[{"name":"id","dataType":"BIGINT"}]}`)
	ledger := f.Table("ledger", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("unrelated", `[{"name":"id","dataType":"BIGINT"}]`)

	res := f.Search(words("ledger", "table"))
	wantNames(t, "ledger", res, "ledger", "gamma", "alpha", "zeta_notes")
	if res.Total != 4 {
		t.Fatalf("total = %d", res.Total)
	}
	hits := res.Hits
	if hits[0].Score <= hits[1].Score || hits[1].Score <= hits[2].Score || hits[2].Score <= hits[3].Score {
		t.Fatalf("every field tier must score strictly lower: %v %v %v %v", hits[0].Score, hits[1].Score, hits[2].Score, hits[3].Score)
	}
	top := hits[0]
	if top.Kind != "table" || top.ID != ledger.ID() || top.FQN != "svc.db.sch.ledger" {
		t.Fatalf("top hit = %s %s %s, want table %s svc.db.sch.ledger", top.Kind, top.ID, top.FQN, ledger.ID())
	}
	var src map[string]any
	if err := json.Unmarshal(top.Source, &src); err != nil || src["entityType"] != "table" ||
		src["fullyQualifiedName"] != "svc.db.sch.ledger" || src["id"] != ledger.ID() {
		t.Fatalf("source = %s (%v)", top.Source, err)
	}
	none := f.Search(words("nosuchword", "table"))
	if none.Total != 0 || none.Hits == nil || len(none.Hits) != 0 || none.Aggregations != nil {
		t.Fatalf("no match = %+v", none)
	}
}

// testSearchWords: snake_case and camelCase names are split into words, a prefix
// matches, and entities matching every word come first, those matching some after
// them when too few match every word.
func testSearchWords(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("customer_orders", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("customerAccounts", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Table("invoices", `[{"name":"id","dataType":"BIGINT"}]`)

	for _, c := range []struct {
		text string
		want []string
	}{
		{"orders", []string{"customer_orders"}},
		{"customer orders", []string{"customer_orders", "customerAccounts"}},
		{"customer", []string{"customerAccounts", "customer_orders"}},
		{"cust", []string{"customerAccounts", "customer_orders"}},
		{"Customer ACC", []string{"customerAccounts", "customer_orders"}},
		{"customerOrders", []string{"customer_orders", "customerAccounts"}},
		{"customers' ordrs", []string{"customer_orders", "customerAccounts"}},
		{"", []string{"customerAccounts", "customer_orders", "invoices"}}, // no words: all, in FQN order
	} {
		wantNames(t, fmt.Sprintf("%q", c.text), f.Search(words(c.text, "table")), c.want...)
	}
	// No table matches both words: those matching one are answered, marked relaxed (their
	// order is the driver's relevance: BM25 or ts_rank).
	if got := f.Search(words("customer invoices", "table")); got.Total != 3 || !got.Relaxed {
		t.Fatalf("customer invoices: total %d relaxed %v, want 3 relaxed", got.Total, got.Relaxed)
	}
	// A word no document holds is left out before any-word ranking: the other words
	// are tried together first (cheap), then any of them; the answer is marked relaxed.
	got := f.Search(words("customer orders zebrafigures", "table"))
	if !got.Relaxed {
		t.Fatalf("customer orders zebrafigures: not marked relaxed")
	}
	wantNames(t, "customer orders zebrafigures", got, "customer_orders", "customerAccounts")
	// Parent names are searchable at the lowest weight: the schema's children match.
	if got := f.Search(words("sch", "table")); got.Total != 3 {
		t.Fatalf("parent FQN words: total = %d, want 3", got.Total)
	}
}

// testSearchStableOrder: equal scores are ordered by FQN, whatever the insertion order.
func testSearchStableOrder(t *testing.T, f *Fixture) {
	f.Hierarchy()
	for _, n := range []string{"sales_d", "sales_b", "sales_c", "sales_a"} {
		f.Table(n, `[{"name":"id","dataType":"BIGINT"}]`)
	}
	res := f.Search(words("sales", "table"))
	wantNames(t, "equal scores", res, "sales_a", "sales_b", "sales_c", "sales_d")
	for _, h := range res.Hits[1:] {
		if h.Score != res.Hits[0].Score {
			t.Fatalf("equal documents must score alike: %v", res.Hits)
		}
	}
	for i := 0; i < 3; i++ {
		wantNames(t, "repeat", f.Search(words("sales", "table")), "sales_a", "sales_b", "sales_c", "sales_d")
	}
}

// testSearchKinds: kinds restrict the search, the scopes search.Kinds resolves select
// theirs, and no kinds searches every kind.
func testSearchKinds(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Table("orders", `[{"name":"id","dataType":"BIGINT"}]`)
	f.Create("glossary", `{"name":"OrdersGlossary","description":"about orders"}`)
	f.Create("dashboardService", `{"name":"looker","serviceType":"Looker"}`)
	f.Create("dashboard", `{"name":"orders_dash","service":"looker"}`)

	scope := func(s string) []string {
		kinds, err := search.Kinds(f.E.Registry(), s)
		if err != nil {
			t.Fatalf("scope %s: %v", s, err)
		}
		return kinds
	}
	wantNames(t, "table", f.Search(words("orders", "table")), "orders")
	wantNames(t, "table_search_index", f.Search(words("orders", scope("table_search_index")...)), "orders")
	wantNames(t, "two kinds", f.Search(words("orders", "dashboard", "glossary")), "OrdersGlossary", "orders_dash")
	wantNames(t, "dataAsset (no glossary)", f.Search(words("orders", scope("dataAsset")...)), "orders", "orders_dash")
	// The glossary also has the word in its description, so it outranks the dashboard.
	wantNames(t, "every kind", f.Search(words("orders")), "orders", "OrdersGlossary", "orders_dash")
	wantNames(t, "services", f.Search(words("looker", scope("service")...)), "looker")
	_, err := f.E.Search(f.Ctx, f.Admin, words("orders", "table", "nonsense"))
	WantCode(t, err, meridian.EInvalid)
	WantMessage(t, err, "Unknown entity type nonsense")
}

// testSearchWithoutWords: a search without words matches every document of its kinds
// with score 1, in FQN order across kinds, page after page, with the total of them.
func testSearchWithoutWords(t *testing.T, f *Fixture) {
	f.Hierarchy()
	f.Create("dashboardService", `{"name":"looker","serviceType":"Looker"}`)
	var want []search.Hit
	add := func(kind string, e meridian.Entity) {
		want = append(want, search.Hit{ID: e.ID(), Kind: kind, FQN: e.FQN()})
	}
	for _, n := range []string{"t_d", "t_b", "t_f"} {
		add("table", f.Table(n, `[{"name":"id","dataType":"BIGINT"}]`))
	}
	for _, n := range []string{"d_e", "d_a", "d_c"} {
		add("dashboard", f.Create("dashboard", `{"name":"`+n+`","service":"looker"}`))
	}
	f.Create("glossary", `{"name":"g_a","description":"not searched"}`)
	slices.SortFunc(want, func(a, b search.Hit) int { return cmp.Or(cmp.Compare(a.FQN, b.FQN), cmp.Compare(a.ID, b.ID)) })
	for _, kinds := range [][]string{{"table", "dashboard"}, {"dashboard", "table", "dashboard"}} {
		var got []search.Hit
		for from := 0; from < len(want)+2; from += 2 {
			res := f.Search(search.Query{Kinds: kinds, From: from, Size: 2})
			if res.Total != len(want) {
				t.Fatalf("kinds %v from %d: total %d, want %d", kinds, from, res.Total, len(want))
			}
			for _, h := range res.Hits {
				if h.Score != 1 {
					t.Fatalf("kinds %v: %s scores %v, want 1", kinds, h.FQN, h.Score)
				}
				got = append(got, search.Hit{ID: h.ID, Kind: h.Kind, FQN: h.FQN})
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("kinds %v: pages = %v, want %v", kinds, got, want)
		}
	}
	wantNames(t, "one kind", f.Search(search.Query{Kinds: []string{"dashboard"}, Size: 10}), "d_a", "d_c", "d_e")

	// Every kind: each page continues the one FQN order, and the pages hold every
	// document once, the deleted left out.
	if want[0].Kind != "dashboard" {
		t.Fatalf("the first FQN is %s's, want a dashboard's", want[0].FQN)
	}
	if _, err := f.E.Delete(f.Ctx, f.Admin, "dashboard", store.ByID(want[0].ID), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var all []search.Hit
	total := f.Search(search.Query{Size: 0}).Total
	for from := 0; from < total+3; from += 3 {
		res := f.Search(search.Query{From: from, Size: 3})
		if res.Total != total {
			t.Fatalf("every kind from %d: total %d, want %d", from, res.Total, total)
		}
		for _, h := range res.Hits {
			all = append(all, search.Hit{ID: h.ID, Kind: h.Kind, FQN: h.FQN})
		}
	}
	if len(all) != total || !slices.IsSortedFunc(all, func(a, b search.Hit) int { return cmp.Or(cmp.Compare(a.FQN, b.FQN), cmp.Compare(a.ID, b.ID)) }) {
		t.Fatalf("every kind: pages = %v, want %d hits in FQN order", all, total)
	}
	for i, h := range want {
		if found := slices.ContainsFunc(all, func(g search.Hit) bool { return g.ID == h.ID }); found != (i > 0) {
			t.Errorf("every kind: %s found %v", h.FQN, found)
		}
	}
}

// testSearchFilters: term filters on entityType, service, tags, owners and domains,
// case-insensitive, every filter required, any value of one.
func testSearchFilters(t *testing.T, f *Fixture) {
	searchFixture(f)
	filter := func(field search.Field, values ...string) search.Filter {
		return search.Filter{Field: field, Values: values}
	}
	cases := []struct {
		name    string
		filters []search.Filter
		want    []string
	}{
		{"entityType", []search.Filter{filter(search.FieldEntityType, "TABLE")}, []string{"orders", "orders_archive"}},
		{"service", []search.Filter{filter(search.FieldService, "warehouse")}, []string{"orders_archive"}},
		{"service, any case", []search.Filter{filter(search.FieldService, "Looker")}, []string{"orders_board"}},
		{"a table tag", []search.Filter{filter(search.FieldTags, "PII.Sensitive")}, []string{"orders"}},
		{"a column tag", []search.Filter{filter(search.FieldTags, "tier.gold")}, []string{"orders_archive"}},
		{"owners", []search.Filter{filter(search.FieldOwners, "alice")}, []string{"orders", "orders_board"}},
		{"owners and entityType", []search.Filter{filter(search.FieldOwners, "alice"), filter(search.FieldEntityType, "dashboard")}, []string{"orders_board"}},
		{"domains", []search.Filter{filter(search.FieldDomains, "sales")}, []string{"orders"}},
		{"any value", []search.Filter{filter(search.FieldService, "svc", "looker")}, []string{"orders", "orders_board"}},
		{"none", nil, []string{"orders", "orders_board", "orders_archive"}},
	}
	for _, c := range cases {
		q := words("orders", dataAssets(t, f)...)
		q.Filters = c.filters
		res := f.Search(q)
		wantNames(t, c.name, res, c.want...)
		if res.Total != len(c.want) {
			t.Fatalf("%s: total = %d, want %d", c.name, res.Total, len(c.want))
		}
	}
	// No words, only a filter.
	q := search.Query{Kinds: []string{"table"}, Filters: []search.Filter{filter(search.FieldService, "svc")}, Size: 10}
	wantNames(t, "filter without words", f.Search(q), "orders")
}

// searchFixture creates the catalog the filter and aggregation cases search: tables
// orders (service svc, tag PII.Sensitive, owner alice, domain Sales) and
// orders_archive (service warehouse, a column tagged Tier.Gold), and dashboard
// orders_board (service looker, owner alice).
func searchFixture(f *Fixture) {
	f.Hierarchy()
	f.Create("databaseService", `{"name":"warehouse","serviceType":"Mysql"}`)
	f.Create("database", `{"name":"dw","service":"warehouse"}`)
	f.Create("databaseSchema", `{"name":"main","database":"warehouse.dw"}`)
	f.Create("classification", `{"name":"PII","description":"personal data"}`)
	f.Create("tag", `{"name":"Sensitive","description":"sensitive","classification":"PII"}`)
	f.Create("classification", `{"name":"Tier","description":"tiers"}`)
	f.Create("tag", `{"name":"Gold","description":"gold","classification":"Tier"}`)
	alice := f.Create("user", `{"name":"alice","email":"alice@example.com"}`)
	f.Create("domain", `{"name":"Sales","description":"The sales domain","domainType":"Source-aligned"}`)

	f.Create("table", `{"name":"orders","databaseSchema":"svc.db.sch","columns":[{"name":"id","dataType":"BIGINT"}],
		"tags":[{"tagFQN":"PII.Sensitive"}],"owners":[{"id":"`+alice.ID()+`","type":"user"}],"domains":["Sales"]}`)
	f.Create("table", `{"name":"orders_archive","databaseSchema":"warehouse.dw.main",
		"columns":[{"name":"id","dataType":"BIGINT","tags":[{"tagFQN":"Tier.Gold"}]}]}`)
	f.Create("dashboardService", `{"name":"looker","serviceType":"Looker"}`)
	f.Create("dashboard", `{"name":"orders_board","service":"looker","owners":[{"id":"`+alice.ID()+`","type":"user"}]}`)
}

// testSearchAggregations: the store counts every match by field, whatever the page
// size, after the words, kinds, filters and the deleted switch; a bucket's key passed
// back as a filter selects its count.
func testSearchAggregations(t *testing.T, f *Fixture) {
	searchFixture(f)
	for i := 0; i < 3; i++ {
		f.Table(fmt.Sprintf("orders_%d", i), `[{"name":"id","dataType":"BIGINT"}]`)
	}
	all := []search.Field{search.FieldEntityType, search.FieldService, search.FieldTags, search.FieldOwners, search.FieldDomains}
	q := words("orders", dataAssets(t, f)...)
	q.Size, q.Aggregations = 1, all
	res := f.Search(q)
	if res.Total != 6 || len(res.Hits) != 1 {
		t.Fatalf("total %d, %d hits", res.Total, len(res.Hits))
	}
	wantAggs(t, "every match, one hit", res, all,
		"entityType=table:5,dashboard:1; service=svc:4,looker:1,warehouse:1; tags=pii.sensitive:1,tier.gold:1; owners=alice:2; domains=sales:1")

	q.Size, q.Buckets, q.Aggregations = 0, 1, []search.Field{search.FieldService, search.FieldEntityType}
	res = f.Search(q)
	if res.Total != 6 || len(res.Hits) != 0 {
		t.Fatalf("size 0: total %d, %d hits", res.Total, len(res.Hits))
	}
	wantAggs(t, "one bucket each", res, q.Aggregations, "service=svc:4; entityType=table:5")

	q.Buckets = 0
	q.Filters = []search.Filter{{Field: search.FieldOwners, Values: []string{"alice"}}}
	wantAggs(t, "after a filter", f.Search(q), q.Aggregations, "service=looker:1,svc:1; entityType=dashboard:1,table:1")

	// Ties are ordered by key; the key selects the bucket's count.
	q = words("orders", "table")
	q.Aggregations = []search.Field{search.FieldService}
	res = f.Search(q)
	wantAggs(t, "tables", res, q.Aggregations, "service=svc:4,warehouse:1")
	for _, b := range res.Aggregations[search.FieldService] {
		q.Filters = []search.Filter{{Field: search.FieldService, Values: []string{b.Key}}}
		if got := f.Search(q).Total; got != b.Count {
			t.Fatalf("service %s: %d matches, bucket says %d", b.Key, got, b.Count)
		}
	}

	// Deleted entities count only when searched.
	old := f.Table("orders_old", `[{"name":"id","dataType":"BIGINT"}]`)
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(old.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	q = words("orders", "table")
	q.Aggregations = []search.Field{search.FieldEntityType}
	wantAggs(t, "active", f.Search(q), q.Aggregations, "entityType=table:5")
	q.Deleted = boolp(true)
	wantAggs(t, "deleted", f.Search(q), q.Aggregations, "entityType=table:1")
	q.Deleted, q.Terms = nil, search.Words("nosuchword")
	wantAggs(t, "no match", f.Search(q), q.Aggregations, "entityType=")
}

// aggString renders res's aggregations of fields as "field=key:count,…; …".
func aggString(res search.Result, fields []search.Field) string {
	var parts []string
	for _, field := range fields {
		buckets, ok := res.Aggregations[field]
		if !ok || buckets == nil {
			parts = append(parts, string(field)+" missing")
			continue
		}
		var bs []string
		for _, b := range buckets {
			bs = append(bs, fmt.Sprintf("%s:%d", b.Key, b.Count))
		}
		parts = append(parts, string(field)+"="+strings.Join(bs, ","))
	}
	return strings.Join(parts, "; ")
}

func wantAggs(t *testing.T, what string, res search.Result, fields []search.Field, want string) {
	t.Helper()
	if got := aggString(res, fields); got != want {
		t.Fatalf("%s: aggregations\n got %s\nwant %s", what, got, want)
	}
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
	deleted := func(d *bool, values ...string) search.Query {
		q := words("orders", "table")
		q.Deleted = d
		if values != nil {
			q.Filters = []search.Filter{{Field: search.FieldDeleted, Values: values}}
		}
		return q
	}
	wantNames(t, "default", f.Search(deleted(nil)), "orders")
	wantNames(t, "deleted=false", f.Search(deleted(boolp(false))), "orders")
	del := f.Search(deleted(boolp(true)))
	wantNames(t, "deleted=true", del, "orders_old")
	var src map[string]any
	if err := json.Unmarshal(del.Hits[0].Source, &src); err != nil || src["deleted"] != true {
		t.Fatalf("deleted source = %s", del.Hits[0].Source)
	}
	wantNames(t, "deleted filter", f.Search(deleted(nil, "true")), "orders_old")
	wantNames(t, "deleted filter true or false", f.Search(deleted(nil, "True", "false")), "orders", "orders_old")
	if res := f.Search(search.Query{Deleted: boolp(true), Size: 10}); res.Total != 1 {
		t.Fatalf("hard-deleted entity still indexed: %q", hitNames(t, res))
	}
	if _, err := f.E.Restore(f.Ctx, f.Admin, "table", soft.ID()); err != nil {
		t.Fatal(err)
	}
	wantNames(t, "restored", f.Search(deleted(nil)), "orders", "orders_old")
}

// testAHitsSourceIsTheEntityAsWritten: after a create, a PATCH, an owner added and a
// soft delete, a hit's source, on a page of words and on a page without words, is the
// entity as the write's change event holds it, with its entityType; a kind with secrets
// answers them masked. A driver may read the source from the version snapshot the
// write stored rather than keep a copy (search.Doc.Snapshot).
func testAHitsSourceIsTheEntityAsWritten(t *testing.T, f *Fixture) {
	f.Hierarchy()
	ann := f.createUsers("ann")["ann"]
	tbl := f.Table("ledger", `[{"name":"id","dataType":"BIGINT","description":"Surrogate key"}]`)
	svc := f.Create("databaseService", `{"name":"vault","serviceType":"Mysql",
		"connection":{"config":{"type":"Mysql","username":"u","authType":{"password":"hunter2"}}}}`)
	want := func(step string, e meridian.Entity, kind string, deleted bool) {
		t.Helper()
		var last meridian.ChangeEvent
		for _, ev := range f.events(meridian.EventEntityCreated, meridian.EventEntityUpdated, meridian.EventEntitySoftDeleted,
			meridian.EventEntityRestored) {
			if ev.EntityID == e.ID() {
				last = ev
			}
		}
		wantSrc, err := json.Marshal(last.Entity)
		if err != nil {
			t.Fatal(err)
		}
		var expect map[string]any
		if err := json.Unmarshal(wantSrc, &expect); err != nil {
			t.Fatal(err)
		}
		expect["entityType"] = kind
		for name, q := range map[string]search.Query{
			"words":     words(e.Name(), kind),
			"match all": {Kinds: []string{kind}, Size: 100},
		} {
			q.Deleted = boolp(deleted)
			var got map[string]any
			for _, h := range f.Search(q).Hits {
				if h.ID == e.ID() {
					if err := json.Unmarshal(h.Source, &got); err != nil {
						t.Fatalf("%s, %s: source %s: %v", step, name, h.Source, err)
					}
				}
			}
			if !reflect.DeepEqual(got, expect) {
				t.Errorf("%s, %s: source = %v\nwant the change event's entity %v", step, name, got, expect)
			}
		}
	}
	want("created", tbl, "table", false)
	want("a service with a secret", svc, "databaseService", false)
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/description","value":"General ledger"}]`)
	want("patched", tbl, "table", false)
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/owners","value":[{"id":"`+ann.ID()+`","type":"user"}]}]`)
	want("owned", tbl, "table", false)
	if _, err := f.E.Delete(f.Ctx, f.Admin, "table", store.ByID(tbl.ID()), store.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("soft-deleted", tbl, "table", true)
	if _, err := f.E.Restore(f.Ctx, f.Admin, "table", tbl.ID()); err != nil {
		t.Fatal(err)
	}
	want("restored", tbl, "table", false)
}

// testSearchAfterWrite: a PATCH is searchable as soon as it returns; the old text is
// not.
func testSearchAfterWrite(t *testing.T, f *Fixture) {
	f.Hierarchy()
	tbl := f.Table("events", `[{"name":"id","dataType":"BIGINT"}]`)
	wantNames(t, "before", f.Search(words("clickstream", "table")))
	f.Patch("table", tbl.ID(), `[{"op":"add","path":"/description","value":"Raw clickstream events"}]`)
	res := f.Search(words("clickstream", "table"))
	wantNames(t, "after patch", res, "events")
	var src map[string]any
	if err := json.Unmarshal(res.Hits[0].Source, &src); err != nil || src["description"] != "Raw clickstream events" {
		t.Fatalf("source is not the new version: %s", res.Hits[0].Source)
	}
	f.Patch("table", tbl.ID(), `[{"op":"replace","path":"/description","value":"Page views"}]`)
	wantNames(t, "old text gone", f.Search(words("clickstream", "table")))
	wantNames(t, "new text", f.Search(words("page views", "table")), "events")
}

// testSearchPaging: from and size page through the hits; the total counts them all; a
// query out of bounds is invalid.
func testSearchPaging(t *testing.T, f *Fixture) {
	f.Hierarchy()
	for _, n := range []string{"metrics_e", "metrics_c", "metrics_a", "metrics_d", "metrics_b"} {
		f.Table(n, `[{"name":"id","dataType":"BIGINT"}]`)
	}
	page := func(from, size int) search.Result {
		q := words("metrics", "table")
		q.From, q.Size = from, size
		return f.Search(q)
	}
	p1, p2, p3 := page(0, 2), page(2, 2), page(4, 2)
	wantNames(t, "page 1", p1, "metrics_a", "metrics_b")
	wantNames(t, "page 2", p2, "metrics_c", "metrics_d")
	wantNames(t, "page 3", p3, "metrics_e")
	wantNames(t, "past the end", page(10, 2))
	wantNames(t, "size 0 only counts", page(0, 0))
	for _, p := range []search.Result{p1, p2, p3, page(10, 2), page(0, 0)} {
		if p.Total != 5 {
			t.Fatalf("total = %d, want 5", p.Total)
		}
	}

	bad := []struct {
		q   search.Query
		msg string
	}{
		{search.Query{From: -1}, "Search from must be at least 0"},
		{search.Query{Size: search.MaxSize + 1}, "Search size must be between 0 and 1000"},
		{search.Query{From: 9500, Size: 1000}, "Search from + size must be at most 10000"},
		{search.Query{Mode: "vector"}, `Unsupported search mode "vector" (supported: keyword)`},
		{search.Query{Filters: []search.Filter{{Field: "tier", Values: []string{"a"}}}}, "Unsupported search filter field tier"},
		{search.Query{Aggregations: []search.Field{search.FieldDeleted}}, "Unsupported search aggregation deleted"},
	}
	for _, b := range bad {
		_, err := f.E.Search(f.Ctx, f.Admin, b.q)
		WantCode(t, err, meridian.EInvalid)
		WantMessage(t, err, b.msg)
	}
}

// SearchCase is one driver-level search and what it must answer: the hit ids in order,
// the total and, when the query asks for them, the aggregations as aggString renders
// them.
type SearchCase struct {
	Name     string
	Q        search.Query
	Want     string
	Total    int
	Code     string // error code, "" for none
	Aggs     string
	Relaxed  bool   // Result.Relaxed
	AtLeast  bool   // Result.TotalAtLeast
	Searched string // Result.Searched joined by spaces, checked when not ""
}

// IndexSearchDocs indexes the documents the search cases run against: tables
// customer_orders (with columns, service, tag, owner and domain), customer and
// orders_archive (display name "customer archive"), dashboard revenue (the word customer
// in its description), topic events (customer in its column names) and a deleted table
// customer_old.
func IndexSearchDocs(t *testing.T, db store.Driver) {
	t.Helper()
	ctx := context.Background()
	docs := []search.Doc{
		searchDoc("co", "table", "mysql.db.s.customer_orders", "customer_orders", func(d *search.Doc) {
			d.Columns = "id amount"
			d.Service = "MySQL_Prod"
			d.Tags = []string{"PII.Sensitive"}
			d.Owners = []string{"Alice", "ALICE"} // the same owner twice counts once
			d.Domains = []string{"Sales"}
		}),
		searchDoc("cu", "table", "mysql.db.s.customer", "customer", nil),
		searchDoc("oa", "table", "mysql.db.s.orders_archive", "orders_archive", func(d *search.Doc) {
			d.DisplayName = "customer archive"
			d.Service = "mysql_prod"
		}),
		searchDoc("rv", "dashboard", "looker.revenue", "revenue", func(d *search.Doc) {
			d.Description = "customer revenue by month"
			d.Owners = []string{"bob"}
		}),
		searchDoc("ev", "topic", "kafka.events", "events", func(d *search.Doc) {
			d.Columns = "customer id"
		}),
		searchDoc("old", "table", "mysql.db.s.customer_old", "customer_old", func(d *search.Doc) {
			d.Deleted = true
			d.Tags = []string{"pii.sensitive"}
		}),
	}
	Write(t, db, func(tx store.Tx) error {
		for _, d := range docs {
			if err := tx.Index(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func searchDoc(id, kind, fqn, name string, mod func(d *search.Doc)) search.Doc {
	d := search.Doc{ID: id, Kind: kind, FQN: fqn, Name: strings.Join(search.Words(name), " "),
		Source: []byte(`{"id":"` + id + `","name":"` + name + `"}`)}
	if mod != nil {
		mod(&d)
	}
	return d
}

func hitIDs(hits []search.Hit) string {
	var s []string
	for _, h := range hits {
		s = append(s, h.ID)
	}
	return strings.Join(s, ",")
}

// RunSearchCases runs each case as a subtest in a read-only transaction: the error
// code, the hit ids and total, the aggregations, a non-nil slice and scores never
// rising.
func RunSearchCases(t *testing.T, db store.Driver, cases []SearchCase) {
	ctx := context.Background()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			Read(t, db, func(tx store.Tx) error {
				res, err := tx.Search(ctx, tt.Q)
				WantCode(t, err, tt.Code)
				if tt.Code != "" {
					return nil
				}
				if got := hitIDs(res.Hits); got != tt.Want || res.Total != tt.Total {
					t.Errorf("got %q total %d, want %q total %d", got, res.Total, tt.Want, tt.Total)
				}
				if res.Hits == nil {
					t.Error("hits is nil, want empty slice")
				}
				if res.TotalAtLeast != tt.AtLeast {
					t.Errorf("total at least = %v, want %v", res.TotalAtLeast, tt.AtLeast)
				}
				if res.Relaxed != tt.Relaxed {
					t.Errorf("relaxed = %v, want %v", res.Relaxed, tt.Relaxed)
				}
				if got := strings.Join(res.Searched, " "); tt.Searched != "" && got != tt.Searched {
					t.Errorf("searched %q, want %q", got, tt.Searched)
				}
				if len(tt.Q.Aggregations) == 0 && res.Aggregations != nil {
					t.Errorf("aggregations %v, none asked for", res.Aggregations)
				}
				if got := aggString(res, tt.Q.Aggregations); got != tt.Aggs {
					t.Errorf("aggregations\n got %s\nwant %s", got, tt.Aggs)
				}
				for i := 1; i < len(res.Hits); i++ {
					if res.Hits[i].Score > res.Hits[i-1].Score {
						t.Errorf("hit %d scores %v above hit %d's %v", i, res.Hits[i].Score, i-1, res.Hits[i-1].Score)
					}
				}
				return nil
			})
		})
	}
}

func testDriverSearch(t *testing.T, d *driverFixture) {
	db, ctx := d.db, d.ctx
	IndexSearchDocs(t, db)
	yes, no := true, false
	terms := func(words ...string) search.Query { return search.Query{Terms: words, Size: 10} }
	filtered := func(q search.Query, field search.Field, values ...string) search.Query {
		q.Filters = append(q.Filters[:len(q.Filters):len(q.Filters)], search.Filter{Field: field, Values: values})
		return q
	}
	page := func(q search.Query, from, size int) search.Query { q.From, q.Size = from, size; return q }
	kinds := func(q search.Query, k ...string) search.Query { q.Kinds = k; return q }
	deleted := func(q search.Query, d *bool) search.Query { q.Deleted = d; return q }
	strict := func(q search.Query) search.Query { q.Strict = true; return q }
	countUpTo := func(q search.Query, n int) search.Query { q.CountUpTo = n; return q }
	RunSearchCases(t, db, []SearchCase{
		{Name: "name outranks display name, description and columns", Q: terms("customer"), Want: "cu,co,oa,rv,ev", Total: 5},
		{Name: "every word is required, as a prefix, when enough match", Q: page(terms("cust", "ord"), 0, 2), Want: "co,oa", Total: 2},
		{Name: "too few matching every word answers those matching any, more words first", Q: terms("cust", "ord"),
			Want: "co,oa,cu,rv,ev", Total: 5, Relaxed: true},
		{Name: "a later page of a relaxed search continues the same ranking", Q: page(terms("cust", "ord"), 2, 2),
			Want: "cu,rv", Total: 5, Relaxed: true},
		{Name: "strict requires every word", Q: strict(terms("cust", "ord")), Want: "co,oa", Total: 2},
		{Name: "a count limit stops the count, not the page", Q: countUpTo(terms("customer"), 2), Want: "cu,co,oa,rv,ev", Total: 2, AtLeast: true},
		{Name: "a count limit the matches reach is a lower bound", Q: countUpTo(terms("customer"), 5), Want: "cu,co,oa,rv,ev", Total: 5, AtLeast: true},
		{Name: "a count limit above the matches counts them all", Q: countUpTo(terms("customer"), 9), Want: "cu,co,oa,rv,ev", Total: 5},
		{Name: "stop words are dropped", Q: terms("which", "table", "has", "the", "customer"), Want: "cu,co,oa,rv,ev", Total: 5, Searched: "customer"},
		{Name: "strict keeps stop words", Q: strict(terms("which", "customer")), Want: "", Total: 0},
		{Name: "only stop words are searched as they are", Q: terms("the", "the"), Want: "", Total: 0, Searched: "the"},
		{Name: "a plural finds the singular and back", Q: terms("customers"), Want: "cu,co,oa,rv,ev", Total: 5},
		{Name: "an inflected word finds its stem", Q: page(terms("ordered"), 0, 2), Want: "oa,co", Total: 2},
		{Name: "a typo is corrected to the indexed words", Q: terms("custmer"), Want: "cu,co,oa,rv,ev", Total: 5, Searched: "customer"},
		{Name: "a typo in a plural is corrected", Q: page(terms("ordrs"), 0, 2), Want: "oa,co", Total: 2, Searched: "orders"},
		{Name: "typos in several words", Q: page(terms("custmers", "ordrs"), 0, 2), Want: "co,oa", Total: 2, Searched: "customer orders"},
		{Name: "strict corrects no typo", Q: strict(terms("custmer")), Want: "", Total: 0},
		{Name: "a short word is not corrected", Q: terms("cux"), Want: "", Total: 0},
		{Name: "nonsense matches nothing", Q: terms("zqxwvy"), Want: "", Total: 0, Searched: "zqxwvy"},
		{Name: "no words match everything, by fqn", Q: terms(), Want: "ev,rv,cu,co,oa", Total: 5},
		{Name: "kinds", Q: kinds(terms("customer"), "dashboard", "topic"), Want: "rv,ev", Total: 2},
		{Name: "tag filter is case-insensitive", Q: filtered(terms(), search.FieldTags, "pii.sensitive"), Want: "co", Total: 1},
		{Name: "owner filter takes any of its values", Q: filtered(terms(), search.FieldOwners, "ALICE", "Bob"), Want: "rv,co", Total: 2},
		{Name: "service filter", Q: filtered(terms(), search.FieldService, "mysql_prod"), Want: "co,oa", Total: 2},
		{Name: "domain filter", Q: filtered(terms(), search.FieldDomains, "sales"), Want: "co", Total: 1},
		{Name: "entity type filter", Q: filtered(terms("customer"), search.FieldEntityType, "TOPIC"), Want: "ev", Total: 1},
		{Name: "filters combine", Q: filtered(filtered(terms(), search.FieldOwners, "bob", "alice"), search.FieldEntityType, "table"), Want: "co", Total: 1},
		{Name: "filter value is bound, not spliced", Q: filtered(terms(), search.FieldTags, "x' OR 1=1 --"), Want: "", Total: 0},
		{Name: "deleted only", Q: deleted(terms("customer"), &yes), Want: "old", Total: 1},
		{Name: "active only, explicitly", Q: deleted(terms("customer"), &no), Want: "cu,co,oa,rv,ev", Total: 5},
		{Name: "deleted filter lifts the default", Q: filtered(terms("customer"), search.FieldDeleted, "true", "FALSE"), Want: "cu,old,co,oa,rv,ev", Total: 6},
		{Name: "paging", Q: page(terms("customer"), 1, 2), Want: "co,oa", Total: 5},
		{Name: "size zero only counts", Q: page(terms("customer"), 0, 0), Want: "", Total: 5},
		{Name: "past the end", Q: page(terms("customer"), 9, 2), Want: "", Total: 5},
		{Name: "unknown filter field is invalid", Q: filtered(terms(), "tier", "a"), Code: meridian.EInvalid},
		{Name: "filter without values is invalid", Q: filtered(terms(), search.FieldTags), Code: meridian.EInvalid},
		{Name: "bad deleted value is invalid", Q: filtered(terms(), search.FieldDeleted, "maybe"), Code: meridian.EInvalid},
		{Name: "negative from is invalid", Q: page(terms(), -1, 10), Code: meridian.EInvalid},
		{Name: "size above the maximum is invalid", Q: page(terms(), 0, search.MaxSize+1), Code: meridian.EInvalid},
		{Name: "another mode is invalid", Q: search.Query{Mode: "vector"}, Code: meridian.EInvalid},
	})
	t.Run("hits carry kind, fqn and source", func(t *testing.T) {
		Read(t, db, func(tx store.Tx) error {
			res, err := tx.Search(ctx, search.Query{Terms: []string{"revenue"}, Size: 1})
			if err != nil {
				return err
			}
			hits := res.Hits
			if len(hits) != 1 || hits[0].Kind != "dashboard" || hits[0].FQN != "looker.revenue" ||
				string(d.doc(hits[0].Source)) != `{"id":"rv","name":"revenue"}` || hits[0].Score <= 0 {
				t.Errorf("hits %+v", hits)
			}
			return nil
		})
	})
	t.Run("reindexing replaces, unindex and remove delete", func(t *testing.T) {
		Write(t, db, func(tx store.Tx) error {
			if err := tx.Insert(ctx, row("ev", "topic", "events", "kafka.events")); err != nil {
				return err
			}
			if err := tx.Index(ctx, searchDoc("cu", "table", "mysql.db.s.client", "client", nil)); err != nil {
				return err
			}
			if err := tx.Unindex(ctx, "rv"); err != nil {
				return err
			}
			if err := tx.Unindex(ctx, "missing"); err != nil {
				return err
			}
			return tx.Remove(ctx, "ev")
		})
		Read(t, db, func(tx store.Tx) error {
			res, err := tx.Search(ctx, terms("customer"))
			if err != nil {
				return err
			}
			if got := hitIDs(res.Hits); got != "co,oa" || res.Total != 2 {
				t.Errorf("after changes: %q total %d", got, res.Total)
			}
			res, _ = tx.Search(ctx, terms("client"))
			if hitIDs(res.Hits) != "cu" {
				t.Errorf("reindexed document: %q", hitIDs(res.Hits))
			}
			return nil
		})
	})
	t.Run("read-only transaction refuses index writes", func(t *testing.T) {
		tx, _ := db.Begin(ctx, false)
		defer tx.Rollback()
		if err := tx.Index(ctx, searchDoc("x", "table", "x", "x", nil)); err == nil {
			t.Error("Index in a read-only transaction succeeded")
		}
		if err := tx.Unindex(ctx, "co"); err == nil {
			t.Error("Unindex in a read-only transaction succeeded")
		}
	})
}

// testDriverSearchAggregations: the database counts the matches by field, after the
// words, kinds, filters and the deleted switch, whatever the page; keys are the kinds
// and the lower-cased values; the largest counts come first, ties by key.
func testDriverSearchAggregations(t *testing.T, d *driverFixture) {
	IndexSearchDocs(t, d.db)
	all := []search.Field{search.FieldEntityType, search.FieldService, search.FieldTags, search.FieldOwners, search.FieldDomains}
	agg := func(q search.Query, buckets int, fields ...search.Field) search.Query {
		q.Aggregations, q.Buckets = fields, buckets
		return q
	}
	customer := search.Query{Terms: []string{"customer"}, Size: 1}
	RunSearchCases(t, d.db, []SearchCase{
		{Name: "every field", Q: agg(customer, 0, all...), Want: "cu", Total: 5,
			Aggs: "entityType=table:3,dashboard:1,topic:1; service=mysql_prod:2; tags=pii.sensitive:1; owners=alice:1,bob:1; domains=sales:1"},
		{Name: "one bucket each, without hits", Q: agg(search.Query{Terms: []string{"customer"}}, 1, search.FieldEntityType, search.FieldOwners),
			Want: "", Total: 5, Aggs: "entityType=table:3; owners=alice:1"},
		{Name: "after kinds", Q: agg(search.Query{Kinds: []string{"dashboard", "topic"}}, 0, search.FieldEntityType, search.FieldOwners),
			Want: "", Total: 2, Aggs: "entityType=dashboard:1,topic:1; owners=bob:1"},
		{Name: "after a filter", Q: agg(search.Query{Filters: []search.Filter{{Field: search.FieldOwners, Values: []string{"bob"}}}}, 0, search.FieldEntityType),
			Want: "", Total: 1, Aggs: "entityType=dashboard:1"},
		{Name: "deleted ones when asked", Q: agg(search.Query{Filters: []search.Filter{{Field: search.FieldDeleted, Values: []string{"true", "false"}}}}, 0, search.FieldTags, search.FieldEntityType),
			Want: "", Total: 6, Aggs: "tags=pii.sensitive:2; entityType=table:4,dashboard:1,topic:1"},
		{Name: "no match, empty buckets", Q: agg(search.Query{Terms: []string{"zzz"}}, 0, search.FieldEntityType, search.FieldService),
			Want: "", Total: 0, Aggs: "entityType=; service="},
		{Name: "the key selects the count", Q: search.Query{Filters: []search.Filter{{Field: search.FieldService, Values: []string{"mysql_prod"}}}},
			Want: "", Total: 2},
		{Name: "deleted is not an aggregation", Q: agg(customer, 0, search.FieldDeleted), Code: meridian.EInvalid},
		{Name: "too many buckets", Q: agg(customer, search.MaxBuckets+1, search.FieldTags), Code: meridian.EInvalid},
	})
}

// dataAssets returns the kinds of OpenMetadata's dataAsset search alias.
func dataAssets(t *testing.T, f *Fixture) []string {
	t.Helper()
	kinds, err := search.Kinds(f.E.Registry(), "dataAsset")
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}
