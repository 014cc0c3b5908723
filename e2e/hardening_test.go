package e2e

// Attacks on the HTTP server itself (issue 8): slow bodies and connection floods, metric
// label cardinality, the MCP transport's body bound and forwarded headers, net/http's own
// plain-text answers, client hang-ups and names that do not display as what they are.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// dial opens a raw TCP connection to the server.
func (s *server) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readUntilClosed reads c until the server closes it (EOF or reset) or the deadline
// passes, and returns what it read and whether the server closed the connection.
func readUntilClosed(c net.Conn, deadline time.Time) ([]byte, bool) {
	_ = c.SetReadDeadline(deadline)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
			return out, true
		default:
			return out, false
		}
	}
}

// parseRaw parses a raw HTTP answer into a response (body decoded as JSON when it is).
func parseRaw(t *testing.T, what string, raw []byte) *response {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("%s: not an HTTP answer (%v): %q", what, err, raw)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := &response{method: "RAW", path: what, status: resp.StatusCode, header: resp.Header, raw: body}
	r.body = decodeJSONBody(body)
	return r
}

// decodeJSONBody decodes a JSON body, or returns nil.
func decodeJSONBody(b []byte) any {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// exchange sends raw bytes on a new connection and returns the answer, read until the
// server closes the connection or timeout passes.
func (s *server) exchange(t *testing.T, raw string, timeout time.Duration) *response {
	t.Helper()
	c := s.dial(t)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatalf("write: %v", err)
	}
	out, _ := readUntilClosed(c, time.Now().Add(timeout))
	return parseRaw(t, strings.SplitN(raw, "\r\n", 2)[0], out)
}

// healthzAnswers checks that /healthz answers 200 within a couple of seconds on a new
// connection.
func healthzAnswers(t *testing.T, s *server, when string) {
	t.Helper()
	hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(s.base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz %s: %v", when, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz %s: %d", when, resp.StatusCode)
	}
}

// slowBody is the head of a request that announces a 1000-byte body and sends one byte
// of it.
func slowBody(path, token string) string {
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	return "POST " + path + " HTTP/1.1\r\nHost: meridian\r\n" + auth +
		"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"
}

