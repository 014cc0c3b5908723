package main

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/quality"
	"github.com/meridian-catalog/meridian/store"
)

func TestDemoLoadsACatalogAndCanRunTwice(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		if code := run(ctx, []string{"demo", "--data-dir", dir}, &out, &out); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, out.String())
		}
	}
	cat, err := openCatalog(ctx, app.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	mart, err := cat.Entities.Get(ctx, system, "table", store.ByFQN("acme_warehouse.analytics.marts.daily_revenue"), store.GetOptions{Fields: "tags"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := mart["version"].(float64); v != 0.1 {
		t.Fatalf("a second demo run must change nothing: version %v", v)
	}
	lin, err := cat.Entities.GetLineage(ctx, system, "table", store.ByFQN("acme_warehouse.analytics.marts.daily_revenue"), store.LineageOptions{Upstream: 3})
	if err != nil {
		t.Fatal(err)
	}
	var up []string
	for _, n := range lin.Nodes {
		up = append(up, n.Name)
	}
	sort.Strings(up)
	if strings.Join(up, ",") != "orders,stg_orders" {
		t.Fatalf("upstream of daily_revenue = %v", up)
	}
	results, err := quality.ListResults(ctx, cat.Entities, system, "acme_warehouse.analytics.staging.stg_orders.amount.amount_not_null", 0, 1<<62)
	if err != nil || len(results) != 2 || results[0]["testCaseStatus"] != "Failed" {
		t.Fatalf("results = %v, %v", results, err)
	}
}
