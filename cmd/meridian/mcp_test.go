package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/rest"
)

// TestMCPStdio runs `meridian mcp` on pipes: newline-delimited JSON-RPC on stdout
// only, as the --as user, answering quickly.
func TestMCPStdio(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCmd("token", "create", "--data-dir", dir, "--user", "carol", "--role", "DataConsumer"); code != 0 {
		t.Fatalf("token create: %s", stderr)
	}
	for _, c := range []struct {
		args       []string
		wantTools  bool // write tools listed
		wantCaller string
		wantStatus float64 // of create_glossary
	}{
		{[]string{"--data-dir", dir}, true, "admin", 0},
		{[]string{"--data-dir", dir, "--read-only"}, false, "admin", 403},
		{[]string{"--data-dir", dir, "--as", "carol"}, true, "carol", 403},
	} {
		t.Run(strings.Join(c.args[2:], " "), func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			errb := &lockedBuffer{}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- mcpCmd(ctx, c.args, inR, outW, errb); outW.Close() }()
			lines := bufio.NewScanner(outR)
			lines.Buffer(make([]byte, 0, 1<<20), 16<<20)
			send := func(s string) map[string]any {
				t.Helper()
				if _, err := io.WriteString(inW, s+"\n"); err != nil {
					t.Fatal(err)
				}
				if !lines.Scan() {
					t.Fatalf("no answer to %s; stderr %s", s, errb.String())
				}
				var m map[string]any
				if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
					t.Fatalf("stdout is not JSON-RPC: %q", lines.Text())
				}
				return m
			}
			init := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			if init["result"] == nil {
				t.Fatalf("initialize: %v", init)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("first answer after %v", d)
			}
			list := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
			names := map[string]bool{}
			for _, x := range list["result"].(map[string]any)["tools"].([]any) {
				names[x.(map[string]any)["name"].(string)] = true
			}
			if names["create_glossary"] != c.wantTools || !names["search_metadata"] {
				t.Fatalf("tools: %v", names)
			}
			call := send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_glossary","arguments":{"name":"G` + c.wantCaller + `","description":"d"}}}`)
			res := call["result"].(map[string]any)
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			var body map[string]any
			_ = json.Unmarshal([]byte(text), &body)
			if c.wantStatus == 0 {
				if res["isError"] == true || body["updatedBy"] != c.wantCaller {
					t.Fatalf("create: %s", text)
				}
			} else if res["isError"] != true || body["statusCode"] != c.wantStatus {
				t.Fatalf("create: %s", text)
			}
			inW.Close()
			go func() { _, _ = io.Copy(io.Discard, outR) }()
			if err := <-done; err != nil {
				t.Fatalf("mcp: %v; stderr %s", err, errb.String())
			}
		})
	}
}

func TestMCPUsageMistakes(t *testing.T) {
	for _, args := range [][]string{{"mcp", "--nope"}, {"mcp", "extra"}, {"mcp", "--read-only=maybe"}} {
		if code, _, stderr := runCmd(args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a usage", args, code, stderr)
		}
	}
}

func TestMCPUnknownUser(t *testing.T) {
	errb := &lockedBuffer{}
	err := mcpCmd(context.Background(), []string{"--data-dir", t.TempDir(), "--create", "--as", "nobody"}, strings.NewReader(""), io.Discard, errb)
	if err == nil || !strings.Contains(err.Error(), "no such user") {
		t.Fatalf("got %v", err)
	}
}

// TestMCPRefusesADataDirWithoutCatalog: a mistyped --data-dir is an error that says
// what to do, and creates nothing, unless --create asks for a new catalog.
func TestMCPRefusesADataDirWithoutCatalog(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"sqlite", nil, "holds no catalog (catalog.db is missing)"},
		{"postgres", []string{"--database-url", "postgres://nobody@127.0.0.1:1/none"}, "holds no secret key for the PostgreSQL catalog (secret.key is missing)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("MERIDIAN_SECRET_KEY", "")
			dir := filepath.Join(t.TempDir(), "typo")
			args := append([]string{"--data-dir", dir}, c.args...)
			err := mcpCmd(context.Background(), args, strings.NewReader(""), io.Discard, &lockedBuffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--create") {
				t.Fatalf("mcp on a data directory without a catalog: %v; want %q and a hint at --create", err, c.want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refused data directory was created (%v)", err)
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "new")
	if err := mcpCmd(context.Background(), []string{"--data-dir", dir, "--create"}, strings.NewReader(""), io.Discard, &lockedBuffer{}); err != nil {
		t.Fatalf("mcp --create: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, app.CatalogFile)); err != nil {
		t.Errorf("mcp --create made no catalog: %v", err)
	}
}

// TestServeRoutesMCP: serve's handler sends /mcp and /api/mcp to MCP (before REST's
// authentication, which would refuse a read-only token's POST) and keeps REST working.
func TestServeRoutesMCP(t *testing.T) {
	ctx := context.Background()
	cat, err := openCatalog(ctx, app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := cat.bootstrapAdmin(ctx, log); err != nil {
		t.Fatal(err)
	}
	fs := newFlagSet("serve", io.Discard)
	opts := mcpFlags(fs, "mcp-")
	if err := fs.parse(nil); err != nil {
		t.Fatal(err)
	}
	h, err := withMCP(cat, log, opts, rest.New(rest.Config{Entities: cat.Entities, Auth: cat.Auth, Version: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	u, _, err := cat.ensureUser(ctx, adminName, false, []string{meridian.RoleAdmin}, true)
	if err != nil {
		t.Fatal(err)
	}
	sub := subject(u)
	sub.Scopes = []string{meridian.ScopeRead}
	readToken, _, err := cat.Auth.Issue(ctx, sub, meridian.TokenTypePersonal, time.Hour, "read")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/mcp", "/api/mcp"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_metadata","arguments":{"query":"*"}}}`))
		req.Header.Set("Authorization", "Bearer "+readToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "totalFound") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	for path, want := range map[string]int{"/api/v1/users": 401, "/healthz": 200, "/.well-known/oauth-protected-resource/mcp": 200} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
