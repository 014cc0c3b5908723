package tools_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/tools"
)

// semanticCatalog seeds tables with descriptions on two services (mysql_prod and the
// Snowflake service snowflake_dw), owners, tags and a domain, a glossary term, a
// context memory and a knowledge article, and waits for the vectors indexer. It returns
// the tables' FQNs by name.
func semanticCatalog(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	admin := f.c.Admin
	f.c.User(t, "alice", meridian.RoleDataSteward)
	f.ok(t, admin, "create_classification", map[string]any{"name": "PII", "description": "Personal data"})
	f.ok(t, admin, "create_tag", map[string]any{"classification": "PII", "name": "Sensitive", "description": "Sensitive personal data"})
	f.ok(t, admin, "create_domain", map[string]any{"name": "Commerce", "description": "Selling things", "domainType": "Aggregate"})
	f.c.Create(t, "databaseService", meridian.Entity{"name": "snowflake_dw", "serviceType": "Snowflake"})
	fq := map[string]string{}
	for _, tb := range []struct{ svc, name, desc string }{
		{"mysql_prod", "orders", "Every purchase a customer makes in the web shop, one row per order with its amount."},
		{"mysql_prod", "inventory", "Stock levels of each product in every warehouse."},
		{"mysql_prod", "employees", "Staff records: hire date, department and salary band."},
		{"snowflake_dw", "web_sessions", "Clickstream sessions of visitors on the website."},
		{"snowflake_dw", "raw_events", ""},
	} {
		if tb.desc == "" { // no description at all
			fq[tb.name] = f.c.Create(t, "table", meridian.Entity{"name": tb.name, "databaseSchema": tb.svc + ".shop.public",
				"columns": []any{map[string]any{"name": "payload", "dataType": "VARCHAR", "dataLength": 64}}}).FQN()
			continue
		}
		fq[tb.name] = f.c.Table(t, tb.svc, "shop", "public", tb.name, 2)
		f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fq[tb.name], "description": tb.desc})
	}
	f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fq["raw_events"], "owners": []any{"alice"}, "tags": []any{"PII.Sensitive"}})
	f.ok(t, admin, "update_entity", map[string]any{"entityType": "table", "fqn": fq["employees"], "owners": []any{"alice"}, "tags": []any{"PII.Sensitive"}})
	f.ok(t, admin, "create_glossary", map[string]any{"name": "Business", "description": "Business words"})
	f.ok(t, admin, "create_glossary_term", map[string]any{"glossary": "Business", "name": "Churn",
		"description": "The share of customers who stop buying from us within a month."})
	f.ok(t, admin, "create_context_memory", map[string]any{"name": "fiscal_year", "question": "When does our fiscal year start?",
		"answer": "The fiscal year starts on 1 February."})
	f.ok(t, admin, "create_article", map[string]any{"name": "Refund_policy", "displayName": "Refund policy",
		"content": "# Refunds\n\nCustomers may return goods within 30 days for a full refund of the purchase price."})
	if err := f.c.Dispatcher.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	return fq
}

func fqnsOfResults(v any) []string {
	var out []string
	for _, r := range list(v) {
		out = append(out, fmt.Sprint(obj(r)["fullyQualifiedName"]))
	}
	return out
}

