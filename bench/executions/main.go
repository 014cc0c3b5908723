// Command executions benchmarks the MCP execution records (collab/executions) on each
// store driver: the insert rate of single records (one transaction each, the path of
// POST /api/v1/mcpExecutions) and of batches (the bulk path that loads the catalog),
// and a one-day range query (List of one server with startTs and endTs) over -n
// records, beside the same-run floors: the same inserts and the same query as raw SQL
// through the module's seam, without validation, authorization or decoding.
//
//	go run ./bench/executions [-n 1000000] [-drivers sqlite,postgres] [-o bench/executions-report.md]
//
// It is a report, not a test: see bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/bench/benchenv"
	"github.com/meridian-catalog/meridian/collab/executions"
	"github.com/meridian-catalog/meridian/schema"
	"github.com/meridian-catalog/meridian/store"
)

type config struct {
	n, servers, days, batch, singles, samples int
	drivers                                   []string
	out, postgresURL                          string
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "bench/executions: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var drivers string
	fs.IntVar(&c.n, "n", 1_000_000, "execution records to load per driver")
	fs.IntVar(&c.servers, "servers", 10, "MCP servers the records are spread over")
	fs.IntVar(&c.days, "days", 30, "days the records are spread over")
	fs.IntVar(&c.batch, "batch", 1000, "records per bulk transaction")
	fs.IntVar(&c.singles, "singles", 2000, "records inserted one transaction each (timed)")
	fs.IntVar(&c.samples, "samples", 200, "timed one-day range queries")
	fs.StringVar(&drivers, "drivers", "sqlite,postgres", "comma-separated store drivers: sqlite, postgres")
	fs.StringVar(&c.out, "o", filepath.Join(os.TempDir(), "meridian-executions-report.md"), "report file (bench/executions-report.md updates the committed one); empty for none")
	fs.StringVar(&c.postgresURL, "postgres-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server; a throwaway database is created and dropped")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.drivers = strings.Split(drivers, ",")
	ctx := context.Background()
	var results []result
	for _, d := range c.drivers {
		fmt.Fprintf(stderr, "driver %s: loading %d records…\n", d, c.n)
		r, err := benchDriver(ctx, c, strings.TrimSpace(d), stderr)
		if err != nil {
			r = result{driver: d, err: err.Error()}
		}
		results = append(results, r)
	}
	report := render(c, results)
	fmt.Fprint(stdout, report)
	if c.out != "" {
		return os.WriteFile(c.out, []byte(report), 0o644)
	}
	return nil
}

// result is one driver's figures.
type result struct {
	driver                 string
	err                    string
	singleRate, bulkRate   float64 // records per second
	floorSingle, floorBulk float64 // raw INSERT, records per second
	loadTime               time.Duration
	dayRows                int // records in the queried day of one server
	query, queryFloor      []time.Duration
	queryAll               []time.Duration // every page of the day
}

const dayMs = int64(86_400_000)

