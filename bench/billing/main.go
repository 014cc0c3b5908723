// Command billing is the billing capability's benchmark: a report, not a test.
//
//	go run ./bench/billing [-entries 1000000] [-drivers sqlite,postgres] [-calls 3000]
//	                       [-o bench/billing-report.md] [-postgres-url postgres://…]
//
// Per store driver it opens a catalog as `meridian serve` does (app.Open), then:
//
//  1. times an MCP tools/call (get_entity_details on a table) through the MCP server's
//     full handler in process, unmetered (the same-run floor) and metered (no budget,
//     and with a budget, so the enforcement path runs), interleaved, and reports the
//     p50 and p95 of each and the added p50; it also times Reserve+Done alone;
//  2. measures the ledger insert rate: entries recorded per second on the caller's path
//     (journal write), and entries drained per second into the table;
//  3. bulk-loads -entries ledger rows spread over the current billing cycle (generated
//     by the database itself) and times the overview and the breakdown reports (median
//     of 3 after a warm-up).
//
// The report goes to stdout and to -o.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/bench/benchenv"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/store"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench/billing: %v\n", err)
		os.Exit(1)
	}
}

type config struct {
	entries     int
	calls       int
	drivers     []string
	out         string
	postgresURL string
	records     int
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench/billing", flag.ContinueOnError)
	var c config
	var drivers string
	fs.IntVar(&c.entries, "entries", 1_000_000, "ledger rows to bulk-load for the report timings")
	fs.IntVar(&c.calls, "calls", 3000, "timed MCP tool calls per variant")
	fs.IntVar(&c.records, "records", 100_000, "entries recorded for the insert rate")
	fs.StringVar(&drivers, "drivers", "sqlite,postgres", "store drivers")
	fs.StringVar(&c.out, "o", "", "report file (bench/billing-report.md to update the committed one)")
	fs.StringVar(&c.postgresURL, "postgres-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.drivers = strings.Split(drivers, ",")
	var b strings.Builder
	fmt.Fprintf(&b, "# Billing benchmark\n\n%s, %d logical CPUs (%s/%s), %s. %d ledger entries per driver, %d timed tool calls per variant.\n\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel(), c.entries, c.calls)
	for _, d := range c.drivers {
		section, err := runDriver(context.Background(), c, strings.TrimSpace(d))
		if err != nil {
			fmt.Fprintf(&b, "## %s\n\nnot measured: %v\n\n", d, err)
			continue
		}
		b.WriteString(section)
	}
	fmt.Fprint(stdout, b.String())
	if c.out != "" {
		return os.WriteFile(c.out, []byte(b.String()), 0o644)
	}
	return nil
}

func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func runDriver(ctx context.Context, c config, driver string) (string, error) {
	dir, err := os.MkdirTemp("", "meridian-billing-bench-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cfg := app.Config{DataDir: dir, Logger: slog.New(slog.DiscardHandler), Embedder: app.EmbedderConfig{Kind: app.EmbedderHashing}}
	if driver == "postgres" {
		dbURL, drop, err := benchenv.ThrowawayDB(ctx, c.postgresURL, "meridian_billing_bench_")
		if err != nil {
			return "", err
		}
		defer drop()
		cfg.DatabaseURL = dbURL
	} else if driver != "sqlite" {
		return "", fmt.Errorf("unknown driver %q", driver)
	}
	cat, err := app.Open(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer cat.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { cat.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", driver)
	if err := toolCallLatency(ctx, &b, cat, c.calls); err != nil {
		return "", err
	}
	if err := insertRate(ctx, &b, cat, c.records); err != nil {
		return "", err
	}
	if err := reportTimes(ctx, &b, cat, c.entries); err != nil {
		return "", err
	}
	return b.String(), nil
}

func admin() *meridian.Principal {
	return &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
}

// toolCallLatency times tools/call through the MCP server's handler, unmetered and
// metered, interleaved.
func toolCallLatency(ctx context.Context, b *strings.Builder, cat *app.Catalog, n int) error {
	p := admin()
	for _, k := range []struct{ kind, body string }{
		{"databaseService", `{"name":"bench","serviceType":"Mysql"}`}, {"database", `{"name":"db","service":"bench"}`},
		{"databaseSchema", `{"name":"sch","database":"bench.db"}`},
		{"table", `{"name":"orders","databaseSchema":"bench.db.sch","columns":[{"name":"id","dataType":"INT"}]}`},
	} {
		var e meridian.Entity
		_ = json.Unmarshal([]byte(k.body), &e)
		if _, err := cat.Entities.Create(ctx, meridian.System, k.kind, e); err != nil {
			return err
		}
	}
	plain := rpc.NewServer(rpc.Config{Tools: cat.Tools, Principal: p})
	metered := rpc.NewServer(rpc.Config{Tools: cat.Tools, Principal: p, Billing: cat.Billing})
	call := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_entity_details","arguments":{"entityType":"table","fqn":"bench.db.sch.orders"}}}`)
	pctx := meridian.WithPrincipal(ctx, p)
	one := func(s *server.MCPServer) time.Duration {
		t0 := time.Now()
		out := s.HandleMessage(pctx, call)
		d := time.Since(t0)
		if raw, _ := json.Marshal(out); strings.Contains(string(raw), `"isError":true`) {
			panic("tool call failed: " + string(raw))
		}
		return d
	}
	for i := 0; i < 200; i++ { // warm-up
		one(plain)
		one(metered)
	}
	var floor, noBudget, withBudget []time.Duration
	for i := 0; i < n; i++ {
		floor = append(floor, one(plain))
		noBudget = append(noBudget, one(metered))
	}
	if _, err := cat.Billing.PutBudgets(ctx, p, []billing.RateLimit{{Window: billing.WindowHourly, Credits: 1e9},
		{Window: billing.WindowDaily, Credits: 1e9, Scope: billing.ScopeUser}}); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		floor = append(floor, one(plain))
		withBudget = append(withBudget, one(metered))
	}
	var direct []time.Duration
	bctx := billing.WithAttribution(ctx, billing.Attribution{Principal: p, App: billing.AppMCP, ClientName: "bench", ClientVersion: "1"})
	for i := 0; i < n; i++ {
		t0 := time.Now()
		r, err := cat.Billing.Reserve(bctx, billing.FeatureMCPToolCalls, "get_entity_details", 1, nil)
		if err != nil {
			return err
		}
		r.Done(false)
		direct = append(direct, time.Since(t0))
	}
	if err := cat.Billing.DeleteBudgets(ctx, p); err != nil {
		return err
	}
	fp, mp, wp := pct(floor, 0.5), pct(noBudget, 0.5), pct(withBudget, 0.5)
	fmt.Fprintf(b, "### Metering on an MCP tool call (get_entity_details, in-process MCP handler)\n\n")
	fmt.Fprintf(b, "| Variant | p50 | p95 | added p50 |\n| --- | ---: | ---: | ---: |\n")
	fmt.Fprintf(b, "| unmetered (floor, same run) | %s | %s | |\n", us(fp), us(pct(floor, 0.95)))
	fmt.Fprintf(b, "| metered, no budget | %s | %s | %s |\n", us(mp), us(pct(noBudget, 0.95)), us(mp-fp))
	fmt.Fprintf(b, "| metered, two budgets enforced | %s | %s | %s |\n", us(wp), us(pct(withBudget, 0.95)), us(wp-fp))
	fmt.Fprintf(b, "| Reserve + Done alone (two budgets) | %s | %s | |\n\n", us(pct(direct, 0.5)), us(pct(direct, 0.95)))
	return nil
}

// insertRate records entries on the caller's path, then drains them.
func insertRate(ctx context.Context, b *strings.Builder, cat *app.Catalog, n int) error {
	bctx := billing.WithAttribution(ctx, billing.Attribution{Principal: admin(), App: billing.AppMCP, ClientName: "bench", ClientVersion: "1"})
	if err := cat.Billing.Drain(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < n; i++ {
		cat.Billing.Record(bctx, billing.FeatureEmbeddings, "embed:bench", 1, nil)
	}
	rec := time.Since(t0)
	t1 := time.Now()
	if err := cat.Billing.Drain(ctx); err != nil {
		return err
	}
	drain := time.Since(t1)
	fmt.Fprintf(b, "### Ledger insert rate (%d entries)\n\n| Step | Time | Entries/s |\n| --- | ---: | ---: |\n", n)
	fmt.Fprintf(b, "| Record (journal write, caller's path) | %s | %.0f |\n", rec.Round(time.Millisecond), float64(n)/rec.Seconds())
	fmt.Fprintf(b, "| Drain (one transaction into the table) | %s | %.0f |\n\n", drain.Round(time.Millisecond), float64(n)/drain.Seconds())
	return nil
}

// seedSelect generates ledger rows $4..$5 in the database itself, spread over
// [$1, $1+$3): 500 users, each always through one app, source, client and agent, using
// 31 tools (each under one feature), as a workspace's usage looks.
const seedSelect = `SELECT 'bench-' || CAST(i AS TEXT), $1 + (i * $2) % $3,
	CASE (i / 500) % 31 % 7 WHEN 0 THEN 'mcpToolCalls' WHEN 1 THEN 'semanticSearch' WHEN 2 THEN 'hybridSearch' WHEN 3 THEN 'nlqSearch'
		WHEN 4 THEN 'embeddings' WHEN 5 THEN 'sparqlQueries' ELSE 'executions' END,
	'tool_' || CAST((i / 500) % 31 AS TEXT),
	CASE i % 500 % 4 WHEN 0 THEN 'MCP' WHEN 1 THEN 'REST' WHEN 2 THEN 'UI' ELSE 'System' END,
	'source_' || CAST(i % 500 % 6 AS TEXT), 'client ' || CAST(i % 500 % 6 AS TEXT), 'user_' || CAST(i % 500 AS TEXT), 0,
	'agent_' || CAST(i % 500 % 20 AS TEXT), 'conv_' || CAST(i % 100000 AS TEXT), 1, 1000000, 1,
	CASE WHEN i % 50 = 0 THEN 1 ELSE 0 END, 100 + i % 1000, '[]'`

// rollUp builds the daily rollup of the bulk-loaded rows, as the drain keeps it.
const rollUp = `INSERT INTO billing_daily (day, feature, action, app, source, client, user_name, agent, units, credits, actions, failures)
	SELECT ts / 86400000, feature, action, app, source, client, user_name, agent, SUM(units), SUM(credits), COUNT(*), SUM(failed)
	FROM billing_ledger WHERE id LIKE 'bench-%' GROUP BY ts / 86400000, feature, action, app, source, client, user_name, agent`

const seedColumns = `INSERT INTO billing_ledger (id, ts, feature, action, app, source, client, user_name, is_bot, agent, conversation,
	units, credits, price_version, failed, latency_us, entities) `

func reportTimes(ctx context.Context, b *strings.Builder, cat *app.Catalog, n int) error {
	now := time.Now()
	cs, _ := cat.Billing.Plan().Cycle(now)
	span := now.UnixMilli() - cs.UnixMilli()
	const batch = 500_000
	t0 := time.Now()
	for lo := 1; lo <= n; lo += batch {
		hi := min(lo+batch-1, n)
		tx, err := cat.Driver.Begin(ctx, true)
		if err != nil {
			return err
		}
		db := tx.SQL()
		q := seedColumns + seedSelect + " FROM generate_series(CAST($4 AS BIGINT), CAST($5 AS BIGINT)) AS g(i)"
		if db.Dialect() == store.DialectSQLite {
			q = "WITH RECURSIVE g(i) AS (SELECT $4 UNION ALL SELECT i + 1 FROM g WHERE i < $5) " + seedColumns + seedSelect + " FROM g"
		}
		if _, err := db.Exec(ctx, q, cs.UnixMilli(), int64(7919), span, lo, hi); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("seed: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	seed := time.Since(t0)
	t1 := time.Now()
	tx, err := cat.Driver.Begin(ctx, true)
	if err != nil {
		return err
	}
	if _, err := tx.SQL().Exec(ctx, rollUp); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("roll up: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	var dailyRows int64
	rtx, err := cat.Driver.Begin(ctx, false)
	if err != nil {
		return err
	}
	err = rtx.SQL().QueryRow(ctx, "SELECT COUNT(*) FROM billing_daily").Scan(&dailyRows)
	_ = rtx.Rollback()
	if err != nil {
		return err
	}
	rolled := time.Since(t1)
	p := admin()
	timed := func(fn func() error) (time.Duration, error) {
		if err := fn(); err != nil { // warm-up
			return 0, err
		}
		var ds []time.Duration
		for i := 0; i < 3; i++ {
			t := time.Now()
			if err := fn(); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(t))
		}
		return pct(ds, 0.5), nil
	}
	fmt.Fprintf(b, "### Reports over %d ledger entries (bulk-loaded in %s over the current cycle; daily rollup built in %s, %d rows)\n\n| Report | Median of 3 |\n| --- | ---: |\n",
		n, seed.Round(time.Second), rolled.Round(time.Second), dailyRows)
	for _, r := range []struct {
		name string
		fn   func() error
	}{
		{"GET /billing/overview", func() error { _, err := cat.Billing.Overview(ctx, p); return err }},
		{"GET /billing/credits/breakdown/users", func() error { _, err := cat.Billing.BreakdownUsers(ctx, p, ""); return err }},
		{"GET /billing/credits/breakdown/users?app=MCP", func() error { _, err := cat.Billing.BreakdownUsers(ctx, p, "MCP"); return err }},
		{"GET /billing/credits/breakdown/sources", func() error { _, err := cat.Billing.BreakdownSources(ctx, p, ""); return err }},
		{"GET /billing/credits/breakdown/cross", func() error { _, err := cat.Billing.BreakdownCross(ctx, p, ""); return err }},
		{"GET /billing/credits/me/breakdown/cross (one of 500 users)", func() error {
			_, err := cat.Billing.MyCross(ctx, &meridian.Principal{Name: "user_7"})
			return err
		}},
	} {
		d, err := timed(r.fn)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprintf(b, "| %s | %s |\n", r.name, d.Round(time.Millisecond))
	}
	b.WriteString("\n")
	return nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	i := int(p*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000) }
