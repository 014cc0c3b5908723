package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/meridian-catalog/meridian"
)

// MCP against REST (issue #4): the two read tools an agent calls most, timed over both
// MCP transports with the mcp-go client, beside the REST calls that do the same work.
// The MCP calls use the same tables (getFQNs) and the same queries as the REST rows,
// and run after them.

// MCP transports, in report order.
const (
	mcpStdio = "stdio"
	mcpHTTP  = "HTTP"
)

// comparisons are the row groups of the MCP/REST comparison, in report order: an MCP
// tool and the REST operation (surface "REST") that does the same work.
var comparisons = []struct{ tool, rest string }{
	{"search_metadata", restSearchSame},
	{"get_entity_details", restGetSame},
}

const (
	// restSearchSame is the REST search row of the comparison. It is not timed on its
	// own: the REST search row (restSearchOp) already sends the same queries in the
	// same order, just before the MCP calls, so the report shows that timing again.
	restSearchSame = "search (same query)"
	restSearchOp   = "search, 1–2 words (index=table)"
	// restGetSame is GET by name with every field of the table kind, as
	// get_entity_details reads it.
	restGetSame = "GET by name (same fields)"
)

// mcpGoVersion names the MCP client library and its version, from the build info.
var mcpGoVersion = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/mark3labs/mcp-go" {
				return "mark3labs/mcp-go " + m.Version
			}
		}
	}
	return "mark3labs/mcp-go"
}()

// mcpOpName is the row name of an MCP tool over a transport (surface "MCP").
func mcpOpName(tool, transport string) string { return tool + " (" + transport + ")" }

// tableFields are the fields get_entity_details asks for: every field of the table kind.
func tableFields() string {
	k, ok := meridian.DefaultRegistry().Kind("table")
	if !ok {
		return "columns,owners,tags"
	}
	return strings.Join(k.Fields, ",")
}

// restCompareSurface is the REST side of the comparison that the REST surface does not
// already time: GET by name with the fields get_entity_details reads.
func restCompareSurface(c *client, getFQNs []string) surface {
	fields := tableFields()
	var bytes, calls int
	return surface{name: "REST", ops: []operation{{
		name: restGetSame,
		run: func(ctx context.Context, i int) (time.Duration, error) {
			start := time.Now()
			b, err := c.do(ctx, http.MethodGet,
				"/api/v1/tables/name/"+url.PathEscape(getFQNs[i%len(getFQNs)])+"?fields="+url.QueryEscape(fields), "", nil)
			d := time.Since(start)
			bytes, calls = bytes+len(b), calls+1
			return d, err
		},
		info: func() string {
			return fmt.Sprintf("fields=%s; %.1f KB per answer", fields, float64(bytes)/float64(max(calls, 1))/1000)
		},
	}}}
}

// mcpConn is an MCP client connected on first use (the first operation's probe), so
// that a stdio server process starts only when its rows are timed.
type mcpConn struct {
	transport string
	dial      func(ctx context.Context) (*mcpclient.Client, error)
	describe  func() string // what went wrong on the server side (a log tail), or ""

	once    sync.Once
	c       *mcpclient.Client
	err     error
	version string       // negotiated protocol version
	dials   atomic.Int64 // TCP connections opened (HTTP)
}

// about describes the connection for the notes.
func (m *mcpConn) about() string {
	s := "protocol " + m.version
	if m.transport == mcpHTTP {
		s += fmt.Sprintf(", %d TCP connection(s) so far", m.dials.Load())
	}
	return s
}

func (m *mcpConn) get(ctx context.Context) (*mcpclient.Client, error) {
	m.once.Do(func() {
		dctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		c, err := m.dial(dctx)
		if err != nil {
			m.err = m.wrap(err)
			return
		}
		if _, err := c.Initialize(dctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
			ClientInfo: mcp.Implementation{Name: "meridian-bench", Version: "0"},
		}}); err != nil {
			_ = c.Close()
			m.err = m.wrap(fmt.Errorf("initialize: %w", err))
			return
		}
		tools, err := c.ListTools(dctx, mcp.ListToolsRequest{})
		if err != nil {
			_ = c.Close()
			m.err = m.wrap(fmt.Errorf("tools/list: %w", err))
			return
		}
		have := map[string]bool{}
		for _, t := range tools.Tools {
			have[t.Name] = true
		}
		for _, cmp := range comparisons {
			if !have[cmp.tool] {
				_ = c.Close()
				m.err = fmt.Errorf("%w: tools/list over %s has no %s", errNotAvailable, m.transport, cmp.tool)
				return
			}
		}
		m.c, m.version = c, c.ProtocolVersion()
	})
	if m.c == nil && m.err == nil {
		return nil, fmt.Errorf("MCP over %s: connection closed", m.transport)
	}
	return m.c, m.err
}

