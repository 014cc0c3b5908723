package tools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/tools"
)

// contextCatalog seeds what the context tools read: tiers and a certification, a
// glossary term, tables with owners and tags, lineage raw_orders → orders → mart, a
// failing test on orders and a data contract for it, two domains, a data product and a
// metric. It returns the tables' FQNs by name.
func contextCatalog(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	admin := f.c.Admin
	f.c.User(t, "alice", meridian.RoleDataSteward)
	f.c.User(t, "bob", meridian.RoleDataSteward)
	for _, c := range []struct{ classification, tag string }{{"Tier", "Tier1"}, {"Tier", "Tier2"}, {"Certification", "Gold"}, {"PII", "Sensitive"}} {
		if _, err := f.c.Entities.Get(context.Background(), admin, "classification", store.ByFQN(c.classification), store.GetOptions{}); err != nil {
			f.ok(t, admin, "create_classification", map[string]any{"name": c.classification, "description": c.classification + " tags"})
		}
		f.ok(t, admin, "create_tag", map[string]any{"classification": c.classification, "name": c.tag, "description": c.tag + " assets"})
	}
	f.ok(t, admin, "create_glossary", map[string]any{"name": "Sales", "description": "Sales words"})
	f.ok(t, admin, "create_glossary_term", map[string]any{"glossary": "Sales", "name": "Revenue", "description": "Income from sales, before costs.", "synonyms": []any{"Turnover"}})
	f.ok(t, admin, "create_domain", map[string]any{"name": "Commerce", "description": "Selling things", "domainType": "Aggregate", "owners": []any{"alice"}})
	f.ok(t, admin, "create_domain", map[string]any{"name": "Finance", "description": "Money in and out", "domainType": "Aggregate"})
	f.ok(t, admin, "create_data_product", map[string]any{"name": "RevenueReporting", "description": "Revenue figures", "domains": []any{"Finance"}})
	f.ok(t, admin, "create_metric", map[string]any{"name": "total_revenue", "description": "Sum of order amounts.", "metricExpressionLanguage": "SQL",
		"metricExpressionCode": "SUM(amount)"})
	fq := map[string]string{}
	for _, name := range []string{"raw_orders", "orders", "customers", "mart_revenue"} {
		fq[name] = f.c.Table(t, "mysql_prod", "shop", "public", name, 3)
	}
	update := func(name string, args map[string]any) {
		args["entityType"], args["fqn"] = "table", fq[name]
		f.ok(t, admin, "update_entity", args)
	}
	update("orders", map[string]any{"owners": []any{"alice"}, "tags": []any{"Tier.Tier1", "PII.Sensitive", "Sales.Revenue"}})
	update("customers", map[string]any{"owners": []any{"bob"}, "tags": []any{"Tier.Tier2", "Certification.Gold"}})
	for _, e := range [][2]string{{"raw_orders", "orders"}, {"orders", "mart_revenue"}} {
		f.ok(t, admin, "create_lineage", map[string]any{"fromEntity": map[string]any{"type": "table", "fqn": fq[e[0]]},
			"toEntity": map[string]any{"type": "table", "fqn": fq[e[1]]}})
	}
	if _, err := f.c.Entities.SeedTestDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.ok(t, admin, "create_test_case", map[string]any{"name": "rows", "fqn": fq["orders"], "testDefinitionName": "tableRowCountToBeBetween",
		"parameterValues": []any{map[string]any{"name": "minValue", "value": "1"}}})
	if _, err := quality.AddResult(context.Background(), f.c.Entities, admin, fq["orders"]+".rows",
		meridian.Entity{"timestamp": float64(1735689600000), "testCaseStatus": "Failed", "result": "Found 0 rows"}); err != nil {
		t.Fatal(err)
	}
	orders, err := f.c.Entities.Get(context.Background(), admin, "table", store.ByFQN(fq["orders"]), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.c.Create(t, "dataContract", meridian.Entity{"name": "orders_contract", "description": "Orders arrive hourly.",
		"entity": map[string]any{"id": orders.ID(), "type": "table"}, "entityStatus": "Active"})
	return fq
}

func TestGetCompanyContext(t *testing.T) {
	f := newFixture(t, tools.Config{})
	contextCatalog(t, f)
	out := f.ok(t, f.c.Admin, "get_company_context", map[string]any{})
	counts := map[string]int{}
	for _, c := range list(out["entityCounts"]) {
		counts[obj(c)["entityType"].(string)] = num(obj(c)["count"])
	}
	if counts["table"] != 4 || counts["domain"] != 2 || counts["metric"] != 1 || num(out["totalEntities"]) < 10 {
		t.Fatalf("counts %v, total %v", counts, out["totalEntities"])
	}
	names := func(section string) string {
		var got []string
		for _, it := range list(obj(out[section])["items"]) {
			got = append(got, obj(it)["name"].(string))
		}
		return strings.Join(got, ",")
	}
	for section, want := range map[string]string{
		"domains": "Commerce,Finance", "dataProducts": "RevenueReporting", "glossaries": "Sales", "metrics": "total_revenue",
		"tieredAssets": "orders,customers", "certified": "customers",
	} {
		if got := names(section); got != want {
			t.Errorf("%s: %q, want %q", section, got, want)
		}
	}
	if d := obj(list(obj(out["domains"])["items"])[0]); fmt.Sprint(d["owners"]) != "[alice]" {
		t.Errorf("domain owners %v", d["owners"])
	}
	if tier := obj(list(obj(out["tieredAssets"])["items"])[0])["tier"]; tier != "Tier.Tier1" {
		t.Errorf("first tiered asset's tier %v", tier)
	}
	if top := list(out["topServices"]); len(top) != 1 || obj(top[0])["key"] != "mysql_prod" || num(obj(top[0])["count"]) < 4 {
		t.Errorf("topServices %v", top)
	}
	if out["truncated"] != false {
		t.Errorf("nothing is cut, yet truncated: %v", out)
	}

	t.Run("a list longer than limit is cut with its total and a hint", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_company_context", map[string]any{"limit": "1"})
		d := obj(out["domains"])
		if num(d["total"]) != 2 || num(d["returned"]) != 1 || d["truncated"] != true || !strings.Contains(d["hint"].(string), "search_metadata") ||
			out["truncated"] != true {
			t.Fatalf("domains %v", d)
		}
	})
	t.Run("the answer stays within a small budget", func(t *testing.T) {
		small := newFixture(t, tools.Config{Budget: 4000})
		for i := range 40 {
			small.ok(t, small.c.Admin, "create_domain", map[string]any{"name": fmt.Sprintf("Domain%02d", i), "domainType": "Aggregate",
				"description": strings.Repeat("A long description of the domain. ", 10)})
		}
		res := small.call(t, small.c.Admin, "get_company_context", map[string]any{"limit": 50})
		if res.IsError || len(res.Text) > 4000 {
			t.Fatalf("%d characters, error %v: %.300s", len(res.Text), res.IsError, res.Text)
		}
		d := obj(res.Structured["domains"])
		if num(d["total"]) != 40 || d["truncated"] != true || num(d["returned"]) >= 40 {
			t.Fatalf("domains %v", d)
		}
	})
}

