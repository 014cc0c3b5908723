package rpc_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/rest"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// BenchmarkGetEntityDetails reads one table of 20 columns with every field of the
// table kind, three ways, so the cost of each layer shows: the tool alone (call), MCP
// over stateless streamable HTTP with the mcp-go client (mcp-http), and the REST GET by
// name doing the same read (rest). Server and client are wired as `meridian serve` wires
// them, with info logging to nowhere. Run with
//
//	go test ./rpc -run '^$' -bench GetEntityDetails -benchtime 2000x
func BenchmarkGetEntityDetails(b *testing.B) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := catalogtest.Open(b, app.Config{Logger: log})
	set := c.Tools
	mux := http.NewServeMux()
	rpc.NewHTTP(rpc.Config{Tools: set, Auth: c.Auth, Logger: log, Version: "bench"}).Mount(mux)
	mux.Handle("/", rest.New(rest.Config{Entities: c.Entities, Auth: c.Auth, Logger: log, Version: "bench"}))
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	fqn := c.Table(b, "warehouse", "sales", "public", "fact_orders", 20)
	token := c.Token(b, c.Admin)
	args := map[string]any{"entityType": "table", "fqn": fqn}

	b.Run("call", func(b *testing.B) {
		start := cpuTime()
		for b.Loop() {
			res, err := set.Call(ctx, c.Admin, "get_entity_details", args)
			if err != nil || res.IsError {
				b.Fatalf("call: %v %s", err, res.Text)
			}
		}
		reportCPU(b, start)
	})

	b.Run("mcp-http", func(b *testing.B) {
		cl, err := client.NewStreamableHttpClient(srv.URL+rpc.Path,
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		if err := cl.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := cl.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ClientInfo: mcp.Implementation{Name: "bench", Version: "0"}}}); err != nil {
			b.Fatal(err)
		}
		req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "get_entity_details", Arguments: args}}
		start := cpuTime()
		for b.Loop() {
			res, err := cl.CallTool(ctx, req)
			if err != nil || res.IsError {
				b.Fatalf("call: %v %v", err, res)
			}
		}
		reportCPU(b, start)
	})

	b.Run("rest", func(b *testing.B) {
		k, _ := meridian.DefaultRegistry().Kind("table")
		u := srv.URL + "/api/v1/tables/name/" + url.PathEscape(fqn) + "?fields=" + strings.Join(k.Fields, ",")
		hc := srv.Client()
		start := cpuTime()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
		reportCPU(b, start)
	})
}
