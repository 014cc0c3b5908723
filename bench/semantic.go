package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/vectors"
)

// The semantic suite (issue 9): per driver, -semantic-n tables through the bulk endpoint
// with the hashing embedder, the time until the vectors consumer has indexed them all,
// then semantic, hybrid and keyword search with the same natural questions, MCP
// semantic_search, and the floor: the same vector search as an in-process index call.
// Model figures (model.go) come once per run.

// semanticResult is one driver's column of the semantic table.
type semanticResult struct {
	driver, skipped, failed string
	bulkWall, indexWall     time.Duration
	peakRSS                 int64
	timings                 []timing
	floor                   timing
}

// embedderEnv runs the server with the embedder named kind.
func embedderEnv(kind string) []string { return []string{"MERIDIAN_EMBEDDER=" + kind} }

// questions draws k natural questions over the generated vocabulary, such as "which
// table has the daily refund figures per customer?". Call i of every semantic row sends
// questions[i].
func questions(k int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 0x9e571))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	forms := []string{
		"which table has the %s %s figures per %s?",
		"where do I find %s %s data by %s",
		"%s %s numbers for each %s",
		"show me the %s history of %s and %s",
	}
	out := make([]string, k)
	for i := range out {
		out[i] = fmt.Sprintf(forms[r.IntN(len(forms))], pick(grains), pick(subjects), pick(subjects))
	}
	return out
}

// benchSemantic runs the semantic suite on one driver.
func benchSemantic(ctx context.Context, c config, driver, bin, tmp string, logf func(string, ...any)) *semanticResult {
	res := &semanticResult{driver: driver}
	dataDir := filepath.Join(tmp, "semantic-"+driver, "data")
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o700); err != nil {
		res.skipped = err.Error()
		return res
	}
	var extra []string
	var dbURL string
	if driver == "postgres" {
		u, drop, err := throwawayDB(ctx, c.postgresURL)
		if err != nil {
			res.skipped = err.Error()
			return res
		}
		defer drop()
		dbURL, extra = u, []string{"--database-url", u}
	}
	srv, err := startServerEnv(ctx, bin, dataDir, embedderEnv(app.EmbedderHashing), extra...)
	if err != nil {
		res.skipped = "meridian serve did not start: " + oneLine(err.Error())
		return res
	}
	defer srv.stop()
	token, err := srv.token()
	if err != nil {
		res.failed = "read admin.token: " + err.Error()
		return res
	}
	ing := newClient(srv.base, token, c.workers)
	defer ing.close()
	if err := createFixtures(ctx, ing); err != nil {
		res.failed = "fixtures: " + oneLine(err.Error())
		return res
	}
	reqs, err := bulkRequests(c.seed, 0, c.semanticN)
	if err != nil {
		res.failed = "encode the bulk requests: " + oneLine(err.Error())
		return res
	}
	logf("%s semantic: bulk-ingesting %d tables", driver, c.semanticN)
	if res.bulkWall, err = ingestBulk(ctx, ing, reqs, c.semanticN, c.workers); err != nil {
		res.failed = "bulk ingest: " + oneLine(err.Error())
		return res
	}
	ingested := time.Now()
	if err := waitIndexed(ctx, ing, driver, logf); err != nil {
		res.failed = "indexing: " + oneLine(err.Error())
		return res
	}
	res.indexWall = time.Since(ingested)
	logf("%s semantic: %d tables indexed %s after the ingest", driver, c.semanticN, res.indexWall.Round(time.Millisecond))
	if err := waitCaughtUp(ctx, ing, driver, logf); err != nil {
		res.failed = "waiting for the consumers: " + oneLine(err.Error())
		return res
	}
	if waited, err := srv.settle(ctx); err != nil {
		logf("%s semantic: timing anyway: %v", driver, err)
	} else {
		logf("%s semantic: the server settled %s after the consumers caught up", driver, waited.Round(time.Second))
	}

	k := c.samples + warmups(c.samples)
	qs := questions(k, c.seed)
	seq := newClient(srv.base, token, 1)
	defer seq.close()
	httpMCP := dialMCPHTTP(srv.base, token)
	defer httpMCP.close()
	surfaces := []surface{
		{name: "REST", ops: []operation{
			searchOp(seq, "semantic (GET /search/semantic)", "/api/v1/search/semantic", qs),
			searchOp(seq, "hybrid (GET /search/hybrid)", "/api/v1/search/hybrid", qs),
			searchOp(seq, "keyword, same questions (GET /search/query)", "/api/v1/search/query", qs),
		}},
		{name: "MCP", ops: []operation{semanticToolOp(httpMCP, qs)}},
	}
	for _, s := range surfaces {
		for _, op := range s.ops {
			logf("%s semantic: %s %s", driver, s.name, op.name)
			t := timeOp(ctx, s.name, op, c.samples)
			if t.err != "" {
				logf("%s semantic: %s: FAILED: %s", driver, op.name, oneLine(t.err))
			}
			res.timings = append(res.timings, t)
		}
	}
	httpMCP.close()
	if hwm, _, err := srv.peakRSS(); err == nil {
		res.peakRSS = hwm
	}
	seq.close()
	ing.close()
	if err := srv.stop(); err != nil {
		logf("%s semantic: stop: %v", driver, err)
	}

	// The floor: the same vector searches as index calls in-process, the server stopped.
	drv, err := app.OpenDriver(ctx, app.Config{DataDir: dataDir, DatabaseURL: dbURL})
	if err != nil {
		res.floor = timing{name: "floor", err: oneLine(err.Error())}
		return res
	}
	defer drv.Close()
	logf("%s semantic: floor", driver)
	res.floor = timeOp(ctx, "driver", indexFloorOp(vectors.NewIndex(drv), qs), c.samples)
	return res
}