func TestGetAssetContext(t *testing.T) {
	f := newFixture(t, tools.Config{})
	fq := contextCatalog(t, f)
	t.Run("markdown by default, every section", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_asset_context", map[string]any{"entityType": "table", "fqn": fq["orders"]})
		md, _ := out["markdown"].(string)
		for _, want := range []string{"# table " + fq["orders"], "Table orders", "alice (user)", "**Tier:** Tier.Tier1", "PII.Sensitive",
			"Sales.Revenue", "**Upstream:** 1 entities", fq["raw_orders"], "**Downstream:** 1 entities", fq["mart_revenue"],
			"**Status:** failed", "rows: Failed — Found 0 rows", "orders_contract** (Active): Orders arrive hourly.",
			"Income from sales", "## Columns (3)", "| col_0001 | VARCHAR |"} {
			if !strings.Contains(md, want) {
				t.Errorf("markdown lacks %q:\n%s", want, md)
			}
		}
		if out["format"] != "markdown" || num(out["totalColumns"]) != 3 || out["hasMore"] != false || strings.Contains(md, "cursor") {
			t.Errorf("paging %v", out)
		}
	})
	t.Run("json, named as type:fqn", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_asset_context", map[string]any{"fqn": "table:" + fq["orders"], "format": "JSON"})
		lin, q, dc := obj(out["lineage"]), obj(out["quality"]), obj(out["dataContract"])
		if out["format"] != "json" || out["markdown"] != nil || out["tier"] != "Tier.Tier1" ||
			fmt.Sprint(out["glossaryTerms"]) != "[Sales.Revenue]" || fmt.Sprint(out["tags"]) != "[Tier.Tier1 PII.Sensitive]" ||
			obj(list(out["owners"])[0])["name"] != "alice" || len(list(out["columns"])) != 3 {
			t.Fatalf("got %v", out)
		}
		if num(lin["upstreamCount"]) != 1 || num(lin["downstreamCount"]) != 1 || obj(list(lin["upstream"])[0])["fqn"] != fq["raw_orders"] {
			t.Errorf("lineage %v", lin)
		}
		if q["status"] != "failed" || num(q["failed"]) != 1 || dc["name"] != "orders_contract" || dc["status"] != "Active" {
			t.Errorf("quality %v, contract %v", q, dc)
		}
		if rk := list(out["relatedKnowledge"]); len(rk) != 1 || obj(rk[0])["description"] != "Income from sales, before costs." {
			t.Errorf("related knowledge %v", rk)
		}
	})
	t.Run("an asset without lineage, tests or contract says so", func(t *testing.T) {
		out := f.ok(t, f.c.Admin, "get_asset_context", map[string]any{"entityType": "table", "fqn": fq["customers"], "format": "json"})
		if out["dataContract"] != nil || obj(out["quality"])["status"] != "none" || num(obj(out["lineage"])["upstreamCount"]) != 0 {
			t.Fatalf("got %v", out)
		}
		md := f.ok(t, f.c.Admin, "get_asset_context", map[string]any{"entityType": "table", "fqn": fq["customers"]})["markdown"].(string)
		if !strings.Contains(md, "## Data contract\n\n_None._") || !strings.Contains(md, "**Upstream:** 0 entities") {
			t.Fatalf("markdown:\n%s", md)
		}
	})
	for _, c := range []struct {
		name   string
		args   map[string]any
		status int
		text   string
		hint   string
	}{
		{"unknown fqn", map[string]any{"entityType": "table", "fqn": "mysql_prod.shop.public.nope"}, 404, "", "search_metadata"},
		{"unknown fqn, type:fqn", map[string]any{"fqn": "table:mysql_prod.shop.public.nope"}, 404, "", "search_metadata"},
		{"bad format", map[string]any{"entityType": "table", "fqn": fq["orders"], "format": "html"}, 400, "markdown, json", ""},
		{"no type", map[string]any{"fqn": fq["orders"]}, 400, "entityType", "table:"},
		{"unknown type", map[string]any{"entityType": "tabel", "fqn": fq["orders"]}, 400, "tabel", "table"},
		{"bad cursor", map[string]any{"entityType": "table", "fqn": fq["orders"], "cursor": "nope"}, 400, "cursor", ""},
		{"no fqn", map[string]any{"entityType": "table"}, 400, "fqn", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := f.fail(t, f.c.Admin, "get_asset_context", c.args)
			if b.StatusCode != c.status || !strings.Contains(b.Error, c.text) || !strings.Contains(b.Hint, c.hint) {
				t.Fatalf("got %+v", b)
			}
		})
	}
	t.Run("wide tables page their columns within the budget", func(t *testing.T) {
		small := newFixture(t, tools.Config{Budget: 8000})
		wide := small.c.Table(t, "pg", "dwh", "sales", "wide", 300)
		for _, format := range []string{"markdown", "json"} {
			seen := map[string]bool{}
			args := map[string]any{"entityType": "table", "fqn": wide, "format": format}
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("no end")
				}
				res := small.call(t, small.c.Admin, "get_asset_context", args)
				if res.IsError || len(res.Text) > 8000 {
					t.Fatalf("%s: %d characters, error %v: %.300s", format, len(res.Text), res.IsError, res.Text)
				}
				out := res.Structured
				if format == "json" {
					for _, c := range list(out["columns"]) {
						seen[obj(c)["name"].(string)] = true
					}
				} else {
					for _, line := range strings.Split(out["markdown"].(string), "\n") {
						if strings.HasPrefix(line, "| col_") {
							seen[strings.Fields(line)[1]] = true
						}
					}
				}
				next, _ := out["nextCursor"].(string)
				if next == "" {
					break
				}
				if out["truncated"] != true || (format == "markdown" && !strings.Contains(out["markdown"].(string), next)) {
					t.Fatalf("%s: a partial page without its marker: %v", format, out["truncated"])
				}
				args["cursor"] = next
			}
			if len(seen) != 300 {
				t.Fatalf("%s: %d columns seen", format, len(seen))
			}
		}
	})
}