func TestSemanticToolsRejectBadInput(t *testing.T) {
	f := newFixture(t, tools.Config{})
	long := strings.Repeat("orders ", 200)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string // in the error message
	}{
		{"semantic_search needs a query", "semantic_search", map[string]any{}, "'query' is required"},
		{"semantic_search refuses a blank query", "semantic_search", map[string]any{"query": "   "}, "'query' is required"},
		{"semantic_search refuses a long query", "semantic_search", map[string]any{"query": long}, "longer than the maximum"},
		{"semantic_search refuses size 0", "semantic_search", map[string]any{"query": "orders", "size": 0}, "'size' must be at least 1"},
		{"semantic_search refuses k 0", "semantic_search", map[string]any{"query": "orders", "k": 0}, "'k' must be at least 1"},
		{"semantic_search lists the known filters", "semantic_search", map[string]any{"query": "orders", "filters": map[string]any{"owner": []any{"alice"}}},
			"known filters: entityType, service, tags"},
		{"semantic_search refuses a filters string that is no object", "semantic_search", map[string]any{"query": "orders", "filters": "table"}, "must be an object"},
		{"semantic_search refuses an unknown entity type", "semantic_search", map[string]any{"query": "orders", "filters": map[string]any{"entityType": []any{"tabel"}}},
			"Unknown entity type"},
		{"semantic_search refuses a threshold above 1", "semantic_search", map[string]any{"query": "orders", "threshold": 1.5}, "between 0.0 and 1.0"},
		{"semantic_search refuses a negative threshold", "semantic_search", map[string]any{"query": "orders", "threshold": -0.1}, "at least 0"},
		{"semantic_search refuses a bad cursor", "semantic_search", map[string]any{"query": "orders", "cursor": "not-a-cursor"}, "cursor"},
		{"search_company_context needs a query", "search_company_context", map[string]any{"query": ""}, "'query' is required"},
		{"search_company_context refuses size 0", "search_company_context", map[string]any{"query": "churn", "size": 0}, "'size' must be at least 1"},
		{"search_company_context refuses a bad cursor", "search_company_context", map[string]any{"query": "churn", "cursor": "%%%"}, "cursor"},
		{"find_context needs a query", "find_context", map[string]any{}, "'query' is required"},
		{"find_context refuses an unknown format", "find_context", map[string]any{"query": "orders", "format": "xml"}, "must be one of markdown, json"},
		{"find_context refuses a bad cursor", "find_context", map[string]any{"query": "orders", "cursor": "zzz"}, "cursor"},
		{"nlq_search refuses an unknown index", "nlq_search", map[string]any{"query": "orders", "index": "nosuch_index"}, "nosuch_index"},
		{"nlq_search refuses limit 0", "nlq_search", map[string]any{"query": "orders", "limit": 0}, "'limit' must be at least 1"},
		{"nlq_search refuses a bad cursor", "nlq_search", map[string]any{"cursor": "!"}, "cursor"},
		{"nlq_search refuses a long query", "nlq_search", map[string]any{"query": long}, "longer than the maximum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := f.fail(t, f.c.Admin, tc.tool, tc.args)
			if body.StatusCode != 400 || !strings.Contains(strings.ToLower(body.Error), strings.ToLower(tc.want)) {
				t.Fatalf("got %d %q (hint %q), want 400 mentioning %q", body.StatusCode, body.Error, body.Hint, tc.want)
			}
		})
	}
}

