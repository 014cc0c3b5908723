package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/tools"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// fixture is the HTTP transport over a real catalog, mounted as `meridian serve`
// mounts it.
type fixture struct {
	c     *catalogtest.Catalog
	set   *tools.Set
	srv   *httptest.Server
	admin string // admin token
}

func newFixture(t *testing.T, readOnly bool, origins ...string) *fixture {
	t.Helper()
	c := catalogtest.Open(t, app.Config{ReadOnly: readOnly})
	set := c.Tools
	mux := http.NewServeMux()
	rpc.NewHTTP(rpc.Config{Tools: set, Auth: c.Auth, Version: "test", AllowedOrigins: origins}).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c.Table(t, "mysql_prod", "shop", "public", "orders", 3)
	return &fixture{c: c, set: set, srv: srv, admin: c.Token(t, c.Admin)}
}

// post sends one JSON-RPC message with the given headers and returns the status, the
// headers and the JSON body (unwrapped from SSE when needed).
func (f *fixture) post(t *testing.T, path, body string, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				b = []byte(data)
			}
		}
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, resp.Header, m
}

func (f *fixture) rpc(t *testing.T, token, body string) map[string]any {
	t.Helper()
	status, _, m := f.post(t, "/mcp", body, map[string]string{"Authorization": "Bearer " + token})
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, m)
	}
	return m
}

func toolNames(t *testing.T, m map[string]any) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	res, _ := m["result"].(map[string]any)
	list, _ := res["tools"].([]any)
	for _, x := range list {
		names[x.(map[string]any)["name"].(string)] = true
	}
	if len(names) == 0 {
		t.Fatalf("no tools: %v", m)
	}
	return names
}

// callResult returns the tools/call result object.
func callResult(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	return res
}