func TestGetUserContext(t *testing.T) {
	f := newFixture(t, tools.Config{})
	fq := contextCatalog(t, f)
	ctx := context.Background()
	alice := &meridian.Principal{Name: "alice", Roles: []string{meridian.RoleDataSteward}}
	u, err := f.c.Entities.Get(ctx, f.c.Admin, "user", store.ByFQN("alice"), store.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alice.ID = u.ID()
	f.c.Create(t, "team", meridian.Entity{"name": "analytics", "teamType": "Group", "users": []any{map[string]any{"id": alice.ID, "type": "user"}}})
	// alice owns orders (tiered) and bare (no description, no tier); her team owns events
	// (no tier); bob owns customers, which alice follows.
	bare := f.c.Create(t, "table", meridian.Entity{"name": "bare", "databaseSchema": "mysql_prod.shop.public",
		"columns": []any{map[string]any{"name": "id", "dataType": "INT"}}})
	events := f.c.Table(t, "mysql_prod", "shop", "public", "events", 1)
	f.ok(t, f.c.Admin, "update_entity", map[string]any{"entityType": "table", "fqn": bare.FQN(), "owners": []any{"alice"}})
	f.ok(t, f.c.Admin, "update_entity", map[string]any{"entityType": "table", "fqn": events, "owners": []any{"analytics"}})
	customers, _ := f.c.Entities.Get(ctx, f.c.Admin, "table", store.ByFQN(fq["customers"]), store.GetOptions{})
	if _, err := f.c.Entities.AddFollower(ctx, alice, "table", customers.ID(), ""); err != nil {
		t.Fatal(err)
	}
	owned := func(out map[string]any) string {
		var got []string
		for _, o := range list(out["owned"]) {
			got = append(got, fmt.Sprintf("%v/%v/%v", obj(o)["name"], obj(o)["ownedVia"], obj(o)["gaps"]))
		}
		return strings.Join(got, " ")
	}
	for _, c := range []struct {
		name string
		p    *meridian.Principal
		args map[string]any
		want string
	}{
		{"the caller's owned assets, directly and through a team", alice, map[string]any{},
			"bare/user/[MISSING_DESCRIPTION MISSING_TIER] events/analytics/[MISSING_TIER] orders/user/[]"},
		{"missing description", alice, map[string]any{"gaps": "missing_description"}, "bare/user/[MISSING_DESCRIPTION MISSING_TIER]"},
		{"missing tier", alice, map[string]any{"ownedFilter": "MISSING_TIER"},
			"bare/user/[MISSING_DESCRIPTION MISSING_TIER] events/analytics/[MISSING_TIER]"},
		{"any gap", alice, map[string]any{"gaps": "ANY_GAP"}, "bare/user/[MISSING_DESCRIPTION MISSING_TIER] events/analytics/[MISSING_TIER]"},
		{"another user, by name", f.c.Admin, map[string]any{"user": "bob"}, "customers/user/[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := f.ok(t, c.p, "get_user_context", c.args)
			if got := owned(out); got != c.want {
				t.Fatalf("owned %q, want %q", got, c.want)
			}
		})
	}
	t.Run("teams and followed assets", func(t *testing.T) {
		out := f.ok(t, alice, "get_user_context", map[string]any{})
		fol := obj(out["followed"])
		if obj(out["user"])["name"] != "alice" || fmt.Sprint(obj(list(out["teams"])[0])["name"]) != "analytics" ||
			num(fol["total"]) != 1 || obj(list(fol["items"])[0])["fullyQualifiedName"] != fq["customers"] ||
			obj(list(fol["items"])[0])["tier"] != "Tier.Tier2" {
			t.Fatalf("got %v", out)
		}
	})
	for _, gaps := range []string{"NONE", "ANY_GAP"} {
		t.Run("cursor pages the owned assets with "+gaps, func(t *testing.T) {
			args := map[string]any{"limit": 1, "gaps": gaps}
			var got []string
			for pages := 0; pages < 10; pages++ {
				out := f.ok(t, alice, "get_user_context", args)
				for _, o := range list(out["owned"]) {
					got = append(got, obj(o)["name"].(string))
				}
				if pages > 0 && out["followed"] != nil {
					t.Fatal("followed repeated after the first page")
				}
				next, _ := out["nextCursor"].(string)
				if next == "" {
					break
				}
				args["cursor"] = next
			}
			want := "bare,events,orders"
			if gaps == "ANY_GAP" {
				want = "bare,events"
			}
			if strings.Join(got, ",") != want {
				t.Fatalf("pages gave %v, want %s", got, want)
			}
		})
	}
	for _, c := range []struct {
		name   string
		args   map[string]any
		status int
		text   string
		hint   string
	}{
		{"unknown gap filter lists the known ones", map[string]any{"gaps": "MISSING_OWNERS"}, 400, "MISSING_DESCRIPTION, MISSING_TIER, ANY_GAP", ""},
		{"unknown user", map[string]any{"user": "nobody"}, 404, "nobody", "search_metadata"},
		{"bad cursor", map[string]any{"cursor": "%%%"}, 400, "cursor", ""},
		{"bad limit", map[string]any{"limit": 0}, 400, "limit", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := f.fail(t, alice, "get_user_context", c.args)
			if b.StatusCode != c.status || !strings.Contains(b.Error, c.text) || !strings.Contains(b.Hint, c.hint) {
				t.Fatalf("got %+v", b)
			}
		})
	}
}