// wrap adds the server's side of a failure (the stdio process's log) to err.
func (m *mcpConn) wrap(err error) error {
	if m.describe != nil {
		if s := m.describe(); s != "" {
			return fmt.Errorf("MCP over %s: %w; server log: %s", m.transport, err, s)
		}
	}
	return fmt.Errorf("MCP over %s: %w", m.transport, err)
}

// close ends the connection (the stdio process exits when its stdin closes). It may
// be called more than once.
func (m *mcpConn) close() {
	if m.c != nil {
		_ = m.c.Close()
		m.c = nil
	}
}

// dialMCPHTTP connects to <base>/mcp (stateless streamable HTTP) with the admin token,
// over one keep-alive connection.
func dialMCPHTTP(base, token string) *mcpConn {
	m := &mcpConn{transport: mcpHTTP}
	m.dial = func(ctx context.Context) (*mcpclient.Client, error) {
		var d net.Dialer
		hc := &http.Client{Timeout: 2 * time.Minute, Transport: readWhole{&http.Transport{
			MaxIdleConns: 1, MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1,
			IdleConnTimeout: time.Minute, DisableCompression: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				m.dials.Add(1)
				return d.DialContext(ctx, network, addr)
			},
		}}}
		c, err := mcpclient.NewStreamableHttpClient(base+"/mcp",
			transport.WithHTTPBasicClient(hc),
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	return m
}

// readWhole reads a JSON answer to its end before handing it over. mcp-go decodes one
// JSON value and closes the body, often before reading its end (the encoder's trailing
// newline), and net/http then closes the connection instead of reusing it: about one
// call in four would pay for a new TCP connection, which the REST rows, on one
// keep-alive connection, do not. Reading the body is part of the sample either way.
type readWhole struct{ rt http.RoundTripper }

func (t readWhole) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// stdioServer is the `meridian mcp` process of the stdio rows: its pid (for peak RSS)
// and its log.
type stdioServer struct {
	mu      sync.Mutex
	pid     int
	logPath string
}

// dialMCPStdio spawns `meridian mcp --data-dir D [extra…]` (as admin, the default) and
// talks newline-delimited JSON-RPC to it; its stderr goes to logPath.
func dialMCPStdio(ctx context.Context, bin, dataDir, logPath string, extra ...string) (*mcpConn, *stdioServer) {
	ss := &stdioServer{logPath: logPath}
	args := append([]string{"mcp", "--data-dir", dataDir}, extra...)
	m := &mcpConn{transport: mcpStdio, describe: func() string { return oneLine(logTail(logPath, 5)) }}
	m.dial = func(dctx context.Context) (*mcpclient.Client, error) {
		logf, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		var cmd *exec.Cmd
		tr := transport.NewStdioWithOptions(bin, nil, args, transport.WithCommandFunc(
			func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
				// The run's context, not the dial's: the process outlives the dial.
				cmd = exec.CommandContext(ctx, command, args...)
				cmd.Env = cleanEnv()
				cmd.Stderr = logf // a file: the transport then leaves stderr alone
				return cmd, nil
			}))
		c := mcpclient.NewClient(tr)
		err = c.Start(ctx)
		logf.Close() // the child holds its own descriptor
		if err != nil {
			return nil, err
		}
		if cmd != nil && cmd.Process != nil {
			ss.mu.Lock()
			ss.pid = cmd.Process.Pid
			ss.mu.Unlock()
		}
		return c, nil
	}
	return m, ss
}