func benchDriver(ctx context.Context, c config, driver string, log io.Writer) (result, error) {
	res := result{driver: driver}
	dir, err := os.MkdirTemp("", "meridian-bench-exec-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	cfg := app.Config{DataDir: dir}
	switch driver {
	case "sqlite":
	case "postgres":
		dbURL, drop, err := benchenv.ThrowawayDB(ctx, c.postgresURL, "meridian_bench_exec_")
		if err != nil {
			return res, err
		}
		defer drop()
		cfg.DatabaseURL = dbURL
	default:
		return res, fmt.Errorf("unknown driver %q", driver)
	}
	db, err := app.OpenDriver(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer db.Close()
	v, err := schema.New()
	if err != nil {
		return res, err
	}
	ents := store.New(store.Config{Driver: db, Registry: meridian.DefaultRegistry(), Validator: v, Policy: auth.Policy{}})
	svc, err := executions.New(ents)
	if err != nil {
		return res, err
	}
	admin := &meridian.Principal{Name: "admin", Roles: []string{meridian.RoleAdmin}}
	if _, err := ents.Create(ctx, admin, "mcpService", meridian.Entity{"name": "bench", "serviceType": "Mcp"}); err != nil {
		return res, err
	}
	var servers []string
	for i := range c.servers {
		r, err := ents.Create(ctx, admin, "mcpServer", meridian.Entity{"name": fmt.Sprintf("s%d", i), "serverType": "Database", "service": "bench"})
		if err != nil {
			return res, err
		}
		servers = append(servers, r.Entity.ID())
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	span := int64(c.days) * dayMs
	perServer := c.n / c.servers
	step := max(span/int64(max(perServer, 1)), 1)
	record := func(server string, i int) meridian.Entity {
		ts := start + int64(i)*step
		return meridian.Entity{"server": map[string]any{"type": "mcpServer"}, "serverId": server, "timestamp": ts,
			"endTimestamp": ts + 250, "status": []string{"Success", "Success", "Success", "Failed", "Timeout"}[i%5],
			"executedBy": "bench-bot", "environment": "Production"}
	}

	// Bulk load: batches of records of one server at a time.
	t0 := time.Now()
	loaded := 0
	for si, server := range servers {
		for i := 0; i < perServer; i += c.batch {
			var docs []meridian.Entity
			for j := i; j < min(i+c.batch, perServer); j++ {
				docs = append(docs, record(server, j))
			}
			if _, err := svc.CreateMany(ctx, admin, executions.MCP, docs); err != nil {
				return res, fmt.Errorf("bulk load: %w", err)
			}
			loaded += len(docs)
		}
		fmt.Fprintf(log, "  %s: %d/%d records (%d servers) in %s\n", driver, loaded, c.n, si+1, time.Since(t0).Round(time.Second))
	}
	res.loadTime = time.Since(t0)
	res.bulkRate = float64(loaded) / res.loadTime.Seconds()

	// Single records, one transaction each, at timestamps after the loaded ones.
	single := start + span + dayMs
	t0 = time.Now()
	for i := range c.singles {
		doc := record(servers[i%len(servers)], 0)
		doc["timestamp"], doc["endTimestamp"] = single+int64(i), single+int64(i)+250
		if _, err := svc.Create(ctx, admin, executions.MCP, doc); err != nil {
			return res, fmt.Errorf("single insert: %w", err)
		}
	}
	res.singleRate = float64(c.singles) / time.Since(t0).Seconds()

	// Floors: the same inserts as raw SQL, one transaction each and in batches.
	floor := single + dayMs
	raw := func(n, per int) (float64, error) {
		t0 := time.Now()
		for i := 0; i < n; i += per {
			err := ents.InTx(ctx, true, func(tx store.Tx) error {
				for j := i; j < min(i+per, n); j++ {
					doc := record(servers[0], 0)
					doc["timestamp"] = floor + int64(j)
					b, _ := json.Marshal(doc)
					if _, err := tx.SQL().Exec(ctx, `INSERT INTO executions (id, series, parent_id, ts, status, deleted, doc)
VALUES ($1, 'floor', $2, $3, 'Success', 0, $4)`, uuid.NewString(), servers[0], floor+int64(j), string(b)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
		}
		floor += int64(n)
		return float64(n) / time.Since(t0).Seconds(), nil
	}
	if res.floorSingle, err = raw(c.singles, 1); err != nil {
		return res, err
	}
	if res.floorBulk, err = raw(min(c.n/10, 100_000), c.batch); err != nil {
		return res, err
	}

	// One-day range queries on random servers and days.
	rng := mrand.New(mrand.NewPCG(1, 2))
	for i := range c.samples + c.samples/10 {
		server := servers[rng.IntN(len(servers))]
		from := start + int64(rng.IntN(c.days-1))*dayMs
		q := executions.ListQuery{ParentID: server, HasStart: true, HasEnd: true, Start: from, End: from + dayMs - 1, Limit: executions.MaxLimit}
		t := time.Now()
		page, err := svc.List(ctx, admin, executions.MCP, q)
		if err != nil {
			return res, err
		}
		first := time.Since(t)
		for page.After != "" {
			q.After = page.After
			if page, err = svc.List(ctx, admin, executions.MCP, q); err != nil {
				return res, err
			}
		}
		all := time.Since(t)
		res.dayRows = page.Total
		t = time.Now()
		err = ents.InTx(ctx, false, func(tx store.Tx) error {
			rows, err := tx.SQL().Query(ctx, `SELECT doc FROM executions WHERE series = $1 AND parent_id = $2 AND ts >= $3 AND ts <= $4
ORDER BY ts DESC LIMIT $5`, executions.MCP.Name, server, from, from+dayMs-1, executions.MaxLimit)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var doc string
				if err := rows.Scan(&doc); err != nil {
					return err
				}
			}
			return rows.Err()
		})
		if err != nil {
			return res, err
		}
		floorTime := time.Since(t)
		if i >= c.samples/10 { // the first tenth warms up
			res.query = append(res.query, first)
			res.queryAll = append(res.queryAll, all)
			res.queryFloor = append(res.queryFloor, floorTime)
		}
	}
	return res, nil
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func render(c config, rs []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Execution records benchmark\n\n")
	fmt.Fprintf(&b, "Generated by `go run ./bench/executions -n %d` on %s.\n\n", c.n, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Machine: %s, %s/%s, %s.\n\n", benchenv.Hardware(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "Load average at the end of the run (1, 5, 15 min): %s. Compare the rows with their same-run floors "+
			"rather than with another run's figures.\n\n", strings.Join(strings.Fields(string(la))[:3], ", "))
	}
	fmt.Fprintf(&b, "%d MCP execution records over %d servers and %d days (%d per server per day), loaded through "+
		"`executions.Service.CreateMany` in batches of %d (validated, authorized, one transaction per batch). "+
		"Single inserts go through `Service.Create`, one transaction each (the path of `POST /api/v1/mcpExecutions`, without HTTP). "+
		"The one-day query is `Service.List` of one server with startTs/endTs one day apart and limit %d "+
		"(count plus first page), %d samples on random servers and days after a tenth as warm-up. "+
		"Floors, same run: raw `INSERT` through the module's SQL seam without validation or authorization, and the "+
		"same day as one raw `SELECT doc … ORDER BY ts DESC LIMIT %d`.\n\n",
		c.n, c.servers, c.days, c.n/c.servers/max(c.days, 1), c.batch, executions.MaxLimit, c.samples, executions.MaxLimit)
	fmt.Fprintf(&b, "| Measure | %s |\n|---|%s\n", strings.Join(names(rs), " | "), strings.Repeat("---|", len(rs)))
	row := func(label string, f func(r result) string) {
		fmt.Fprintf(&b, "| %s |", label)
		for _, r := range rs {
			if r.err != "" {
				fmt.Fprintf(&b, " error |")
				continue
			}
			fmt.Fprintf(&b, " %s |", f(r))
		}
		b.WriteString("\n")
	}
	row("Bulk load (records/s)", func(r result) string {
		return fmt.Sprintf("%.0f (%s total)", r.bulkRate, r.loadTime.Round(time.Second))
	})
	row("Bulk floor: raw INSERT batches (records/s)", func(r result) string { return fmt.Sprintf("%.0f", r.floorBulk) })
	row("Single insert, one transaction each (records/s)", func(r result) string { return fmt.Sprintf("%.0f", r.singleRate) })
	row("Single floor: raw INSERT, one transaction each (records/s)", func(r result) string { return fmt.Sprintf("%.0f", r.floorSingle) })
	row("Records in the queried day", func(r result) string { return fmt.Sprint(r.dayRows) })
	row("One-day query, first page p50 / p95 / p99", func(r result) string {
		return ms(pct(r.query, 50)) + " / " + ms(pct(r.query, 95)) + " / " + ms(pct(r.query, 99))
	})
	row("One-day query, every page p50 / p95", func(r result) string { return ms(pct(r.queryAll, 50)) + " / " + ms(pct(r.queryAll, 95)) })
	row("Floor: raw SELECT of the day p50 / p95", func(r result) string { return ms(pct(r.queryFloor, 50)) + " / " + ms(pct(r.queryFloor, 95)) })
	for _, r := range rs {
		if r.err != "" {
			fmt.Fprintf(&b, "\n%s: %s\n", r.driver, r.err)
		}
	}
	return b.String()
}

func names(rs []result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.driver)
	}
	return out
}
