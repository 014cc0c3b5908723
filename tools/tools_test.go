package tools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/tools"
)

func TestSearchMetadata(t *testing.T) {
	f := newFixture(t, tools.Config{})
	for _, name := range []string{"orders", "orders_archive", "order_items", "customers"} {
		f.c.Table(t, "mysql_prod", "shop", "public", name, 2)
	}
	long := strings.Repeat("word ", 200) // 1000 characters
	f.c.Create(t, "glossary", meridian.Entity{"name": "Sales", "description": "Sales terms"})
	f.c.Create(t, "glossaryTerm", meridian.Entity{"name": "OrderValue", "glossary": "Sales", "description": long})

	t.Run("hits are trimmed to essentials", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "customers"})
		hits := list(out["results"])
		if len(hits) != 1 || num(out["totalFound"]) != 1 || num(out["returnedCount"]) != 1 {
			t.Fatalf("got %v", out)
		}
		h := obj(hits[0])
		if h["fullyQualifiedName"] != "mysql_prod.shop.public.customers" || h["entityType"] != "table" ||
			h["service"] != "mysql_prod" || h["deleted"] != false || h["columns"] != nil || h["id"] == "" {
			t.Fatalf("hit %v", h)
		}
		if out["hasMore"] != false || out["truncated"] != false || out["nextCursor"] != nil {
			t.Fatalf("single page flagged as partial: %v", out)
		}
	})
	t.Run("cursor pages by rows returned, each hit once", func(t *testing.T) {
		seen := map[string]int{}
		args := map[string]any{"query": "*", "entity_type": "table", "limit": "3"}
		pages := 0
		for {
			out := f.ok(t, f.c.Admin, "search_metadata", args)
			pages++
			for _, h := range list(out["results"]) {
				seen[obj(h)["fullyQualifiedName"].(string)]++
			}
			if num(out["total"]) != 4 {
				t.Fatalf("total %v", out["total"])
			}
			next, _ := out["nextCursor"].(string)
			if next == "" {
				if out["hasMore"] != false {
					t.Fatal("no cursor but hasMore")
				}
				break
			}
			args["cursor"] = next
		}
		if pages != 2 || len(seen) != 4 {
			t.Fatalf("pages %d, seen %v", pages, seen)
		}
		for fqn, n := range seen {
			if n != 1 {
				t.Errorf("%s seen %d times", fqn, n)
			}
		}
	})
	t.Run("long descriptions are shortened with a flag", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "OrderValue", "entityType": "glossaryTerm"})
		h := obj(list(out["results"])[0])
		d := h["description"].(string)
		if len([]rune(d)) != tools.DescriptionCut+3 || !strings.HasSuffix(d, "...") || h["descriptionTruncated"] != true {
			t.Fatalf("description %d chars, flag %v", len(d), h["descriptionTruncated"])
		}
	})
	t.Run("size is clamped to 50 and strings are coerced", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "*", "size": "500", "from": "0", "includeDeleted": "false"})
		if num(out["returned"]) != num(out["total"]) {
			t.Fatalf("got %v of %v", out["returned"], out["total"])
		}
	})
	t.Run("aggregations count every match on request", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "order", "size": 1, "includeAggregations": true})
		if len(list(out["results"])) != 1 || num(out["totalFound"]) != 4 {
			t.Fatalf("got %v", out)
		}
		aggs := obj(out["aggregations"])
		want := map[string]string{"entityType": "table:3,glossaryTerm:1", "service": "mysql_prod:3", "tags": "", "owners": "", "domains": ""}
		for field, buckets := range want {
			var got []string
			for _, b := range list(aggs[field]) {
				got = append(got, fmt.Sprintf("%v:%v", obj(b)["key"], obj(b)["count"]))
			}
			if strings.Join(got, ",") != buckets {
				t.Errorf("%s buckets %v, want %s", field, got, buckets)
			}
		}
		if _, ok := out["aggregationsSampled"]; ok {
			t.Fatalf("counts are exact, yet aggregationsSampled is %v", out["aggregationsSampled"])
		}
		one := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "order", "includeAggregations": true, "maxAggregationBuckets": 1})
		if types := list(obj(one["aggregations"])["entityType"]); len(types) != 1 || obj(types[0])["key"] != "table" {
			t.Fatalf("one bucket: %v", types)
		}
		if plain := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "order"}); plain["aggregations"] != nil {
			t.Fatalf("aggregations without asking: %v", plain["aggregations"])
		}
	})
	t.Run("includeDeleted finds soft-deleted entities", func(t *testing.T) {
		if _, err := f.c.Entities.Delete(context.Background(), f.c.Admin, "table", store.ByFQN("mysql_prod.shop.public.orders_archive"), store.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		active := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "archive"})
		all := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "archive", "includeDeleted": true})
		if num(active["total"]) != 0 || num(all["total"]) != 1 || obj(list(all["results"])[0])["deleted"] != true {
			t.Fatalf("active %v, all %v", active["total"], all["results"])
		}
	})
}

