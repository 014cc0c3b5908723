package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian/queryrunner/engine"
	_ "github.com/meridian-catalog/meridian/queryrunner/engine/postgres"
)

// The queryrunner suite (issue 12): per store driver, a meridian server with a
// Postgres Query Runner service whose target is a throwaway PostgreSQL database, and
// three figures, each beside a same-run floor:
//
//   - trigger-to-first-page latency of a small query (POST trigger, then GET results
//     until the first page shows SUCCESS); floor: the engine alone running the same
//     statement in this process (connect, READ ONLY transaction, query);
//   - rows/s streamed into result storage for a 1,000,000-row result (trigger until
//     SUCCESS); floor: the engine alone streaming the same rows into a sink that
//     discards them;
//   - results page latency at size 10,000 on that result; floor: a static HTTP server
//     in this process answering the same bytes.

const qrMillion = 1_000_000

// qrResult is one driver's figures.
type qrResult struct {
	driver                    string
	skipped                   string
	firstPage, firstPageFloor timing
	millionWall, millionFloor time.Duration
	pageLatency, pageFloor    timing
	pageBytes                 int
}

func benchQueryRunner(ctx context.Context, c config, driver, bin, tmp string, logf func(string, ...any)) *qrResult {
	res := &qrResult{driver: driver}
	fail := func(format string, a ...any) *qrResult {
		res.skipped = oneLine(fmt.Sprintf(format, a...))
		return res
	}
	dataDir := filepath.Join(tmp, "qr-"+driver, "data")
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o700); err != nil {
		return fail("%v", err)
	}
	var extra []string
	if driver == "postgres" {
		u, drop, err := throwawayDB(ctx, c.postgresURL)
		if err != nil {
			return fail("%v", err)
		}
		defer drop()
		extra = []string{"--database-url", u}
	}
	targetURL, dropTarget, err := throwawayDB(ctx, c.postgresURL)
	if err != nil {
		return fail("target database: %v", err)
	}
	defer dropTarget()
	tu, _ := url.Parse(targetURL)
	port, _ := strconv.Atoi(tu.Port())
	if port == 0 {
		port = 5432
	}
	pass, _ := tu.User.Password()
	target := engine.Conn{Type: "Postgres", AuthType: "basic", Host: tu.Hostname(), Port: port, Username: tu.User.Username(),
		Password: pass, Database: strings.TrimPrefix(tu.Path, "/")}

	srv, err := startServer(ctx, bin, dataDir, extra...)
	if err != nil {
		return fail("meridian serve did not start: %v", err)
	}
	defer srv.stop()
	token, err := srv.token()
	if err != nil {
		return fail("read admin.token: %v", err)
	}
	cl := newClient(srv.base, token, 1)
	defer cl.close()
	if _, err := cl.postJSON(ctx, "/api/v1/services/databaseServices", map[string]any{"name": "qr_bench", "serviceType": "Postgres"}); err != nil {
		return fail("create service: %v", err)
	}
	if _, err := cl.postJSON(ctx, "/api/v1/queryRunner/configs", map[string]any{
		"serviceName": "qr_bench", "serviceType": "Postgres", "enabled": true, "allowAdminCredentials": true,
		"hostPort":      net.JoinHostPort(target.Host, strconv.Itoa(target.Port)),
		"authConfig":    map[string]any{"authType": "Basic", "username": target.Username, "password": target.Password, "database": target.Database},
		"querySettings": map[string]any{"maxResultSize": qrMillion},
	}); err != nil {
		return fail("create Query Runner config: %v", err)
	}
	trigger := func(q string) (string, error) {
		b, err := cl.postJSON(ctx, "/api/v1/platform/apps/queryRunner/trigger", map[string]any{"query": q, "serviceName": "qr_bench"})
		if err != nil {
			return "", err
		}
		var tr struct {
			WorkflowID string `json:"workflowId"`
		}
		if err := json.Unmarshal(b, &tr); err != nil || tr.WorkflowID == "" {
			return "", fmt.Errorf("trigger answered %s", b)
		}
		return tr.WorkflowID, nil
	}
	// until polls the first page until the run is finished and returns it.
	until := func(id string, poll time.Duration) ([]byte, error) {
		for {
			b, err := cl.do(ctx, http.MethodGet, "/api/v1/platform/apps/queryRunner/results/"+id+"?size=50", "", nil)
			if err != nil {
				return nil, err
			}
			var p struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(b, &p)
			switch p.Status {
			case "SUCCESS":
				return b, nil
			case "FAILED":
				return nil, fmt.Errorf("run failed: %s", b)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			time.Sleep(poll)
		}
	}
	samples := min(c.samples, 100)
	small := "SELECT 1 AS n, 'one' AS label"

	logf("%s queryrunner: trigger-to-first-page, %d samples", driver, samples)
	var d []time.Duration
	for i := 0; i < samples; i++ {
		start := time.Now()
		id, err := trigger(small)
		if err != nil {
			return fail("trigger: %v", err)
		}
		if _, err := until(id, time.Millisecond); err != nil {
			return fail("%v", err)
		}
		d = append(d, time.Since(start))
	}
	res.firstPage = summarize(d)
	eng, _ := engine.Lookup("Postgres")
	d = d[:0]
	for i := 0; i < samples; i++ {
		start := time.Now()
		if _, err := eng.Query(ctx, target, small, engine.Limits{MaxRows: 1000, Timeout: time.Minute}, discardSink{}); err != nil {
			return fail("engine floor: %v", err)
		}
		d = append(d, time.Since(start))
	}
	res.firstPageFloor = summarize(d)

	million := "SELECT g AS n, 'row ' || g AS label FROM generate_series(1, 1000000) g"
	logf("%s queryrunner: 1,000,000 rows into result storage", driver)
	start := time.Now()
	id, err := trigger(million)
	if err != nil {
		return fail("trigger: %v", err)
	}
	if _, err := until(id, 20*time.Millisecond); err != nil {
		return fail("%v", err)
	}
	res.millionWall = time.Since(start)
	start = time.Now()
	if sum, err := eng.Query(ctx, target, million, engine.Limits{MaxRows: qrMillion, Timeout: 5 * time.Minute}, discardSink{}); err != nil || sum.Rows != qrMillion {
		return fail("engine floor: %v (%d rows)", err, sum.Rows)
	}
	res.millionFloor = time.Since(start)

	logf("%s queryrunner: results pages of 10,000 rows, %d samples", driver, samples)
	pagePath := func(i int) string {
		return fmt.Sprintf("/api/v1/platform/apps/queryRunner/results/%s?page=%d&size=10000", id, (i*37)%100)
	}
	pages := map[string][]byte{}
	d = d[:0]
	for i := 0; i < samples; i++ {
		p := pagePath(i)
		start := time.Now()
		b, err := cl.do(ctx, http.MethodGet, p, "", nil)
		if err != nil {
			return fail("results page: %v", err)
		}
		d = append(d, time.Since(start))
		pages[p] = b
		res.pageBytes = len(b)
	}
	res.pageLatency = summarize(d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("%v", err)
	}
	static := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pages[r.URL.RequestURI()])
	})}
	go func() { _ = static.Serve(ln) }()
	defer static.Close()
	sc := newClient("http://"+ln.Addr().String(), token, 1)
	defer sc.close()
	d = d[:0]
	for i := 0; i < samples; i++ {
		start := time.Now()
		if _, err := sc.do(ctx, http.MethodGet, pagePath(i), "", nil); err != nil {
			return fail("static floor: %v", err)
		}
		d = append(d, time.Since(start))
	}
	res.pageFloor = summarize(d)
	return res
}

