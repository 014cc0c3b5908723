package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
)

// demoEntities is the sample catalog `meridian demo` loads, in dependency order: a
// warehouse with raw, staging and mart layers, governance, a metric, data quality and
// AI assets.
var demoEntities = []struct{ kind, body string }{
	{"classification", `{"name":"PII","description":"Personally identifiable information.","mutuallyExclusive":true}`},
	{"tag", `{"name":"Sensitive","classification":"PII","description":"Data that identifies a person."}`},
	{"tag", `{"name":"NonSensitive","classification":"PII","description":"Data that does not identify a person."}`},
	{"classification", `{"name":"Tier","description":"How critical an asset is.","mutuallyExclusive":true}`},
	{"tag", `{"name":"Tier1","classification":"Tier","description":"Business critical."}`},
	{"glossary", `{"name":"Business","description":"Terms the business agrees on."}`},
	{"glossaryTerm", `{"name":"Revenue","glossary":"Business","description":"Money received from orders, net of refunds."}`},
	{"glossaryTerm", `{"name":"Customer","glossary":"Business","description":"A person or company that placed at least one order."}`},
	{"domain", `{"name":"Sales","domainType":"Aggregate","description":"Orders, customers and revenue."}`},
	{"databaseService", `{"name":"acme_warehouse","serviceType":"Postgres","description":"The analytics warehouse."}`},
	{"database", `{"name":"analytics","service":"acme_warehouse"}`},
	{"databaseSchema", `{"name":"raw","database":"acme_warehouse.analytics","description":"Data as loaded from the shop."}`},
	{"databaseSchema", `{"name":"staging","database":"acme_warehouse.analytics","description":"Cleaned and typed."}`},
	{"databaseSchema", `{"name":"marts","database":"acme_warehouse.analytics","description":"Ready for dashboards."}`},
	{"table", `{"name":"orders","databaseSchema":"acme_warehouse.analytics.raw","description":"Orders as the shop exports them.",
		"columns":[{"name":"order_id","dataType":"BIGINT","constraint":"PRIMARY_KEY"},{"name":"customer_id","dataType":"BIGINT"},
		{"name":"amount","dataType":"DECIMAL","precision":12,"scale":2},{"name":"status","dataType":"VARCHAR","dataLength":20},
		{"name":"ordered_at","dataType":"TIMESTAMP"}]}`},
	{"table", `{"name":"customers","databaseSchema":"acme_warehouse.analytics.raw","description":"Customer accounts.",
		"columns":[{"name":"customer_id","dataType":"BIGINT","constraint":"PRIMARY_KEY"},
		{"name":"email","dataType":"VARCHAR","dataLength":320,"tags":[{"tagFQN":"PII.Sensitive"}]},
		{"name":"country","dataType":"CHAR","dataLength":2},{"name":"created_at","dataType":"TIMESTAMP"}]}`},
	{"table", `{"name":"stg_orders","databaseSchema":"acme_warehouse.analytics.staging","description":"Orders with refunds netted out.",
		"columns":[{"name":"order_id","dataType":"BIGINT"},{"name":"customer_id","dataType":"BIGINT"},
		{"name":"amount","dataType":"DECIMAL","precision":12,"scale":2},{"name":"ordered_on","dataType":"DATE"}]}`},
	{"table", `{"name":"daily_revenue","databaseSchema":"acme_warehouse.analytics.marts","description":"Revenue and order count per day.",
		"tags":[{"tagFQN":"Tier.Tier1"},{"tagFQN":"Business.Revenue","source":"Glossary"}],
		"columns":[{"name":"day","dataType":"DATE"},{"name":"revenue","dataType":"DECIMAL","precision":14,"scale":2},{"name":"orders","dataType":"INT"}]}`},
	{"table", `{"name":"customer_lifetime_value","databaseSchema":"acme_warehouse.analytics.marts","description":"Revenue per customer since the first order.",
		"columns":[{"name":"customer_id","dataType":"BIGINT"},{"name":"lifetime_revenue","dataType":"DECIMAL","precision":14,"scale":2},{"name":"first_order_on","dataType":"DATE"}]}`},
	{"metric", `{"name":"monthly_revenue","description":"Revenue per calendar month.","metricType":"SUM","unitOfMeasurement":"DOLLARS","granularity":"MONTH",
		"metricExpression":{"language":"SQL","code":"select date_trunc('month', day), sum(revenue) from marts.daily_revenue group by 1"}}`},
	{"testCase", `{"name":"amount_not_null","entityLink":"<#E::table::acme_warehouse.analytics.staging.stg_orders::columns::amount>","testDefinition":"columnValuesToBeNotNull"}`},
	{"testCase", `{"name":"has_rows","entityLink":"<#E::table::acme_warehouse.analytics.marts.daily_revenue>","testDefinition":"tableRowCountToBeBetween",
		"parameterValues":[{"name":"minValue","value":"1"},{"name":"maxValue","value":"100000"}]}`},
	{"mcpService", `{"name":"internal_mcp","serviceType":"Mcp","description":"MCP servers run by the data team."}`},
	{"mcpServer", `{"name":"catalog","service":"internal_mcp","serverType":"DataAccess","transportType":"StreamableHTTP","description":"Meridian itself, for assistants."}`},
	{"llmService", `{"name":"openai","serviceType":"OpenAI"}`},
	{"llmModel", `{"name":"gpt_reasoning","service":"openai","baseModel":"gpt-5","modelProvider":"OpenAI","governanceStatus":"Approved"}`},
	{"promptTemplate", `{"name":"explain_metric","templateType":"ChatCompletion","templateContent":"Explain the metric {{metric}} to a {{audience}}.",
		"variables":[{"name":"metric","dataType":"String","required":true},{"name":"audience","dataType":"String","required":false}]}`},
	{"aiApplication", `{"name":"revenue_copilot","applicationType":"Copilot","developmentStage":"Production","primaryModel":"openai.gpt_reasoning",
		"description":"Answers questions about revenue with the catalog's help."}`},
}