func TestGetEntityDetails(t *testing.T) {
	f := newFixture(t, tools.Config{})
	fqn := f.c.Table(t, "pg", "dwh", "sales", "orders", 5)
	t.Run("one entity without noise", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entityType": "table", "fqn": fqn})
		if out["fullyQualifiedName"] != fqn || out["entityType"] != "table" || num(out["totalColumns"]) != 5 ||
			num(out["returnedColumns"]) != 5 || out["hasMoreColumns"] != false || out["columnsTruncated"] != false {
			t.Fatalf("got %v", out)
		}
		if _, ok := out["href"]; ok {
			t.Fatal("href kept")
		}
		if _, ok := obj(out["databaseSchema"])["href"]; ok {
			t.Fatal("nested href kept")
		}
	})
	t.Run("column paging with columnOffset and columnLimit", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entityType": "table", "fqn": fqn, "columnOffset": 1, "columnLimit": 2})
		cols := list(out["columns"])
		if len(cols) != 2 || obj(cols[0])["name"] != "col_0002" || out["hasMoreColumns"] != true || out["nextCursor"] == nil {
			t.Fatalf("got %v", out)
		}
		next := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entityType": "table", "fqn": fqn, "cursor": out["nextCursor"]})
		if num(next["columnOffset"]) != 3 || obj(list(next["columns"])[0])["name"] != "col_0004" {
			t.Fatalf("next page %v", next["columns"])
		}
	})
	t.Run("batch: each entry fails on its own", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entities": []any{"table:" + fqn, "databaseSchema:pg.dwh.sales", "table:pg.dwh.sales.nope", "tabel:x", "garbage"}})
		items := list(out["entities"])
		if len(items) != 5 || num(out["requested"]) != 5 || num(out["returned"]) != 2 || num(out["errors"]) != 3 {
			t.Fatalf("got %v", out)
		}
		if obj(items[0])["fullyQualifiedName"] != fqn || obj(items[1])["entityType"] != "databaseSchema" {
			t.Fatalf("items %v", items[:2])
		}
		for i, code := range map[int]int{2: 404, 3: 400, 4: 400} {
			if num(obj(items[i])["statusCode"]) != code || obj(items[i])["error"] == nil {
				t.Errorf("item %d: %v", i, items[i])
			}
		}
		if !strings.Contains(obj(items[3])["hint"].(string), "Did you mean 'table'") {
			t.Errorf("hint %v", obj(items[3])["hint"])
		}
	})
	t.Run("sections are added when asked", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_entity_details", map[string]any{"entityType": "table", "fqn": fqn, "include": "lineage,quality"})
		if out["lineage"] == nil || out["quality"] == nil || out["lineageError"] != nil || out["fullyQualifiedName"] != fqn {
			t.Fatalf("got %v", out)
		}
	})
}

// TestBudget reads a table of 1,500 columns: every answer stays within the budget and
// is a bounded partial page, and following nextCursor returns every column once.
func TestBudget(t *testing.T) {
	for _, budget := range []int{tools.DefaultBudget, 20000} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			f := newFixture(t, tools.Config{Budget: budget})
			fqn := f.c.Table(t, "svc", "db", "sch", "wide", 1500)
			seen := map[string]int{}
			args := map[string]any{"entityType": "table", "fqn": fqn}
			pages := 0
			for {
				res := f.call(t, f.c.Admin, "get_entity_details", args)
				if res.IsError {
					t.Fatalf("page %d: %s", pages, res.Text)
				}
				if len(res.Text) > budget {
					t.Fatalf("page %d is %d characters, over %d", pages, len(res.Text), budget)
				}
				out := res.Structured
				pages++
				cols := list(out["columns"])
				if len(cols) == 0 || num(out["returnedColumns"]) != len(cols) || num(out["returned"]) != len(cols) ||
					num(out["totalColumns"]) != 1500 || num(out["total"]) != 1500 {
					t.Fatalf("page %d: %d columns, %v", pages, len(cols), out["returnedColumns"])
				}
				for _, c := range cols {
					seen[obj(c)["name"].(string)]++
				}
				next, _ := out["nextCursor"].(string)
				if next == "" {
					if out["truncated"] != false || out["hasMoreColumns"] != false {
						t.Fatal("last page flagged as truncated")
					}
					break
				}
				if out["truncated"] != true || out["columnsTruncated"] != true || out["hasMoreColumns"] != true {
					t.Fatalf("partial page %d not flagged", pages)
				}
				args["cursor"] = next
			}
			if pages < 2 || len(seen) != 1500 {
				t.Fatalf("%d pages, %d distinct columns", pages, len(seen))
			}
			for name, n := range seen {
				if n != 1 {
					t.Fatalf("%s returned %d times", name, n)
				}
			}
		})
	}
}

