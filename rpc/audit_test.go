package rpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/collab/audit"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// TestWriteToolCallsAndAuthFailuresAreAudited: a write tool call (allowed or refused)
// and a failed authentication reach the audit log with the caller and the client's
// address; a read tool call does not.
func TestWriteToolCallsAndAuthFailuresAreAudited(t *testing.T) {
	c := catalogtest.Open(t, app.Config{})
	w := audit.NewWriter(c.AuditLog, audit.WriterConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	mux := http.NewServeMux()
	rpc.NewHTTP(rpc.Config{Tools: c.Tools, Auth: c.Auth, Version: "test", Audit: w}).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &fixture{c: c, set: c.Tools, srv: srv, admin: c.Token(t, c.Admin)}
	reader := c.Token(t, c.User(t, "reader", meridian.RoleDataConsumer))

	call := func(token, tool, args string) {
		f.post(t, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`,
			map[string]string{"Authorization": "Bearer " + token})
	}
	call(f.admin, "create_glossary", `{"name":"Audited","description":"d"}`)
	call(reader, "create_glossary", `{"name":"Refused","description":"d"}`)
	call(f.admin, "search_metadata", `{"query":"orders"}`)
	call("not-a-token", "create_glossary", `{"name":"X","description":"d"}`)
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	page, err := c.AuditLog.Search(context.Background(), c.Admin, audit.Query{Source: audit.SourceMCP, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var writes, fails []audit.Entry
	for _, e := range page.Data {
		switch e.Kind {
		case audit.KindWrite:
			writes = append(writes, e)
		case audit.KindAuthFailure:
			fails = append(fails, e)
		}
	}
	if len(writes) != 2 || len(fails) != 1 {
		t.Fatalf("entries: %+v", page.Data)
	}
	byUser := map[string]audit.Entry{}
	for _, e := range writes {
		if e.Path != "create_glossary" || e.RemoteAddr != "127.0.0.1" {
			t.Errorf("write entry: %+v", e)
		}
		byUser[e.UserName] = e
	}
	if e := byUser["admin"]; e.Outcome != audit.OutcomeSuccess {
		t.Errorf("admin's call: %+v", e)
	}
	if e := byUser["reader"]; e.Status != http.StatusForbidden || e.Outcome != audit.OutcomeFailure || e.Message == "" {
		t.Errorf("refused call: %+v", e)
	}
	if e := fails[0]; e.Status != http.StatusUnauthorized || e.UserName != "" || e.Path != "/mcp" {
		t.Errorf("auth failure: %+v", e)
	}
}