// personaValidator accepts the test's persona documents and checks the others with
// the catalog's schemas.
type personaValidator struct{ store.Validator }

func (v personaValidator) Validate(kind string, e meridian.Entity) error {
	if kind == testPersona.Name {
		return nil
	}
	return v.Validator.Validate(kind, e)
}

// testPersona stands in for the persona kind until the registry has it.
var testPersona = &meridian.Kind{Name: "persona", Collection: "personas", Fields: []string{"users", "owners"}, SoftDelete: true, NoLineage: true}

func TestGetPersonaContext(t *testing.T) {
	f := newFixture(t, tools.Config{})
	t.Run("a server without personas answers 404 with a hint", func(t *testing.T) {
		if _, ok := f.c.Entities.Registry().Kind("persona"); ok {
			t.Skip("the registry has the persona kind")
		}
		b := f.fail(t, f.c.Admin, "get_persona_context", map[string]any{"name": "DataAnalyst"})
		if b.StatusCode != 404 || !strings.Contains(b.Hint, "get_user_context") {
			t.Fatalf("got %+v", b)
		}
	})

	// The same catalog, with a persona kind registered locally.
	kinds := meridian.DefaultKinds()
	if _, ok := f.c.Entities.Registry().Kind("persona"); !ok {
		kinds = append(kinds, testPersona)
	}
	reg, err := meridian.NewRegistry(kinds...)
	if err != nil {
		t.Fatal(err)
	}
	ents := store.New(store.Config{Driver: f.c.Driver, Registry: reg, Validator: personaValidator{f.c.Schemas}, Policy: auth.Policy{}})
	set, err := tools.New(tools.Config{Entities: ents, Budget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	pf := &fixture{c: f.c, set: set}
	alice := f.c.User(t, "alice", meridian.RoleDataSteward)
	f.c.User(t, "carol", meridian.RoleDataConsumer)
	pf.ok(t, f.c.Admin, "create_domain", map[string]any{"name": "Commerce", "description": "Selling", "domainType": "Aggregate", "owners": []any{"alice"}})
	for i := range 30 {
		fqn := f.c.Table(t, "pg", "dwh", "sales", fmt.Sprintf("t%02d", i), 1)
		pf.ok(t, f.c.Admin, "update_entity", map[string]any{"entityType": "table", "fqn": fqn, "owners": []any{"alice"},
			"description": strings.Repeat("Sales figures. ", 12)})
	}
	if _, err := ents.Create(context.Background(), f.c.Admin, "persona", meridian.Entity{"name": "DataAnalyst",
		"description": "Analysts answer business questions with data.", "instructions": "Prefer certified tables.",
		"users": []any{map[string]any{"id": alice.ID, "type": "user"}}}); err != nil {
		t.Fatal(err)
	}
	t.Run("parts cover everything once, each within the budget", func(t *testing.T) {
		seen := map[string]int{}
		parts := 0
		for part := 1; ; part++ {
			res := pf.call(t, f.c.Admin, "get_persona_context", map[string]any{"name": "DataAnalyst", "part": part})
			if res.IsError || len(res.Text) > 4000 {
				t.Fatalf("part %d: %d characters: %.300s", part, len(res.Text), res.Text)
			}
			out := res.Structured
			parts++
			if obj(out["persona"])["instructions"] != "Prefer certified tables." || num(out["usersTotal"]) != 1 ||
				num(out["domainsTotal"]) != 1 || num(out["assetsTotal"]) != 30 || num(out["part"]) != part {
				t.Fatalf("part %d: %v", part, out)
			}
			for _, l := range []string{"users", "domains", "assets"} {
				for _, it := range list(out[l]) {
					seen[l+":"+obj(it)["name"].(string)]++
				}
			}
			if out["hasMore"] != true {
				if num(out["totalParts"]) != part {
					t.Fatalf("last part %d of %v", part, out["totalParts"])
				}
				break
			}
			if num(out["nextPart"]) != part+1 {
				t.Fatalf("nextPart %v", out["nextPart"])
			}
		}
		if parts < 2 || len(seen) != 32 || seen["users:alice"] != 1 || seen["domains:Commerce"] != 1 {
			t.Fatalf("%d parts, seen %v", parts, seen)
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s seen %d times", k, n)
			}
		}
	})
	for _, c := range []struct {
		name   string
		args   map[string]any
		status int
		text   string
	}{
		{"part 0", map[string]any{"name": "DataAnalyst", "part": 0}, 400, "part"},
		{"part past the last", map[string]any{"name": "DataAnalyst", "part": 99}, 400, "past the last"},
		{"bad part", map[string]any{"name": "DataAnalyst", "part": "first"}, 400, "part"},
		{"unknown persona", map[string]any{"name": "Nobody"}, 404, "Nobody"},
		{"no name", map[string]any{}, 400, "name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := pf.fail(t, f.c.Admin, "get_persona_context", c.args)
			if b.StatusCode != c.status || !strings.Contains(b.Error, c.text) {
				t.Fatalf("got %+v", b)
			}
		})
	}
}