func TestWriteTools(t *testing.T) {
	f := newFixture(t, tools.Config{})
	admin := f.c.Admin
	f.c.User(t, "alice", meridian.RoleDataSteward)
	f.c.User(t, "bob", meridian.RoleDataConsumer)
	fqn := f.c.Table(t, "svc", "db", "sch", "orders", 2)

	t.Run("classification and tags", func(t *testing.T) {
		out := f.ok(t, admin, "create_classification", map[string]any{"name": "PII", "description": "Personal data", "mutuallyExclusive": "true"})
		if out["changeType"] != meridian.EventEntityCreated || out["entityType"] != "classification" || out["mutuallyExclusive"] != true {
			t.Fatalf("got %v", out)
		}
		again := f.ok(t, admin, "create_classification", map[string]any{"name": "PII", "description": "Personal data, updated"})
		if again["mutuallyExclusive"] != true || again["description"] != "Personal data, updated" {
			t.Fatalf("update %v", again)
		}
		// The engine refuses the change, as it does for REST PUT and PATCH.
		if body := f.fail(t, admin, "create_classification", map[string]any{"name": "PII", "description": "x", "mutuallyExclusive": false}); body.StatusCode != 400 ||
			!strings.Contains(body.Error, "mutuallyExclusive can't be modified") {
			t.Fatalf("changing mutuallyExclusive: %+v", body)
		}
		tag := f.ok(t, admin, "create_tag", map[string]any{"name": "Sensitive", "description": "Sensitive", "classification": "PII"})
		if tag["fullyQualifiedName"] != "PII.Sensitive" {
			t.Fatalf("tag %v", tag)
		}
		child := f.ok(t, admin, "create_tag", map[string]any{"name": "Email", "description": "E-mail", "parent": "PII.Sensitive"})
		if child["fullyQualifiedName"] != "PII.Sensitive.Email" {
			t.Fatalf("child %v", child)
		}
		if body := f.fail(t, admin, "create_tag", map[string]any{"name": "X", "description": "x", "classification": "Nope"}); body.StatusCode != 404 {
			t.Fatalf("missing classification: %v", body)
		}
	})
	t.Run("domain and data product", func(t *testing.T) {
		d := f.ok(t, admin, "create_domain", map[string]any{"name": "Sales", "description": "Sales", "domainType": "source-aligned", "experts": []any{"alice"}, "owners": []any{"alice"}})
		if d["domainType"] != "Source-aligned" || len(list(d["experts"])) != 1 {
			t.Fatalf("domain %v", d)
		}
		sub := f.ok(t, admin, "create_domain", map[string]any{"name": "EMEA", "description": "EMEA sales", "parent": "Sales"})
		if sub["fullyQualifiedName"] != "Sales.EMEA" || sub["domainType"] != "Aggregate" {
			t.Fatalf("subdomain %v", sub)
		}
		dp := f.ok(t, admin, "create_data_product", map[string]any{"name": "Orders360", "description": "All about orders", "domains": "Sales"})
		if len(list(dp["domains"])) != 1 {
			t.Fatalf("data product %v", dp)
		}
		if body := f.fail(t, admin, "create_data_product", map[string]any{"name": "X", "description": "x", "domains": []any{}}); body.StatusCode != 400 {
			t.Fatalf("no domain: %v", body)
		}
	})
	t.Run("glossary terms with reviewers start in Draft", func(t *testing.T) {
		g := f.ok(t, admin, "create_glossary", map[string]any{"name": "Business", "description": "Terms", "reviewers": []any{"alice"}, "owners": []any{"alice"}})
		if g["changeType"] != meridian.EventEntityCreated || len(list(g["reviewers"])) != 1 {
			t.Fatalf("glossary %v", g)
		}
		g2 := f.ok(t, admin, "create_glossary", map[string]any{"name": "Business", "description": "Terms, v2"})
		if g2["changeType"] != meridian.EventEntityUpdated {
			t.Fatalf("createOrUpdate %v", g2)
		}
		term := f.ok(t, admin, "create_glossary_term", map[string]any{"glossary": "Business", "name": "Revenue", "description": "Money in"})
		if term["entityStatus"] != "Draft" || term["fullyQualifiedName"] != "Business.Revenue" {
			t.Fatalf("term %v", term)
		}
		child := f.ok(t, admin, "create_glossary_term", map[string]any{"glossary": "Business", "parentTerm": "Business.Revenue", "name": "NetRevenue", "description": "After returns", "synonyms": "net"})
		if child["fullyQualifiedName"] != "Business.Revenue.NetRevenue" {
			t.Fatalf("child term %v", child)
		}
		f.ok(t, admin, "create_glossary", map[string]any{"name": "Plain", "description": "No reviewers"})
		plain := f.ok(t, admin, "create_glossary_term", map[string]any{"glossary": "Plain", "name": "Thing", "description": "x"})
		if plain["entityStatus"] != "Approved" {
			t.Fatalf("term without reviewers %v", plain)
		}
	})
	t.Run("metric with every enum", func(t *testing.T) {
		m := f.ok(t, admin, "create_metric", map[string]any{"name": "total_revenue", "metricExpressionLanguage": "sql",
			"metricExpressionCode": "SUM(amount)", "metricType": "SUM", "unitOfMeasurement": "DOLLARS", "granularity": "day",
			"tags": []any{"PII.Sensitive"}, "owners": []any{"alice"}, "domains": []any{"Sales"}})
		if obj(m["metricExpression"])["language"] != "SQL" || m["granularity"] != "DAY" || len(list(m["tags"])) != 1 {
			t.Fatalf("metric %v", m)
		}
		other := f.ok(t, admin, "create_metric", map[string]any{"name": "latency", "metricExpressionLanguage": "External",
			"metricExpressionCode": "p99", "unitOfMeasurement": "OTHER", "customUnitOfMeasurement": "ms", "relatedMetrics": []any{"total_revenue"}})
		if other["customUnitOfMeasurement"] != "ms" || len(list(other["relatedMetrics"])) != 1 {
			t.Fatalf("metric %v", other)
		}
		if body := f.fail(t, admin, "create_metric", map[string]any{"name": "x", "metricExpressionLanguage": "SQL", "metricExpressionCode": "1", "unitOfMeasurement": "OTHER"}); body.StatusCode != 400 {
			t.Fatalf("OTHER without custom unit: %v", body)
		}
		if body := f.fail(t, admin, "create_metric", map[string]any{"name": "y", "metricExpressionLanguage": "Cobol", "metricExpressionCode": "1"}); body.StatusCode != 400 || !strings.Contains(body.Error, "must be one of") {
			t.Fatalf("bad language: %v", body)
		}
	})
	t.Run("patch_entity", func(t *testing.T) {
		out := f.ok(t, admin, "patch_entity", map[string]any{"entityType": "table", "fqn": fqn,
			"patch": `[{"op":"add","path":"/description","value":"Patched"}]`})
		if out["description"] != "Patched" || out["changeType"] != meridian.EventEntityUpdated || out["version"] != 0.2 {
			t.Fatalf("patch %v", out)
		}
		// A patch sent as a JSON array rather than a string is accepted too.
		out = f.ok(t, admin, "patch_entity", map[string]any{"entityType": "table", "fqn": fqn,
			"patch": []any{map[string]any{"op": "add", "path": "/displayName", "value": "Orders"}}})
		if out["displayName"] != "Orders" {
			t.Fatalf("patch as array %v", out)
		}
	})
	t.Run("update_entity is idempotent", func(t *testing.T) {
		args := map[string]any{"entityType": "table", "fqn": fqn, "description": "Orders placed online",
			"owners": []any{"alice"}, "tags": []any{"PII.Sensitive"}, "displayName": "Online orders"}
		first := f.ok(t, admin, "update_entity", args)
		if first["changeType"] != meridian.EventEntityUpdated || len(list(first["changed"])) != 4 {
			t.Fatalf("first %v", first)
		}
		v := first["version"]
		second := f.ok(t, admin, "update_entity", args)
		if second["changeType"] != meridian.EventEntityNoChange || second["version"] != v || len(list(second["changed"])) != 0 {
			t.Fatalf("second call changed something: %v", second)
		}
		app := f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "description": "Refreshed daily.", "descriptionMode": "append"})
		if app["description"] != "Orders placed online\n\nRefreshed daily." {
			t.Fatalf("append %q", app["description"])
		}
		again := f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "description": "Refreshed daily.", "descriptionMode": "append"})
		if again["changeType"] != meridian.EventEntityNoChange {
			t.Fatal("append repeated the paragraph")
		}
		add := f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "owners": "bob", "ownersMode": "add", "tags": "Business.Revenue", "tagsMode": "add"})
		if len(list(add["owners"])) != 2 || len(list(add["tags"])) != 2 {
			t.Fatalf("add %v %v", add["owners"], add["tags"])
		}
		rm := f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "owners": "alice", "ownersMode": "remove", "tags": "PII.Sensitive", "tagsMode": "remove"})
		if len(list(rm["owners"])) != 1 || obj(list(rm["owners"])[0])["name"] != "bob" || len(list(rm["tags"])) != 1 ||
			obj(list(rm["tags"])[0])["source"] != "Glossary" {
			t.Fatalf("remove %v %v", rm["owners"], rm["tags"])
		}
	})
	t.Run("authorization is the caller's", func(t *testing.T) {
		bob := &meridian.Principal{Name: "bob", Roles: []string{meridian.RoleDataConsumer}}
		u, _ := f.c.Entities.Get(context.Background(), admin, "user", store.ByFQN("bob"), store.GetOptions{})
		bob.ID = u.ID()
		body := f.fail(t, bob, "create_glossary", map[string]any{"name": "Mine", "description": "x"})
		if body.StatusCode != 403 {
			t.Fatalf("consumer create: %v", body)
		}
		// bob owns the table now: he may edit it.
		f.ok(t, bob, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "displayName": "Bob's orders"})
	})
}

