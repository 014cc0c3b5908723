package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meridian-catalog/meridian"
)

// The generated catalog: one database service, a few databases and schemas, two
// classifications with tags, and N tables of 20 columns. Names are snake_case words from
// a small vocabulary, so a one- or two-word search matches a realistic share of tables.
// Every table is generated from (seed, index) alone, so both drivers load the same
// catalog whatever order the workers POST in.

const (
	serviceName = "warehouse"
	columnsPer  = 20
)

var (
	databases = []string{"sales", "marketing", "finance"}
	schemas   = []string{"public", "staging"}

	layers   = []string{"raw", "stg", "int", "fact", "dim", "agg", "snapshot", "mart"}
	subjects = []string{
		"customer", "order", "invoice", "payment", "product", "inventory", "shipment",
		"account", "session", "campaign", "lead", "revenue", "refund", "supplier",
		"warehouse", "employee", "ticket", "subscription", "churn", "forecast", "click",
		"pageview", "device", "region", "store", "price", "discount", "cart", "review",
		"loyalty", "partner", "contract", "budget", "ledger", "transaction", "vendor",
		"claim", "coupon", "visit", "quota",
	}
	grains = []string{"daily", "hourly", "weekly", "monthly", "events", "history", "summary", "latest"}
	verbs  = []string{"Loaded nightly from", "Derived from", "Aggregated from", "Snapshot of", "Cleaned copy of", "Joined view over"}
	feeds  = []string{"the ERP export", "the web tracker", "Salesforce", "the billing system", "the POS feed", "Stripe", "the data lake"}

	// columnKinds maps a column-name suffix to its type.
	columnKinds = []struct {
		suffix, dataType string
		length           int
		precision, scale int
	}{
		{"id", "BIGINT", 0, 0, 0},
		{"name", "VARCHAR", 256, 0, 0},
		{"code", "VARCHAR", 32, 0, 0},
		{"status", "VARCHAR", 32, 0, 0},
		{"amount", "DECIMAL", 0, 18, 2},
		{"count", "INT", 0, 0, 0},
		{"created_at", "TIMESTAMP", 0, 0, 0},
		{"updated_at", "TIMESTAMP", 0, 0, 0},
		{"date", "DATE", 0, 0, 0},
		{"flag", "BOOLEAN", 0, 0, 0},
		{"type", "VARCHAR", 64, 0, 0},
		{"score", "DOUBLE", 0, 0, 0},
		{"email", "VARCHAR", 320, 0, 0},
		{"currency", "CHAR", 3, 0, 0},
		{"notes", "TEXT", 0, 0, 0},
	}

	tiers = []string{"Tier1", "Tier2", "Tier3", "Tier4", "Tier5"}
)

// schemaFQNs lists the schemas tables are spread over.
func schemaFQNs() []string {
	var out []string
	for _, d := range databases {
		for _, s := range schemas {
			out = append(out, serviceName+"."+d+"."+s)
		}
	}
	return out
}

// table is one generated table: its FQN and its create body.
type table struct {
	fqn  string
	body map[string]any
}

// genTable generates table i.
func genTable(seed uint64, i int) table {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	sch := schemaFQNs()[r.IntN(len(databases)*len(schemas))]
	subj, other, grain := pick(subjects), pick(subjects), pick(grains)
	name := fmt.Sprintf("%s_%s_%s_%d", pick(layers), subj, grain, i)

	cols := make([]any, 0, columnsPer)
	cols = append(cols, map[string]any{"name": "id", "dataType": "BIGINT", "constraint": "PRIMARY_KEY",
		"description": "Surrogate key of the " + subj + " row."})
	seen := map[string]bool{"id": true}
	hasEmail := false
	for len(cols) < columnsPer {
		ck := columnKinds[r.IntN(len(columnKinds))]
		w := subj
		if r.IntN(2) == 0 {
			w = pick(subjects)
		}
		cn := w + "_" + ck.suffix
		if seen[cn] {
			continue
		}
		seen[cn] = true
		c := map[string]any{"name": cn, "dataType": ck.dataType}
		if ck.length > 0 {
			c["dataLength"] = ck.length
		}
		if ck.precision > 0 {
			c["precision"], c["scale"] = ck.precision, ck.scale
		}
		if r.IntN(2) == 0 {
			c["description"] = fmt.Sprintf("The %s %s.", w, strings.ReplaceAll(ck.suffix, "_", " "))
		}
		if ck.suffix == "email" {
			hasEmail = true
			c["tags"] = []any{tagLabel("PII.Sensitive")}
		}
		cols = append(cols, c)
	}

	tags := []any{tagLabel("Tier." + pick(tiers))}
	if hasEmail {
		tags = append(tags, tagLabel("PII.Sensitive"))
	} else if r.IntN(3) == 0 {
		tags = append(tags, tagLabel("PII.NonSensitive"))
	}
	tableType := "Regular"
	if r.IntN(5) == 0 {
		tableType = "View"
	}
	desc := fmt.Sprintf("%s %s, one row per %s and %s. %s %s.", strings.ToUpper(grain[:1])+grain[1:], subj, subj, other,
		pick(verbs), pick(feeds))
	return table{
		fqn: sch + "." + name,
		body: map[string]any{
			"name":           name,
			"databaseSchema": sch,
			"description":    desc,
			"tableType":      tableType,
			"columns":        cols,
			"tags":           tags,
		},
	}
}