func TestSemanticToolsFindWhatANaturalQuestionMeans(t *testing.T) {
	f := newFixture(t, tools.Config{})
	fq := semanticCatalog(t, f)
	admin := f.c.Admin
	question := "which table has customer orders?"

	t.Run("find_context ranks the orders table in the top 3", func(t *testing.T) {
		out := f.ok(t, admin, "find_context", map[string]any{"query": question, "format": "json"})
		got := fqnsOfResults(out["results"])
		if i := slices.Index(got, fq["orders"]); i < 0 || i > 2 {
			t.Fatalf("orders not in the top 3: %v", got)
		}
		first := obj(list(out["results"])[0])
		if first["matched"] == nil || first["score"] == nil {
			t.Fatalf("item without matched passage or score: %v", first)
		}
		md := f.ok(t, admin, "find_context", map[string]any{"query": question})
		if s, _ := md["markdown"].(string); !strings.Contains(s, fq["orders"]) || md["format"] != "markdown" {
			t.Fatalf("markdown does not name orders: %v", md["markdown"])
		}
	})

	t.Run("semantic_search answers with scores and passages, filtered", func(t *testing.T) {
		out := f.ok(t, admin, "semantic_search", map[string]any{"query": question, "filters": map[string]any{"entityType": []any{"table"}, "service": []any{"mysql_prod"}}})
		res := list(out["results"])
		if len(res) == 0 {
			t.Fatal("no hits")
		}
		for _, r := range res {
			h := obj(r)
			if h["entityType"] != "table" || h["service"] != "mysql_prod" || h["passage"] == nil {
				t.Fatalf("hit outside the filters or without passage: %v", h)
			}
		}
		if got := fqnsOfResults(res); slices.Index(got, fq["orders"]) > 2 || !slices.Contains(got, fq["orders"]) {
			t.Fatalf("orders not in the top 3: %v", got)
		}
		high := f.ok(t, admin, "semantic_search", map[string]any{"query": question, "threshold": 0.99})
		if num(high["totalFound"]) >= num(out["totalFound"]) && num(out["totalFound"]) > 0 {
			t.Fatalf("threshold 0.99 kept %v of %v", high["totalFound"], out["totalFound"])
		}
	})

	t.Run("search_company_context searches knowledge only and pages", func(t *testing.T) {
		out := f.ok(t, admin, "search_company_context", map[string]any{"query": "when does the fiscal year start", "size": 1})
		res := list(out["results"])
		if len(res) != 1 || obj(res[0])["fullyQualifiedName"] != "fiscal_year" {
			t.Fatalf("first hit %v", res)
		}
		seen := map[string]bool{}
		cursor := out["nextCursor"]
		for cursor != nil {
			next := f.ok(t, admin, "search_company_context", map[string]any{"query": "when does the fiscal year start", "size": 1, "cursor": cursor})
			for _, r := range list(next["results"]) {
				seen[fmt.Sprint(obj(r)["entityType"])] = true
			}
			cursor = next["nextCursor"]
		}
		if seen["table"] || seen["databaseService"] {
			t.Fatalf("company context returned data assets: %v", seen)
		}
		refund := f.ok(t, admin, "search_company_context", map[string]any{"query": "how do refunds work?"})
		if got := fqnsOfResults(refund["results"]); len(got) == 0 || got[0] != "Refund_policy" {
			t.Fatalf("refund question: %v", got)
		}
	})

	t.Run("nlq_search reads filters and keeps the residual words", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			check func(in map[string]any) bool
			want  []string // the results, in any order; nil: not checked
		}{
			{"PII tables owned by alice without description", func(in map[string]any) bool {
				return fmt.Sprint(in["entityTypes"]) == "[table]" && fmt.Sprint(in["owners"]) == "[alice]" &&
					fmt.Sprint(in["tags"]) == "[PII.Sensitive]" && in["missingDescription"] == true && in["mode"] == "keyword"
			}, []string{fq["raw_events"]}},
			{"tables in snowflake", func(in map[string]any) bool {
				return fmt.Sprint(in["services"]) == "[snowflake_dw]" && in["residualQuery"] == "*"
			}, []string{fq["raw_events"], fq["web_sessions"]}},
			{"tables about customer purchases updated in the last 7 days", func(in map[string]any) bool {
				return in["residualQuery"] == "customer purchases" && num(in["updatedSince"]) > 0 && in["mode"] == "hybrid"
			}, nil},
			{"my tables", func(in map[string]any) bool { return fmt.Sprint(in["owners"]) == "[admin]" }, []string{}},
		} {
			out := f.ok(t, admin, "nlq_search", map[string]any{"query": tc.query})
			in := obj(out["interpretation"])
			if !tc.check(in) {
				t.Errorf("%q read as %v", tc.query, in)
				continue
			}
			if tc.want != nil {
				got := fqnsOfResults(out["results"])
				slices.Sort(got)
				want := slices.Clone(tc.want)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%q found %v, want %v", tc.query, got, want)
				}
			}
		}
		out := f.ok(t, admin, "nlq_search", map[string]any{"query": "tables about customer purchases"})
		if got := fqnsOfResults(out["results"]); len(got) == 0 || got[0] != fq["orders"] {
			t.Fatalf("customer purchases: %v", got)
		}
	})
}

func TestSemanticToolsHideWhatTheCallerMayNotSee(t *testing.T) {
	f := newFixture(t, tools.Config{})
	semanticCatalog(t, f)
	body := f.fail(t, nil, "semantic_search", map[string]any{"query": "orders"})
	if body.StatusCode != 401 {
		t.Fatalf("anonymous call: %d %s", body.StatusCode, body.Error)
	}
}

func TestSemanticToolsStayWithinTheBudget(t *testing.T) {
	f := newFixture(t, tools.Config{Budget: 4000})
	semanticCatalog(t, f)
	for _, tool := range []string{"semantic_search", "search_company_context", "find_context", "nlq_search"} {
		res := f.call(t, f.c.Admin, tool, map[string]any{"query": "customer orders purchases refunds", "size": 50})
		if res.IsError || len(res.Text) > 4000 {
			t.Fatalf("%s: error %v or %d characters over the budget", tool, res.IsError, len(res.Text))
		}
	}
}