// TestBadInput: every bad call is an isError result with a clear message and the right
// statusCode; none panics.
func TestBadInput(t *testing.T) {
	f := newFixture(t, tools.Config{})
	fqn := f.c.Table(t, "svc", "db", "sch", "orders", 2)
	readOnly := &meridian.Principal{ID: f.c.Admin.ID, Name: "admin", Roles: []string{meridian.RoleAdmin}, Scopes: []string{meridian.ScopeRead}}
	cases := []struct {
		name   string
		p      *meridian.Principal
		tool   string
		args   map[string]any
		status int
		want   string
	}{
		{"missing required", nil, "search_metadata", map[string]any{}, 400, "Parameter 'query' is required"},
		{"missing fqn", nil, "get_entity_details", map[string]any{"entityType": "table"}, 400, "'fqn' is required"},
		{"wrong type", nil, "search_metadata", map[string]any{"query": "x", "size": "ten"}, 400, "'size' must be an integer"},
		{"wrong type bool", nil, "search_metadata", map[string]any{"query": "x", "includeDeleted": "maybe"}, 400, "must be a boolean"},
		{"fractional integer", nil, "search_metadata", map[string]any{"query": "x", "from": 1.5}, 400, "must be an integer"},
		{"negative from", nil, "search_metadata", map[string]any{"query": "x", "from": -1}, 400, "at least 0"},
		{"unknown argument", nil, "search_metadata", map[string]any{"query": "x", "sise": 3}, 400, "Unknown parameter 'sise'"},
		{"unknown entity type", nil, "get_entity_details", map[string]any{"entityType": "tabel", "fqn": "a.b"}, 400, "Unknown entity type 'tabel'"},
		{"unknown search type", nil, "search_metadata", map[string]any{"query": "x", "entityType": "dashbord"}, 400, "Unknown entity type"},
		{"unknown fqn", nil, "get_entity_details", map[string]any{"entityType": "table", "fqn": "svc.db.sch.nope"}, 404, "not found"},
		{"invalid cursor", nil, "get_entity_details", map[string]any{"entityType": "table", "fqn": fqn, "cursor": "!!!"}, 400, "Invalid cursor"},
		{"invalid search cursor", nil, "search_metadata", map[string]any{"query": "x", "cursor": "eyJ4IjoxfQ"}, 400, "Invalid cursor"},
		{"too many entities", nil, "get_entity_details", map[string]any{"entities": []any{"a:1", "a:2", "a:3", "a:4", "a:5", "a:6", "a:7", "a:8", "a:9", "a:10", "a:11"}}, 400, "at most 10"},
		{"patch not JSON", nil, "patch_entity", map[string]any{"entityType": "table", "fqn": fqn, "patch": "[{op:"}, 400, "Parameter 'patch' is not valid JSON"},
		{"patch not array", nil, "patch_entity", map[string]any{"entityType": "table", "fqn": fqn, "patch": `{"op":"add"}`}, 400, "not a valid JSONPatch document"},
		{"patch bad op", nil, "patch_entity", map[string]any{"entityType": "table", "fqn": fqn, "patch": `[{"op":"frobnicate","path":"/description"}]`}, 400, "not a valid JSONPatch document"},
		{"patch unknown field", nil, "patch_entity", map[string]any{"entityType": "table", "fqn": fqn, "patch": `[{"op":"add","path":"/descripton","value":"x"}]`}, 400, "Unknown field 'descripton'"},
		{"patch unknown fqn", nil, "patch_entity", map[string]any{"entityType": "table", "fqn": "svc.db.sch.nope", "patch": `[{"op":"add","path":"/description","value":"x"}]`}, 404, "not found"},
		{"update nothing", nil, "update_entity", map[string]any{"entityType": "table", "fqn": fqn}, 400, "Nothing to update"},
		{"update bad mode", nil, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "tags": "x", "tagsMode": "replace"}, 400, "must be one of set, add, remove"},
		{"update unknown owner", nil, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "owners": "nobody"}, 404, "no user or team named"},
		{"update unknown tag", nil, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "tags": "No.Such"}, 404, "no tag or glossary term"},
		{"duplicate create", nil, "create_domain", map[string]any{"name": "D", "description": "d"}, 0, ""},
		{"duplicate create again", nil, "create_domain", map[string]any{"name": "D", "description": "d"}, 409, "already exists"},
		{"read-only token calls a write tool", readOnly, "create_glossary", map[string]any{"name": "G", "description": "g"}, 403, "metadata:read"},
		{"no principal", &meridian.Principal{}, "search_metadata", map[string]any{"query": "x"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			if p == nil {
				p = f.c.Admin
			}
			res := f.call(t, p, c.tool, c.args)
			if c.status == 0 {
				return // a setup step, or a call that may succeed
			}
			if !res.IsError || res.StatusCode != c.status || !strings.Contains(res.Text, c.want) {
				t.Fatalf("got %v %d %s, want %d containing %q", res.IsError, res.StatusCode, res.Text, c.status, c.want)
			}
		})
	}
}