type discardSink struct{}

func (discardSink) Columns([]engine.Column) error { return nil }
func (discardSink) Row([]any) error               { return nil }

// summarize is the p50 and p99 of samples.
func summarize(d []time.Duration) timing {
	c := append([]time.Duration(nil), d...)
	return timing{p50: percentile(c, 50), p99: percentile(c, 99), samples: len(c)}
}

// qrMarkdown is the suite's section of the report.
func qrMarkdown(machine string, rs []*qrResult) string {
	var b strings.Builder
	b.WriteString("\n## Query Runner (issue 12)\n\n")
	fmt.Fprintf(&b, "Machine: %s. Target: a throwaway PostgreSQL database on the local server; the catalog (result storage) on the store driver named.\n\n", machine)
	b.WriteString("| store driver | figure | Meridian | same-run floor | floor is |\n| - | - | - | - | - |\n")
	for _, r := range rs {
		if r.skipped != "" {
			fmt.Fprintf(&b, "| %s | skipped | %s | | |\n", r.driver, r.skipped)
			continue
		}
		fmt.Fprintf(&b, "| %s | trigger-to-first-page, small query (ms, p50 / p99, %d samples) | %s / %s | %s / %s | the engine alone: connect, READ ONLY transaction, query |\n",
			r.driver, r.firstPage.samples, ms(r.firstPage.p50), ms(r.firstPage.p99), ms(r.firstPageFloor.p50), ms(r.firstPageFloor.p99))
		fmt.Fprintf(&b, "| %s | 1,000,000 rows streamed into result storage | %.0f rows/s (%s) | %.0f rows/s (%s) | the engine alone streaming into a discarding sink |\n",
			r.driver, qrMillion/r.millionWall.Seconds(), r.millionWall.Round(time.Millisecond), qrMillion/r.millionFloor.Seconds(), r.millionFloor.Round(time.Millisecond))
		fmt.Fprintf(&b, "| %s | results page, size 10,000 (%d KiB; ms, p50 / p99, %d samples) | %s / %s | %s / %s | a static HTTP server answering the same bytes |\n",
			r.driver, r.pageBytes/1024, r.pageLatency.samples, ms(r.pageLatency.p50), ms(r.pageLatency.p99), ms(r.pageFloor.p50), ms(r.pageFloor.p99))
	}
	return b.String()
}