// errorText parses an isError result's text.
func errorText(t *testing.T, res map[string]any) tools.ErrorBody {
	t.Helper()
	if res["isError"] != true {
		t.Fatalf("not an error: %v", res)
	}
	if _, ok := res["structuredContent"]; ok {
		t.Fatalf("error carries structuredContent: %v", res)
	}
	content := res["content"].([]any)
	var body tools.ErrorBody
	if err := json.Unmarshal([]byte(content[0].(map[string]any)["text"].(string)), &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestHTTPAuth(t *testing.T) {
	f := newFixture(t, false)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	t.Run("no token: 401 with resource_metadata", func(t *testing.T) {
		for path, meta := range map[string]string{"/mcp": "/.well-known/oauth-protected-resource/mcp", "/api/mcp": "/.well-known/oauth-protected-resource/api/mcp"} {
			status, hdr, _ := f.post(t, path, list, nil)
			want := `Bearer resource_metadata="` + f.srv.URL + meta + `"`
			if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != want {
				t.Fatalf("%s: %d %q, want 401 %q", path, status, hdr.Get("WWW-Authenticate"), want)
			}
		}
	})
	t.Run("forwarded scheme and host count only from a trusted proxy", func(t *testing.T) {
		forwarded := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "catalog.example.com"}
		_, hdr, _ := f.post(t, "/mcp", list, forwarded)
		if want := `Bearer resource_metadata="` + f.srv.URL + `/.well-known/oauth-protected-resource/mcp"`; hdr.Get("WWW-Authenticate") != want {
			t.Errorf("untrusted peer: got %q, want %q", hdr.Get("WWW-Authenticate"), want)
		}
		proxies, err := rpc.ParseTrustedProxies("10.0.0.0/8, ::1, 127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		rpc.NewHTTP(rpc.Config{Tools: f.set, Auth: f.c.Auth, TrustedProxies: proxies}).Mount(mux)
		behind := httptest.NewServer(mux)
		defer behind.Close()
		proxied := &fixture{c: f.c, set: f.set, srv: behind}
		_, hdr, _ = proxied.post(t, "/mcp", list, forwarded)
		if want := `Bearer resource_metadata="https://catalog.example.com/.well-known/oauth-protected-resource/mcp"`; hdr.Get("WWW-Authenticate") != want {
			t.Errorf("trusted proxy: got %q, want %q", hdr.Get("WWW-Authenticate"), want)
		}
	})
	t.Run("trusted proxies parse", func(t *testing.T) {
		for in, ok := range map[string]bool{"": true, "10.0.0.0/8": true, " 127.0.0.1 , ::1": true, "fd00::/8": true,
			"10.0.0.0/33": false, "proxy.example": false, "10.0.0.1/8,nope": false} {
			if _, err := rpc.ParseTrustedProxies(in); (err == nil) != ok {
				t.Errorf("ParseTrustedProxies(%q) = %v, want ok %v", in, err, ok)
			}
		}
	})
	t.Run("bad token: 401 invalid_token", func(t *testing.T) {
		status, hdr, body := f.post(t, "/mcp", list, map[string]string{"Authorization": "Bearer nope"})
		if status != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) ||
			!strings.Contains(hdr.Get("WWW-Authenticate"), "resource_metadata=") || body["message"] == nil {
			t.Fatalf("%d %q %v", status, hdr.Get("WWW-Authenticate"), body)
		}
	})
	t.Run("metadata documents", func(t *testing.T) {
		for path, resource := range map[string]string{
			"/.well-known/oauth-protected-resource":         "/mcp",
			"/.well-known/oauth-protected-resource/mcp":     "/mcp",
			"/.well-known/oauth-protected-resource/api/mcp": "/api/mcp",
		} {
			resp, err := http.Get(f.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			scopes, _ := doc["scopes_supported"].([]any)
			if resp.StatusCode != 200 || doc["resource"] != f.srv.URL+resource || len(scopes) != 2 {
				t.Fatalf("%s: %d %v", path, resp.StatusCode, doc)
			}
		}
	})
	t.Run("token: identity reaches the tool", func(t *testing.T) {
		alice := f.c.User(t, "alice", meridian.RoleDataConsumer)
		m := f.rpc(t, f.c.Token(t, alice), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_glossary","arguments":{"name":"G","description":"g"}}}`)
		body := errorText(t, callResult(t, m))
		if body.StatusCode != 403 || !strings.Contains(body.Error, "alice") {
			t.Fatalf("consumer write: %v", body)
		}
		m = f.rpc(t, f.admin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_glossary","arguments":{"name":"G","description":"g"}}}`)
		sc, _ := callResult(t, m)["structuredContent"].(map[string]any)
		if sc["updatedBy"] != "admin" {
			t.Fatalf("admin write: %v", m)
		}
	})
}

func TestHTTPOrigin(t *testing.T) {
	f := newFixture(t, false, "https://app.example.com")
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	host := strings.TrimPrefix(f.srv.URL, "http://")
	for origin, want := range map[string]int{
		"":                         200,
		"http://localhost:6274":    200,
		"http://127.0.0.1:3000":    200,
		"http://" + host:           200,
		"https://app.example.com":  200,
		"https://evil.example.com": 403,
		"null":                     403,
	} {
		hdr := map[string]string{"Authorization": "Bearer " + f.admin}
		if origin != "" {
			hdr["Origin"] = origin
		}
		status, _, _ := f.post(t, "/mcp", list, hdr)
		if status != want {
			t.Errorf("Origin %q: %d, want %d", origin, status, want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_glossary","arguments":{"name":"G","description":"g"}}}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	t.Run("token scoped to metadata:read", func(t *testing.T) {
		f := newFixture(t, false)
		readToken := f.c.Token(t, f.c.Admin, meridian.ScopeRead)
		names := toolNames(t, f.rpc(t, readToken, list))
		if names["create_glossary"] || names["update_entity"] || !names["search_metadata"] || !names["get_entity_details"] {
			t.Fatalf("read-only list: %v", names)
		}
		if all := toolNames(t, f.rpc(t, f.admin, list)); !all["create_glossary"] {
			t.Fatalf("full token list: %v", all)
		}
		body := errorText(t, callResult(t, f.rpc(t, readToken, call)))
		if body.StatusCode != 403 || !strings.Contains(body.Error, meridian.ScopeRead) {
			t.Fatalf("got %v", body)
		}
	})
	t.Run("server started read-only", func(t *testing.T) {
		f := newFixture(t, true)
		names := toolNames(t, f.rpc(t, f.admin, list))
		if names["create_glossary"] || !names["search_metadata"] {
			t.Fatalf("read-only server list: %v", names)
		}
		body := errorText(t, callResult(t, f.rpc(t, f.admin, call)))
		if body.StatusCode != 403 || !strings.Contains(body.Error, "read-only") {
			t.Fatalf("got %v", body)
		}
	})
}

func TestProtocolErrors(t *testing.T) {
	f := newFixture(t, false)
	t.Run("unknown tool is JSON-RPC -32602", func(t *testing.T) {
		m := f.rpc(t, f.admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(mcp.INVALID_PARAMS) {
			t.Fatalf("got %v", m)
		}
	})
	t.Run("bad arguments are isError with a hint", func(t *testing.T) {
		for _, args := range []string{`{"query":"x","size":"ten"}`, `{}`, `["x"]`} {
			m := f.rpc(t, f.admin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_metadata","arguments":`+args+`}}`)
			body := errorText(t, callResult(t, m))
			if body.StatusCode != 400 || body.Hint == "" {
				t.Fatalf("%s: %v", args, body)
			}
		}
	})
	t.Run("the server survives garbage", func(t *testing.T) {
		status, _, _ := f.post(t, "/mcp", `{not json`, map[string]string{"Authorization": "Bearer " + f.admin})
		if status == http.StatusOK || status >= 500 {
			t.Fatalf("garbage: %d", status)
		}
		f.rpc(t, f.admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	})
}

// TestModernEra: the mcp-go client negotiates 2026-07-28 through server/discover over
// HTTP and calls search_metadata.
func TestModernEra(t *testing.T) {
	f := newFixture(t, false)
	c, err := client.NewStreamableHttpClient(f.srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + f.admin}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "meridian-test", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if c.ProtocolVersion() != mcp.ProtocolVersion20260728 || res.ServerInfo.Name != "meridian" {
		t.Fatalf("negotiated %q with %v", c.ProtocolVersion(), res.ServerInfo)
	}
	if c.GetSessionId() != "" {
		t.Fatalf("stateless server issued session %q", c.GetSessionId())
	}
	listed, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Tools) != len(f.set.Tools()) {
		t.Fatalf("%d tools", len(listed.Tools))
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "search_metadata"
	call.Params.Arguments = map[string]any{"query": "orders", "size": "5"}
	out, err := c.CallTool(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := out.StructuredContent.(map[string]any)
	if out.IsError || sc["totalFound"] != float64(1) || len(out.Content) != 1 {
		t.Fatalf("call: %+v", out)
	}
	text := out.Content[0].(mcp.TextContent).Text
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || fromText["totalFound"] != float64(1) {
		t.Fatalf("text content: %s", text)
	}
}

// TestModernWire checks the 2026-07-28 wire: server/discover, and ttlMs/cacheScope on
// tools/list; a header that disagrees with the body is refused.
func TestModernWire(t *testing.T) {
	f := newFixture(t, false)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	hdr := func(method string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + f.admin, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	}
	status, _, m := f.post(t, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`, hdr("server/discover"))
	res, _ := m["result"].(map[string]any)
	versions, _ := res["supportedVersions"].([]any)
	if status != 200 || len(versions) == 0 || versions[0] != "2026-07-28" {
		t.Fatalf("discover: %d %v", status, m)
	}
	found := map[string]bool{}
	for _, v := range versions {
		found[v.(string)] = true
	}
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		if !found[v] {
			t.Errorf("discover does not list %s", v)
		}
	}
	status, _, m = f.post(t, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`, hdr("tools/list"))
	res, _ = m["result"].(map[string]any)
	if status != 200 || res["ttlMs"] == nil || res["cacheScope"] != "private" {
		t.Fatalf("tools/list: %d ttlMs=%v cacheScope=%v", status, res["ttlMs"], res["cacheScope"])
	}
	status, _, _ = f.post(t, "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta+`}}`, hdr("tools/call"))
	if status != http.StatusBadRequest {
		t.Fatalf("header mismatch: %d", status)
	}
}

// TestLegacyEra: a client pinned to 2025-06-18 negotiates it through initialize.
func TestLegacyEra(t *testing.T) {
	f := newFixture(t, false)
	c, err := client.NewStreamableHttpClient(f.srv.URL+"/api/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + f.admin}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20250618
	init.Params.ClientInfo = mcp.Implementation{Name: "legacy", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != mcp.ProtocolVersion20250618 {
		t.Fatalf("negotiated %s", res.ProtocolVersion)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "get_entity_details"
	call.Params.Arguments = map[string]any{"entity_type": "table", "fqn": "mysql_prod.shop.public.orders"}
	out, err := c.CallTool(ctx, call)
	if err != nil || out.IsError {
		t.Fatalf("call: %v %+v", err, out)
	}
}

// TestStdio serves newline-delimited JSON-RPC on a pipe as the configured principal.
func TestStdio(t *testing.T) {
	cat := catalogtest.New(t)
	set := cat.Tools
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- rpc.ServeStdio(ctx, rpc.Config{Tools: set, Principal: cat.Admin}, inR, outW) }()
	go func() {
		_, _ = io.WriteString(inW, strings.Join([]string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_glossary","arguments":{"name":"StdioGlossary","description":"d"}}}`,
		}, "\n")+"\n")
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	for _, l := range lines { // tool calls run concurrently: answers may come in any order
		if _ = json.Unmarshal([]byte(l), &resp); resp.ID == 2 {
			break
		}
	}
	if resp.ID != 2 || resp.Result.StructuredContent["updatedBy"] != "admin" {
		t.Fatalf("call: %q", lines)
	}
}

// TestRenderSendsTheStructuredContentUnchanged: Render hands mcp-go the result's text
// as the raw structuredContent; the answer must be byte for byte the one mcp-go writes
// when it encodes the structured object itself, HTML-sensitive characters and line
// separators included.
func TestRenderSendsTheStructuredContentUnchanged(t *testing.T) {
	c := catalogtest.New(t)
	set := c.Tools
	fqn := c.Table(t, "svc", "db", "sch", "t", 3)
	desc := "a < b && c > d, \u2028 line \u2029 para, \"quoted\" \\ é 😀 <script>"
	if _, err := c.Entities.Patch(context.Background(), c.Admin, "table", store.ByFQN(fqn),
		[]byte(`[{"op":"add","path":"/description","value":`+strconv.Quote(desc)+`}]`), ""); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"get_entity_details", map[string]any{"entityType": "table", "fqn": fqn}},
		{"search_metadata", map[string]any{"query": "t"}},
		{"get_entity_details", map[string]any{"entityType": "table", "fqn": "no.such"}},
	} {
		res, err := set.Call(context.Background(), c.Admin, call.tool, call.args)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(rpc.Render(res))
		if err != nil {
			t.Fatal(err)
		}
		plain := rpc.Render(res)
		plain.RawStructuredContent = nil
		want, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Render answers\n%s\nwant\n%s", call.tool, got, want)
		}
		if !res.IsError && !strings.Contains(string(got), `\u003c`) && call.tool == "get_entity_details" {
			t.Errorf("%s: the description was not in the answer: %s", call.tool, got)
		}
	}
}