// peakRSS is VmHWM of the stdio server process, while it runs.
func (s *stdioServer) peakRSS() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 {
		return 0
	}
	hwm, _, err := procRSS(s.pid)
	if err != nil {
		return 0
	}
	return hwm
}

// mcpSurface is the two tools over one MCP transport: search_metadata with queries[i]
// (entityType table, size 10, like the REST search) and get_entity_details of table
// getFQNs[i]. A tool result with isError is counted and shown, not fatal; a transport
// failure stops the row.
func mcpSurface(m *mcpConn, getFQNs, queries []string) surface {
	call := func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, time.Duration, error) {
		c, err := m.get(ctx)
		if err != nil {
			return nil, 0, err
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		start := time.Now()
		res, err := c.CallTool(cctx, req)
		d := time.Since(start)
		if err != nil {
			return nil, d, m.wrap(fmt.Errorf("tools/call %s: %w", name, err))
		}
		return res, d, nil
	}
	probe := func(ctx context.Context) error {
		_, err := m.get(ctx)
		return err
	}

	search := newToolStats()
	var found, returned int
	details := newToolStats()
	var columns int
	return surface{name: "MCP", ops: []operation{
		{
			name:  mcpOpName("search_metadata", m.transport),
			probe: probe,
			run: func(ctx context.Context, i int) (time.Duration, error) {
				res, d, err := call(ctx, "search_metadata",
					map[string]any{"query": queries[i%len(queries)], "entityType": "table", "size": 10})
				if err != nil {
					return d, err
				}
				if sc := search.add(i, res); sc != nil {
					found += intField(sc, "totalFound")
					returned += intField(sc, "returnedCount")
				}
				return d, nil
			},
			info: func() string {
				ok := float64(max(search.ok, 1))
				return fmt.Sprintf("%s; %.0f matches per query on average, %.1f hits returned per page; %.1f KB of text content per result",
					m.about(), float64(found)/ok, float64(returned)/ok, search.kb())
			},
			problems: search.problems,
		},
		{
			name:  mcpOpName("get_entity_details", m.transport),
			probe: probe,
			run: func(ctx context.Context, i int) (time.Duration, error) {
				res, d, err := call(ctx, "get_entity_details",
					map[string]any{"entityType": "table", "fqn": getFQNs[i%len(getFQNs)]})
				if err != nil {
					return d, err
				}
				if sc := details.add(i, res); sc != nil {
					columns += intField(sc, "returnedColumns")
				}
				return d, nil
			},
			info: func() string {
				return fmt.Sprintf("%s; %.1f columns per result, %.1f KB of text content per result",
					m.about(), float64(columns)/float64(max(details.ok, 1)), details.kb())
			},
			problems: details.problems,
		},
	}}
}

// toolStats counts a tool's results: successes, isError results (with the first
// messages) and the size of the text content.
type toolStats struct {
	calls, ok, failed int
	chars             int
	first             []string
}

func newToolStats() *toolStats { return &toolStats{} }

// add records one result and returns its structured content, or nil for an error.
func (s *toolStats) add(i int, res *mcp.CallToolResult) map[string]any {
	s.calls++
	text := ""
	for _, c := range res.Content {
		if t, ok := mcp.AsTextContent(c); ok {
			text += t.Text
		}
	}
	s.chars += len(text)
	if res.IsError {
		s.failed++
		if len(s.first) < 3 {
			msg := oneLine(text)
			if len(msg) > 200 {
				msg = msg[:200] + "…"
			}
			s.first = append(s.first, fmt.Sprintf("call %d: %s", i, msg))
		}
		return nil
	}
	s.ok++
	if m, ok := res.StructuredContent.(map[string]any); ok {
		return m
	}
	var m map[string]any
	if json.Unmarshal([]byte(text), &m) == nil {
		return m
	}
	return map[string]any{}
}

func (s *toolStats) kb() float64 { return float64(s.chars) / float64(max(s.calls, 1)) / 1000 }

// problems describes the isError results, or "" when there were none.
func (s *toolStats) problems() string {
	if s.failed == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d calls returned isError (kept in the timings); first: %s",
		s.failed, s.calls, strings.Join(s.first, " | "))
}

// intField reads an integer field of decoded JSON.
func intField(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}
