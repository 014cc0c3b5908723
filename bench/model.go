package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/uuid"
	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/vectors"
)

// The model figures of the semantic suite, once per run: embedding throughput of the
// built-in embedders in-process; a SQLite server with USE-lite (memory with the model
// loaded, indexing rate through the outbox, semantic search latency); and the time from
// spawning `meridian mcp` to its tools/list answer, per embedder.

// modelResult is the model part of the semantic report.
type modelResult struct {
	throughput  []throughput
	useLite     useLiteServer
	firstAnswer []firstAnswer
}

// throughput is one embedder's rate on table documents.
type throughput struct {
	embedder     string
	docs, chunks int
	wall         time.Duration
	err          string
}

// useLiteServer is `meridian serve` with MERIDIAN_EMBEDDER=use-lite on SQLite.
type useLiteServer struct {
	n                   int
	err                 string
	startRSS, startHWM  int64 // just after /readyz: the model is loaded, the catalog empty
	peakRSS             int64 // VmHWM after indexing and the searches
	bulkWall, indexWall time.Duration
	semantic            timing
}

// firstAnswer is spawn → initialize → tools/list over stdio, several times.
type firstAnswer struct {
	embedder string
	runs     []time.Duration // sorted
	err      string
}

// throughputDocs is how many table documents each embedder embeds in-process.
var throughputDocs = map[string]int{app.EmbedderHashing: 5000, app.EmbedderUSELite: 100}

// firstAnswerRuns is how many times `meridian mcp` is spawned per embedder.
const firstAnswerRuns = 7

// benchModels measures the model figures.
func benchModels(ctx context.Context, c config, bin, tmp string, logf func(string, ...any)) *modelResult {
	res := &modelResult{}
	for _, kind := range []string{app.EmbedderHashing, app.EmbedderUSELite} {
		logf("models: %s throughput", kind)
		res.throughput = append(res.throughput, measureThroughput(ctx, kind, throughputDocs[kind], c.seed))
	}
	dataDir := filepath.Join(tmp, "use-lite", "data")
	res.useLite = serveUSELite(ctx, c, bin, dataDir, logf)
	for _, kind := range []string{app.EmbedderHashing, app.EmbedderUSELite} {
		logf("models: first MCP answer over stdio with %s", kind)
		res.firstAnswer = append(res.firstAnswer, measureFirstAnswer(ctx, bin, dataDir, kind))
	}
	return res
}

// measureThroughput embeds the documents of n generated tables, 32 per call, as the
// indexer builds them (one or more chunks each).
func measureThroughput(ctx context.Context, kind string, n int, seed uint64) throughput {
	t := throughput{embedder: kind, docs: n}
	emb, err := app.NewEmbedder(app.EmbedderConfig{Kind: kind})
	if err != nil {
		t.err = err.Error()
		return t
	}
	k, _ := meridian.DefaultRegistry().Kind("table")
	var docs [][]string
	for i := range n {
		tb := genTable(seed, i)
		e := meridian.Entity(tb.body)
		e["id"], e["fullyQualifiedName"] = uuid.NewString(), tb.fqn
		docs = append(docs, vectors.DocumentOf(k, e).Chunks)
	}
	start := time.Now()
	for from := 0; from < n; from += 32 {
		batch := slices.Concat(docs[from:min(from+32, n)]...)
		if _, err := emb.Embed(ctx, batch); err != nil {
			t.err = err.Error()
			return t
		}
		t.chunks += len(batch)
	}
	t.wall = time.Since(start)
	return t
}

// serveUSELite starts a SQLite server with USE-lite, reads its memory, bulk-loads
// -model-n tables, waits until they are indexed and times semantic search.
func serveUSELite(ctx context.Context, c config, bin, dataDir string, logf func(string, ...any)) useLiteServer {
	r := useLiteServer{n: c.modelN}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o700); err != nil {
		r.err = err.Error()
		return r
	}
	srv, err := startServerEnv(ctx, bin, dataDir, embedderEnv(app.EmbedderUSELite))
	if err != nil {
		r.err = "meridian serve did not start: " + oneLine(err.Error())
		return r
	}
	defer srv.stop()
	r.startHWM, r.startRSS, _ = srv.peakRSS()
	token, err := srv.token()
	if err != nil {
		r.err = err.Error()
		return r
	}
	ing := newClient(srv.base, token, c.workers)
	defer ing.close()
	if err := createFixtures(ctx, ing); err != nil {
		r.err = "fixtures: " + oneLine(err.Error())
		return r
	}
	reqs, err := bulkRequests(c.seed, 0, c.modelN)
	if err != nil {
		r.err = "encode the bulk requests: " + oneLine(err.Error())
		return r
	}
	logf("models: use-lite server: bulk-ingesting %d tables", c.modelN)
	if r.bulkWall, err = ingestBulk(ctx, ing, reqs, c.modelN, c.workers); err != nil {
		r.err = "bulk ingest: " + oneLine(err.Error())
		return r
	}
	ingested := time.Now()
	if err := waitIndexed(ctx, ing, "use-lite", logf); err != nil {
		r.err = "indexing: " + oneLine(err.Error())
		return r
	}
	r.indexWall = time.Since(ingested)
	samples := min(c.samples, 200)
	qs := questions(samples+warmups(samples), c.seed)
	seq := newClient(srv.base, token, 1)
	defer seq.close()
	r.semantic = timeOp(ctx, "REST", searchOp(seq, "semantic (GET /search/semantic)", "/api/v1/search/semantic", qs), samples)
	r.peakRSS, _, _ = srv.peakRSS()
	if err := srv.stop(); err != nil {
		logf("models: use-lite server stop: %v", err)
	}
	return r
}

// measureFirstAnswer spawns `meridian mcp --data-dir dataDir` with the embedder kind
// firstAnswerRuns times and times each from the spawn to the tools/list answer.
func measureFirstAnswer(ctx context.Context, bin, dataDir, kind string) firstAnswer {
	fa := firstAnswer{embedder: kind}
	for range firstAnswerRuns {
		d, err := firstAnswerOnce(ctx, bin, dataDir, kind)
		if err != nil {
			fa.err = oneLine(err.Error())
			return fa
		}
		fa.runs = append(fa.runs, d)
	}
	slices.Sort(fa.runs)
	return fa
}

func firstAnswerOnce(ctx context.Context, bin, dataDir, kind string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tr := transport.NewStdioWithOptions(bin, nil, []string{"mcp", "--data-dir", dataDir},
		transport.WithCommandFunc(func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = append(cleanEnv(), embedderEnv(kind)...)
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(io.Discard))
	c := mcpclient.NewClient(tr)
	start := time.Now()
	if err := c.Start(ctx); err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "meridian-bench", Version: "0"}}}); err != nil {
		return 0, fmt.Errorf("initialize: %w", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	d := time.Since(start)
	if len(tools.Tools) == 0 {
		return d, fmt.Errorf("tools/list answered no tools")
	}
	return d, nil
}
