package e2e

// The context tools through the real TypeScript SDK client, over stdio and over HTTP, on
// the seeded catalog of mcp_test.go with a tier, an owner, a follower and a data
// contract added over REST.

import (
	"net/http"
	"strings"
	"testing"
)

// contextFixture adds to the seeded catalog: a Tier classification with Tier.Tier1 on
// stg_orders, owned by steward, who follows mart_daily_revenue; a data contract for
// stg_orders; and a domain.
func contextFixture(t *testing.T, s *server, f *catalogFixture) *principal {
	t.Helper()
	c := s.admin
	steward := s.user(t, "steward", "DataSteward")
	classificationWithTags(t, c, "Tier", "Tier1")
	stg := c.must(http.StatusOK, "GET", "/api/v1/tables/name/"+esc(f.stg), nil)
	c.must(http.StatusOK, "PATCH", "/api/v1/tables/name/"+esc(f.stg), ops(
		patchOp("add", "/tags/-", tagLabel("Tier.Tier1")),
		patchOp("add", "/owners", []any{map[string]any{"id": steward.id, "type": "user"}}),
	))
	mart := c.must(http.StatusOK, "GET", "/api/v1/tables/name/"+esc(f.mart), nil)
	if r := steward.c.do("PUT", "/api/v1/tables/"+str(mart["id"])+"/followers", nil, nil); r.status != http.StatusOK {
		t.Fatalf("follow: %s", r)
	}
	c.must(http.StatusCreated, "POST", "/api/v1/dataContracts", map[string]any{"name": "stg_orders_contract",
		"description": "Cleaned orders land hourly.", "entity": map[string]any{"id": stg["id"], "type": "table"}, "entityStatus": "Active"})
	c.must(http.StatusCreated, "POST", "/api/v1/domains", map[string]any{"name": "Commerce", "description": "Selling things", "domainType": "Aggregate"})
	return steward
}

func contextScript(f *catalogFixture) []call {
	return []call{
		{"get_company_context", map[string]any{}},
		{"get_asset_context", map[string]any{"entityType": "table", "fqn": f.stg}},
		{"get_asset_context", map[string]any{"fqn": "table:" + f.stg, "format": "json"}},
		{"get_user_context", map[string]any{"user": "steward"}},
		{"get_user_context", map[string]any{"user": "steward", "gaps": "MISSING_TIER"}},
		{"get_asset_context", map[string]any{"entityType": "table", "fqn": "mysql_prod.shop.analytics.nope"}},
		{"get_user_context", map[string]any{"gaps": "MISSING_OWNERS"}},
		{"get_persona_context", map[string]any{"name": "NoSuchPersona"}},
	}
}

func checkContextRun(t *testing.T, f *catalogFixture, run *clientRun) {
	t.Helper()
	for _, name := range []string{"get_company_context", "get_asset_context", "get_persona_context", "get_user_context"} {
		if !strings.Contains(strings.Join(run.Tools, ","), name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	for _, r := range run.Results[:5] {
		if r.Error != nil || r.IsError || r.StructuredContent == nil || r.Text == nil {
			t.Fatalf("%s failed: %s", r.Tool, r)
		}
	}
	company := run.Results[0].StructuredContent
	counts := map[string]float64{}
	for _, c := range list(company["entityCounts"]) {
		counts[str(object(c)["entityType"])] = num(object(c)["count"])
	}
	tiered := list(object(company["tieredAssets"])["items"])
	if counts["table"] != 4 || counts["domain"] != 1 || len(tiered) != 1 || str(object(tiered[0])["fullyQualifiedName"]) != f.stg {
		t.Errorf("get_company_context: counts %v, tiered %v", counts, tiered)
	}

	md := str(run.Results[1].StructuredContent["markdown"])
	for _, want := range []string{"# table " + f.stg, "steward (user)", "**Tier:** Tier.Tier1", "**Upstream:** 1 entities",
		f.raw, "**Downstream:** 1 entities", f.mart, "**Status:** failed", "stg_orders_row_count: Failed",
		"stg_orders_contract** (Active)", "| amount | DECIMAL", "## Columns (3)"} {
		if !strings.Contains(md, want) {
			t.Errorf("get_asset_context markdown lacks %q:\n%s", want, md)
		}
	}
	js := run.Results[2].StructuredContent
	if js["format"] != "json" || num(object(js["lineage"])["upstreamCount"]) != 1 || object(js["quality"])["status"] != "failed" ||
		object(js["dataContract"])["name"] != "stg_orders_contract" || len(list(js["columns"])) != 3 || js["tier"] != "Tier.Tier1" {
		t.Errorf("get_asset_context json: %s", run.Results[2])
	}

	user := run.Results[3].StructuredContent
	owned, followed := list(user["owned"]), list(object(user["followed"])["items"])
	if len(owned) != 1 || str(object(owned[0])["fullyQualifiedName"]) != f.stg || len(followed) != 1 ||
		str(object(followed[0])["fullyQualifiedName"]) != f.mart {
		t.Errorf("get_user_context: %s", run.Results[3])
	}
	if gaps := run.Results[4].StructuredContent; len(list(gaps["owned"])) != 0 || num(gaps["total"]) != 0 {
		t.Errorf("get_user_context MISSING_TIER: stg_orders has a tier, yet %s", run.Results[4])
	}

	for i, w := range []struct {
		status string
		text   string
	}{{`"statusCode":404`, "search_metadata"}, {`"statusCode":400`, "MISSING_DESCRIPTION"}, {`"statusCode":404`, "entityType persona"}} {
		r := run.Results[5+i]
		if !r.IsError || r.Error != nil || r.Text == nil || r.StructuredContent != nil ||
			!strings.Contains(*r.Text, w.status) || !strings.Contains(*r.Text, w.text) {
			t.Errorf("%s: want an isError result with %s and %q: %s", r.Tool, w.status, w.text, r)
		}
	}
}

func TestContextToolsOverStdio(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	f := seedCatalog(t, s)
	contextFixture(t, s, f)
	run := m.runTSClient(t, stdioTarget(s), contextScript(f))
	checkContextRun(t, f, run)
}

func TestContextToolsOverHTTP(t *testing.T) {
	t.Parallel()
	m := requireMCPClients(t)
	s := startServer(t)
	f := seedCatalog(t, s)
	steward := contextFixture(t, s, f)
	// The steward's own token: get_user_context without user answers for the caller.
	script := contextScript(f)
	script[3].Arguments = map[string]any{}
	run := m.runTSClient(t, httpTarget(s, "/mcp", steward.token), script)
	checkContextRun(t, f, run)
}