// TestReadOnlyMode: a read-only set lists only the read tools and refuses writes with 403.
func TestReadOnlyMode(t *testing.T) {
	f := newFixture(t, tools.Config{ReadOnly: true})
	for _, tool := range f.set.Visible(f.c.Admin) {
		if tool.Write {
			t.Errorf("%s visible in read-only mode", tool.Name)
		}
	}
	body := f.fail(t, f.c.Admin, "create_glossary", map[string]any{"name": "G", "description": "g"})
	if body.StatusCode != 403 || !strings.Contains(body.Error, "read-only") {
		t.Fatalf("got %v", body)
	}
	f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "*"})
	if _, err := f.set.Call(context.Background(), f.c.Admin, "no_such_tool", nil); err == nil {
		t.Fatal("unknown tool accepted")
	}
}

// TestWideWrites: write answers and search hits stay small on a very wide table.
func TestWideWrites(t *testing.T) {
	f := newFixture(t, tools.Config{})
	fqn := f.c.Table(t, "svc", "db", "sch", "wide", 1500)
	out := f.ok(t, f.c.Admin, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "description": "Very wide"})
	if num(out["totalColumns"]) != 1500 || out["columns"] != nil {
		t.Fatalf("update answer: %d columns listed", len(list(out["columns"])))
	}
	hits := f.ok(t, f.c.Admin, "search_metadata", map[string]any{"query": "wide", "fields": "columns"})
	h := obj(list(hits["results"])[0])
	if len(list(h["columns"])) != 60 || h["columnsTruncated"] != true || num(h["columnsTotal"]) != 1500 {
		t.Fatalf("hit columns: %d %v %v", len(list(h["columns"])), h["columnsTruncated"], h["columnsTotal"])
	}
}