func tagLabel(fqn string) map[string]any {
	return map[string]any{"tagFQN": fqn, "source": "Classification", "labelType": "Manual", "state": "Confirmed"}
}

// fixture is one entity the generated tables refer to: its kind and create body.
type fixture struct {
	kind string
	body map[string]any
}

// fixtures lists the classifications, tags, service, databases and schemas the
// generated tables refer to, each after those it names.
func fixtures() []fixture {
	steps := []fixture{
		{"classification", map[string]any{"name": "Tier", "description": "Business criticality of an asset."}},
		{"classification", map[string]any{"name": "PII", "description": "Personal data."}},
		{"tag", map[string]any{"name": "Sensitive", "classification": "PII", "description": "Sensitive personal data."}},
		{"tag", map[string]any{"name": "NonSensitive", "classification": "PII", "description": "Non-sensitive personal data."}},
		{"databaseService", map[string]any{"name": serviceName, "serviceType": "Postgres"}},
	}
	for _, t := range tiers {
		steps = append(steps, fixture{"tag", map[string]any{"name": t, "classification": "Tier", "description": t + " asset."}})
	}
	for _, d := range databases {
		steps = append(steps, fixture{"database", map[string]any{"name": d, "service": serviceName}})
		for _, s := range schemas {
			steps = append(steps, fixture{"databaseSchema", map[string]any{"name": s, "database": serviceName + "." + d}})
		}
	}
	return steps
}

// createFixtures creates the fixtures through the REST API; one already there (a
// seeded classification, say) is kept.
func createFixtures(ctx context.Context, c *client) error {
	for _, f := range fixtures() {
		k, err := meridian.DefaultRegistry().Lookup(f.kind)
		if err != nil {
			return err
		}
		if _, err := c.postJSON(ctx, "/api/v1/"+k.Collection, f.body); err != nil {
			var se *statusError
			if errors.As(err, &se) && se.status == http.StatusConflict {
				continue
			}
			return err
		}
	}
	return nil
}

// encodedTable is a generated table's create request, encoded.
type encodedTable struct {
	fqn  string
	body []byte
}

// encodeTables encodes the create requests of tables 0..n-1. The ingest encodes them
// before its clock and its CPU count start, as bulkRequests does for the bulk.
func encodeTables(seed uint64, n int) ([]encodedTable, error) {
	out := make([]encodedTable, n)
	for i := range out {
		t := genTable(seed, i)
		b, err := json.Marshal(t.body)
		if err != nil {
			return nil, err
		}
		out[i] = encodedTable{fqn: t.fqn, body: b}
	}
	return out, nil
}

// ingest POSTs tables (from encodeTables) with workers concurrent clients and returns
// their FQNs, in index order, and the wall time. The first failure stops it.
func ingest(ctx context.Context, c *client, tables []encodedTable, workers int, progress func(done int)) ([]string, time.Duration, error) {
	fqns := make([]string, len(tables))
	var done atomic.Int64
	wall, err := parallel(ctx, len(tables), 1, workers, func(i, _ int) error {
		t := tables[i]
		if _, err := c.postEncoded(ctx, "/api/v1/tables", t.body); err != nil {
			return fmt.Errorf("table %d: %w", i, err)
		}
		fqns[i] = t.fqn
		if d := done.Add(1); progress != nil && d%1000 == 0 {
			progress(int(d))
		}
		return nil
	})
	if err != nil {
		return nil, wall, err
	}
	return fqns, wall, nil
}