// demoLineage is raw → staging → marts.
var demoLineage = [][2]string{
	{"acme_warehouse.analytics.raw.orders", "acme_warehouse.analytics.staging.stg_orders"},
	{"acme_warehouse.analytics.staging.stg_orders", "acme_warehouse.analytics.marts.daily_revenue"},
	{"acme_warehouse.analytics.staging.stg_orders", "acme_warehouse.analytics.marts.customer_lifetime_value"},
	{"acme_warehouse.analytics.raw.customers", "acme_warehouse.analytics.marts.customer_lifetime_value"},
}

// demoCmd runs `meridian demo`: it loads the sample catalog into the data directory (or
// database). Running it again updates the same entities and adds no duplicates.
func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	cat, err := openCatalog(ctx, app.Config{DataDir: *dir, DatabaseURL: *dbURL})
	if err != nil {
		return err
	}
	defer cat.Close()
	if err := loadDemo(ctx, cat.Entities); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "loaded the demo catalog: %d entities, %d lineage edges, test results; start it with: meridian serve --data-dir %s\n",
		len(demoEntities), len(demoLineage), *dir)
	return nil
}

// loadDemo writes the sample catalog as the system principal.
func loadDemo(ctx context.Context, ents *store.Entities) error {
	for _, d := range demoEntities {
		var body meridian.Entity
		if err := json.Unmarshal([]byte(d.body), &body); err != nil {
			return fmt.Errorf("demo %s: %w", d.kind, err)
		}
		if _, err := ents.CreateOrUpdate(ctx, system, d.kind, body); err != nil {
			return fmt.Errorf("demo %s %s: %w", d.kind, body.Name(), err)
		}
	}
	for _, l := range demoLineage {
		edge := store.AddLineage{Edge: store.EdgeInput{
			FromEntity: meridian.EntityRef{Type: "table", FullyQualifiedName: l[0]},
			ToEntity:   meridian.EntityRef{Type: "table", FullyQualifiedName: l[1]},
		}}
		if _, err := ents.AddLineage(ctx, system, edge); err != nil {
			return fmt.Errorf("demo lineage %s -> %s: %w", l[0], l[1], err)
		}
	}
	now := time.Now().UnixMilli()
	results := []struct {
		fqn, status, result string
	}{
		{"acme_warehouse.analytics.staging.stg_orders.amount.amount_not_null", "Failed", "Found 42 null amounts in 18,230 rows"},
		{"acme_warehouse.analytics.marts.daily_revenue.has_rows", "Success", "Found 731 rows"},
	}
	for _, r := range results {
		_, err := quality.AddResult(ctx, ents, system, r.fqn, meridian.Entity{"timestamp": float64(now), "testCaseStatus": r.status, "result": r.result})
		if err != nil {
			return fmt.Errorf("demo result %s: %w", r.fqn, err)
		}
	}
	return nil
}