// waitIndexed polls /api/v1/events/consumers until the vectors consumer has no backlog.
func waitIndexed(ctx context.Context, c *client, driver string, logf func(string, ...any)) error {
	return waitConsumers(ctx, c, driver, logf, vectors.ConsumerName)
}

// waitCaughtUp polls /api/v1/events/consumers until no consumer has a backlog: the
// graph, the activity stream and the audit log catch up after the vectors, and timed
// requests that shared the CPU with them would measure their catching up.
func waitCaughtUp(ctx context.Context, c *client, driver string, logf func(string, ...any)) error {
	return waitConsumers(ctx, c, driver, logf, "")
}

// waitConsumers polls /api/v1/events/consumers until the consumer named name (every
// consumer when name is "") has no backlog: every 100 ms for the first 10 s, then
// every second, since counting the backlog of a large outbox (PostgreSQL: COUNT(*)
// over change_events) is itself work for the database.
func waitConsumers(ctx context.Context, c *client, driver string, logf func(string, ...any), name string) error {
	start, last := time.Now(), time.Now()
	for {
		b, err := c.do(ctx, http.MethodGet, "/api/v1/events/consumers", "", nil)
		if err != nil {
			return err
		}
		var st struct {
			Data []struct {
				Name    string `json:"name"`
				Pending int64  `json:"pending"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("consumers answer: %w", err)
		}
		pending, found := int64(0), false
		for _, s := range st.Data {
			if name == "" || s.Name == name {
				pending, found = pending+s.Pending, true
			}
		}
		switch {
		case !found && name != "":
			return fmt.Errorf("no %s consumer in /api/v1/events/consumers", name)
		case pending == 0:
			return nil
		case time.Since(last) > 15*time.Second:
			logf("%s: %d events still to deliver", driver, pending)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval(time.Since(start))):
		}
	}
}

// searchOp times GET path?q=<question>&index=table&size=10 and counts the hits.
func searchOp(c *client, name, path string, qs []string) operation {
	var calls, empty, hits int
	return operation{
		name: name,
		run: func(ctx context.Context, i int) (time.Duration, error) {
			start := time.Now()
			b, err := c.do(ctx, http.MethodGet, path+"?q="+url.QueryEscape(qs[i%len(qs)])+"&index=table&size=10", "", nil)
			d := time.Since(start)
			if err != nil {
				return d, err
			}
			var res struct {
				Hits struct {
					Hits []json.RawMessage `json:"hits"`
				} `json:"hits"`
			}
			if err := json.Unmarshal(b, &res); err != nil {
				return d, fmt.Errorf("search answer: %w", err)
			}
			calls, hits = calls+1, hits+len(res.Hits.Hits)
			if len(res.Hits.Hits) == 0 {
				empty++
			}
			return d, nil
		},
		info: func() string {
			return fmt.Sprintf("%.1f hits per question, %d of %d questions found nothing", float64(hits)/float64(max(calls, 1)), empty, calls)
		},
	}
}

// semanticToolOp times the MCP tool semantic_search {query, size: 10} over m.
func semanticToolOp(m *mcpConn, qs []string) operation {
	var failures int
	var first string
	return operation{
		name:  "semantic_search (HTTP)",
		probe: func(ctx context.Context) error { _, err := m.get(ctx); return err },
		run: func(ctx context.Context, i int) (time.Duration, error) {
			c, err := m.get(ctx)
			if err != nil {
				return 0, err
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = "semantic_search"
			req.Params.Arguments = map[string]any{"query": qs[i%len(qs)], "size": 10}
			start := time.Now()
			res, err := c.CallTool(ctx, req)
			d := time.Since(start)
			if err == nil && res.IsError {
				failures++
				if first == "" && len(res.Content) > 0 {
					if t, ok := res.Content[0].(mcp.TextContent); ok {
						first = oneLine(t.Text)
					}
				}
			}
			return d, err
		},
		problems: func() string {
			if failures == 0 {
				return ""
			}
			return fmt.Sprintf("%d calls answered isError, first: %s", failures, first)
		},
	}
}

// indexFloorOp is the vector search without the server: embed the question with the
// hashing embedder and ask the index for the 100 nearest tables, in-process.
func indexFloorOp(ix *vectors.Index, qs []string) operation {
	emb := vectors.Hashing{}
	return operation{
		name: "vector index search in-process (embed + kNN, k=100)",
		run: func(ctx context.Context, i int) (time.Duration, error) {
			start := time.Now()
			v, err := emb.Embed(ctx, []string{qs[i%len(qs)]})
			if err != nil {
				return 0, err
			}
			_, err = ix.Search(ctx, vectors.Query{Model: emb.Model(), Dim: emb.Dimension(), Vector: v[0], K: 100, Kinds: []string{"table"}})
			return time.Since(start), err
		},
	}
}

// pollInterval is how long waitIndexed waits between two polls after waiting waited.
func pollInterval(waited time.Duration) time.Duration {
	if waited < 10*time.Second {
		return 100 * time.Millisecond
	}
	return time.Second
}