// TestSlowUnauthenticatedBodiesAreRefusedWithoutReading: a client without a token that
// announces a body and sends one byte of it is answered 401 at once, and its connection
// is closed, on REST and on MCP; the server keeps answering /healthz.
func TestSlowUnauthenticatedBodiesAreRefusedWithoutReading(t *testing.T) {
	s := startServer(t)
	const n = 200
	conns := make([]net.Conn, n)
	for i := range conns {
		path := "/api/v1/tables"
		if i%2 == 1 {
			path = "/mcp"
		}
		conns[i] = s.dial(t)
		if _, err := io.WriteString(conns[i], slowBody(path, "")); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for i, c := range conns {
		out, closed := readUntilClosed(c, deadline)
		if !closed {
			t.Fatalf("connection %d: still open after 10s with its body unsent; read %q", i, out)
		}
		expectError(t, parseRaw(t, fmt.Sprintf("slow body %d", i), out), http.StatusUnauthorized, "Not authorized")
	}
	healthzAnswers(t, s, "after the slow bodies")
}

// TestConnectionFloodKeepsHealthzAnswering: with the connection cap at 20, 300
// connections that never finish their headers hold at most 20 places, /healthz
// answers, and when every place is busy with a request the probes still answer on
// their reserve while other requests get a JSON 503.
func TestConnectionFloodKeepsHealthzAnswering(t *testing.T) {
	const limit, flood = 20, 300
	s := startServerWith(t, "--max-connections", fmt.Sprint(limit))
	conns := make([]net.Conn, flood)
	for i := range conns {
		conns[i] = s.dial(t)
		if _, err := io.WriteString(conns[i], "GET /api/v1/tables HTTP/1.1\r\nHost: meridian\r\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	var mu sync.Mutex
	closed := 0
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Second)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := readUntilClosed(c, deadline); ok {
				mu.Lock()
				closed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if closed < flood-limit {
		t.Errorf("%d of %d connections without a request head were closed; want at least %d (the cap is %d)",
			closed, flood, flood-limit, limit)
	}
	healthzAnswers(t, s, "during a flood of idle connections")

	// Every place busy: requests whose handlers wait for bodies that trickle in.
	for range limit {
		s.busyRequest(t)
	}
	healthzAnswers(t, s, "with every connection busy")
	r := s.exchange(t, "GET /api/v1/tables HTTP/1.1\r\nHost: meridian\r\nAuthorization: Bearer "+s.adminToken+"\r\n\r\n", 3*time.Second)
	expectError(t, r, http.StatusServiceUnavailable, "connection limit")
}

// busyRequest starts an authenticated request and returns once its handler waits for
// the body: it asks for 100 Continue, which the server sends when the handler starts
// reading, and then sends one byte of 1000.
func (s *server) busyRequest(t *testing.T) {
	t.Helper()
	c := s.dial(t)
	head := strings.Replace(slowBody("/api/v1/tables", s.adminToken), "\r\n\r\n{", "\r\nExpect: 100-continue\r\n\r\n", 1)
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatalf("write: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("a request with Expect: 100-continue got %q (%v), want 100 Continue", line, err)
	}
	if _, err := io.WriteString(c, "{"); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// TestSlowAuthenticatedBodyTimesOut: a body that does not arrive within --read-timeout
// is answered 408 and its connection closed.
func TestSlowAuthenticatedBodyTimesOut(t *testing.T) {
	s := startServerWith(t, "--read-timeout", "2s")
	for _, path := range []string{"/api/v1/tables", "/mcp"} {
		c := s.dial(t)
		start := time.Now()
		if _, err := io.WriteString(c, slowBody(path, s.adminToken)); err != nil {
			t.Fatal(err)
		}
		out, closed := readUntilClosed(c, time.Now().Add(10*time.Second))
		if !closed {
			t.Fatalf("%s: connection still open 10s after a 2s read timeout: %q", path, out)
		}
		r := parseRaw(t, path, out)
		if r.status != http.StatusRequestTimeout {
			t.Errorf("%s: status %d, want 408: %s", path, r.status, r.raw)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("%s: answered after %s, want about 2s", path, took)
		}
	}
	healthzAnswers(t, s, "after the timeouts")
}

// TestMetricsLabelsComeFromAFixedSet: invented methods and paths, without a token, do
// not grow /metrics.
func TestMetricsLabelsComeFromAFixedSet(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	anon := s.client(t, "")
	for i := range 40 {
		anon.do(fmt.Sprintf("X-INVENTED-%d", i), "/api/v1/tables", nil, nil)
		anon.do(fmt.Sprintf("Y%d", i), fmt.Sprintf("/nowhere/%d", i), nil, nil)
		anon.do("GET", fmt.Sprintf("/also/nowhere/%d", i), nil, nil)
	}
	m := string(anon.do("GET", "/metrics", nil, nil).raw)
	for _, bad := range []string{"X-INVENTED", `method="Y`, "nowhere"} {
		if strings.Contains(m, bad) {
			t.Errorf("/metrics holds a label from the request (%s)", bad)
		}
	}
	for _, want := range []string{`method="other"`, `route="unmatched"`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if lines := strings.Count(m, "meridian_http_requests_total{"); lines > 10 {
		t.Errorf("/metrics has %d request series after 120 invented requests, want a handful", lines)
	}
}

// mcpPing is a JSON-RPC ping for the MCP endpoint.
const mcpPing = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// mcpHeaders are the headers of an MCP POST.
func mcpHeaders(extra ...string) map[string]string {
	h := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

// TestMCPOversizedBodyIs413: a body beyond 9 MiB is 413, announced or chunked, with a
// JSON-RPC error, not a 400 parse error.
func TestMCPOversizedBodyIs413(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	big := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`), bytes.Repeat([]byte("a"), 10<<20)...)
	big = append(big, `"}}`...)
	r := s.admin.do("POST", "/mcp", big, mcpHeaders())
	wantMCP413(t, r)

	// Chunked: no Content-Length, so the server finds out while reading.
	req, _ := http.NewRequest("POST", s.base+"/mcp", io.MultiReader(bytes.NewReader(big)))
	for k, v := range mcpHeaders("Authorization", "Bearer "+s.adminToken) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("chunked POST /mcp: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantMCP413(t, &response{method: "POST", path: "/mcp (chunked)", status: resp.StatusCode, header: resp.Header,
		raw: body, body: decodeJSONBody(body)})
}

func wantMCP413(t *testing.T, r *response) {
	t.Helper()
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("%s: want 413", r)
	}
	e := object(r.obj(t)["error"])
	if num(e["code"]) == -32700 || !strings.Contains(str(e["message"]), "larger than") {
		t.Errorf("%s: want a JSON-RPC error saying the body is too large", r)
	}
}

// TestMCPForwardedHeadersNeedATrustedProxy: X-Forwarded-Host and -Proto neither open
// the Origin check nor move the WWW-Authenticate metadata URL, unless the peer is a
// proxy named in --trusted-proxies.
func TestMCPForwardedHeadersNeedATrustedProxy(t *testing.T) {
	t.Parallel()
	forged := []string{"Origin", "https://evil.example", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"}
	for _, c := range []struct {
		name          string
		args          []string
		wantForwarded bool
	}{
		{"untrusted", nil, false},
		{"trusted proxy", []string{"--trusted-proxies", "10.0.0.0/8, 127.0.0.1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServerWith(t, c.args...)
			r := s.admin.do("POST", "/mcp", mcpPing, mcpHeaders(forged...))
			if c.wantForwarded && r.status != http.StatusOK {
				t.Errorf("%s: want 200, the proxy's forwarded host matches the origin", r)
			}
			if !c.wantForwarded {
				expectError(t, r, http.StatusForbidden, "evil.example is not allowed")
			}

			anon := s.client(t, "").do("POST", "/mcp", mcpPing, mcpHeaders(forged[2:]...))
			challenge := anon.header.Get("WWW-Authenticate")
			meta := s.client(t, "").do("GET", "/.well-known/oauth-protected-resource/mcp", nil,
				map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"})
			resource := str(meta.obj(t)["resource"])
			for what, got := range map[string]string{"WWW-Authenticate": challenge, "metadata resource": resource} {
				if hasEvil := strings.Contains(got, "https://evil.example/"); hasEvil != c.wantForwarded {
					t.Errorf("%s = %q: forwarded host used %v, want %v", what, got, hasEvil, c.wantForwarded)
				}
				if !c.wantForwarded && !strings.Contains(got, s.base+"/") {
					t.Errorf("%s = %q, want the server's own URL %s", what, got, s.base)
				}
			}
		})
	}
}

// TestHTTPServerErrorsAreJSON: the answers net/http gives before any handler, and the
// MCP library's plain-text refusals, are {code, message} JSON like every other error.
func TestHTTPServerErrorsAreJSON(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	bearer := "Authorization: Bearer " + s.adminToken + "\r\n"
	for _, c := range []struct {
		name, raw string
		status    int
		message   string
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", 400, "Bad Request"},
		{"missing Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"headers too large", "GET /healthz HTTP/1.1\r\nHost: meridian\r\nX-Big: " + strings.Repeat("a", 200<<10) + "\r\n\r\n", 431, "Request Header Fields Too Large"},
		{"unknown transfer coding", "POST /api/v1/tables HTTP/1.1\r\nHost: meridian\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Unsupported transfer encoding"},
		{"unsupported protocol", "GET /healthz HTTP/2.0\r\nHost: meridian\r\n\r\n", 505, "unsupported protocol version"},
		{"unsupported Expect", "GET /healthz HTTP/1.1\r\nHost: meridian\r\nExpect: wonders\r\n\r\n", 417, "Expectation Failed"},
		{"MCP with a wrong method", "PUT /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + bearer + "Content-Length: 0\r\nConnection: close\r\n\r\n", 404, ""},
		{"MCP DNS rebinding", "POST /mcp HTTP/1.1\r\nHost: rebound.example\r\n" + bearer +
			"Content-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(mcpPing)) + "\r\nConnection: close\r\n\r\n" + mcpPing, 403, "rebound.example"},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectError(t, s.exchange(t, c.raw, 5*time.Second), c.status, c.message)
		})
	}
}

// TestClientHangUpIsCounted499: a request whose client hangs up before it is answered
// is logged and counted as 499, not as a server or client error.
func TestClientHangUpIsCounted499(t *testing.T) {
	s := startServer(t)
	c := s.dial(t)
	if _, err := io.WriteString(c, slowBody("/api/v1/tables", s.adminToken)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	c.Close()
	want := `meridian_http_requests_total{code="499",method="POST",route="/api/v1/tables"} 1`
	eventually(t, 5*time.Second, "/metrics counts the hang-up as 499", func() bool {
		return strings.Contains(string(s.admin.do("GET", "/metrics", nil, nil).raw), want)
	})
	m := string(s.admin.do("GET", "/metrics", nil, nil).raw)
	for _, code := range []string{"400", "500"} {
		if strings.Contains(m, `code="`+code+`",method="POST"`) {
			t.Errorf("/metrics counts the hang-up as %s too", code)
		}
	}
	eventually(t, 5*time.Second, "the log shows status=499", func() bool {
		return strings.Contains(s.stderr.String(), "status=499")
	})
	if strings.Contains(s.stderr.String(), "level=ERROR") {
		t.Errorf("a client hang-up was logged as an error:\n%s", s.stderr.String())
	}
}

// TestNamesRefuseInvisibleAndInvalidCharacters: names with bidirectional overrides,
// control characters or bytes that are not UTF-8 are refused with a 400 naming the
// field, over REST and MCP.
func TestNamesRefuseInvisibleAndInvalidCharacters(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	schemaFQN, _ := hierarchy(t, s.admin, "names_svc", "names_db", "names_sch")
	for _, c := range []struct {
		name, path string
		body       any
		message    string
	}{
		{"bidi override", "/api/v1/services/databaseServices",
			map[string]any{"name": "invoice\u202Egpj.exe", "serviceType": "Mysql"}, "name must not contain bidirectional formatting characters (U+202E)"},
		{"bidi isolate", "/api/v1/services/databaseServices",
			map[string]any{"name": "a\u2067b", "serviceType": "Mysql"}, "name must not contain bidirectional formatting characters (U+2067)"},
		{"control character", "/api/v1/services/databaseServices",
			map[string]any{"name": "bell\u0007", "serviceType": "Mysql"}, "name must not contain control characters (U+0007)"},
		{"column control character", "/api/v1/tables",
			map[string]any{"name": "t", "databaseSchema": schemaFQN, "columns": []any{map[string]any{"name": "a\tb", "dataType": "INT"}}},
			"columns.name must not contain control characters (U+0009)"},
		{"invalid UTF-8", "/api/v1/services/databaseServices",
			[]byte("{\"serviceType\":\"Mysql\",\"name\":\"ware\xffhouse\"}"), "name must be valid UTF-8"},
		{"invalid UTF-8 in a column", "/api/v1/tables",
			[]byte("{\"name\":\"t\",\"databaseSchema\":\"" + schemaFQN + "\",\"columns\":[{\"name\":\"ok\",\"dataType\":\"INT\"},{\"name\":\"\xc3\",\"dataType\":\"INT\"}]}"),
			"columns[1].name must be valid UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectError(t, s.admin.do("POST", c.path, c.body, nil), http.StatusBadRequest, c.message)
		})
	}
	// MCP: encoding/json would turn the bad byte into U+FFFD before any tool saw it.
	call := []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"create_glossary\",\"arguments\":{\"name\":\"g\xff\"}}}")
	r := s.admin.do("POST", "/mcp", call, mcpHeaders())
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.raw), "not valid UTF-8") {
		t.Errorf("%s: want 400 saying the body is not valid UTF-8", r)
	}
	list := s.admin.must(http.StatusOK, "GET", "/api/v1/services/databaseServices?limit=100", nil)
	for _, e := range list["data"].([]any) {
		if name := str(object(e)["name"]); name != "names_svc" {
			t.Errorf("a refused service was stored: %q", name)
		}
	}
}
