package rpc_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/rpc"
	"github.com/meridian-catalog/meridian/tools/catalogtest"
)

// TestToolCallsAreMeteredAndBudgetsEnforced: every tool call over HTTP and stdio is on
// the ledger with the MCP client's name and version, and a call past a ceiling is an
// isError result with statusCode 429 naming the ceiling, its window and its reset.
func TestToolCallsAreMeteredAndBudgetsEnforced(t *testing.T) {
	c := catalogtest.New(t)
	c.Table(t, "mysql_prod", "shop", "public", "orders", 3)
	mux := http.NewServeMux()
	rpc.NewHTTP(rpc.Config{Tools: c.Tools, Auth: c.Auth, Version: "test", Billing: c.Billing}).Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &fixture{c: c, set: c.Tools, srv: srv, admin: c.Token(t, c.Admin)}

	// A modern client: clientInfo on every request.
	cl, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + f.admin}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "meridian-test", Version: "7.1"}
	if _, err := cl.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "get_entity_details"
	call.Params.Arguments = map[string]any{"entityType": "table", "fqn": "mysql_prod.shop.public.orders"}
	if out, err := cl.CallTool(ctx, call); err != nil || out.IsError {
		t.Fatalf("call: %+v %v", out, err)
	}
	// A legacy raw client over stateless HTTP: User-Agent names it; _meta the conversation.
	status, _, m := f.post(t, "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_metadata",
		"arguments":{"query":"orders"},"_meta":{"conversationId":"conv-9","agent":"helper"}}}`,
		map[string]string{"Authorization": "Bearer " + f.admin, "User-Agent": "raw-client/2.0 (linux)"})
	if status != 200 || callResult(t, m)["isError"] == true {
		t.Fatalf("raw call: %d %v", status, m)
	}
	users, err := c.Billing.MCPUsageUsers(ctx, c.Admin, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(users.Users) != 1 || users.Users[0].Calls != 2 || strings.Join(users.Users[0].Clients, ",") != "meridian-test 7.1,raw-client 2.0" {
		t.Fatalf("MCP users = %+v", users.Users)
	}
	conv, err := c.Billing.CreditsByConversation(ctx, c.Admin, 0, 0)
	if err != nil || conv.Conversations["conv-9"] != 1 || conv.Conversations[billing.Unattributed] != 1 {
		t.Fatalf("conversations = %+v, %v", conv, err)
	}
	ents, err := c.Billing.CreditsByEntity(ctx, c.Admin, 0, 0)
	if err != nil || len(ents.Assets) != 1 || ents.Assets[0].FQN != "mysql_prod.shop.public.orders" {
		t.Fatalf("entities = %+v, %v", ents, err)
	}

	// Three credits an hour, two spent: one call is left.
	if _, err := c.Billing.PutBudgets(ctx, c.Admin, []billing.RateLimit{{Window: billing.WindowHourly, Credits: 3}}); err != nil {
		t.Fatal(err)
	}
	if out, err := cl.CallTool(ctx, call); err != nil || out.IsError {
		t.Fatalf("call within the budget: %+v %v", out, err)
	}
	out, err := cl.CallTool(ctx, call)
	if err != nil || !out.IsError {
		t.Fatalf("call past the budget: %+v %v", out, err)
	}
	text := out.Content[0].(mcp.TextContent).Text
	for _, want := range []string{`"statusCode":429`, "HOURLY", "resets at"} {
		if !strings.Contains(text, want) {
			t.Errorf("refusal %s does not say %s", text, want)
		}
	}

	// Over stdio, the initialize clientInfo names the client.
	if err := c.Billing.DeleteBudgets(ctx, c.Admin); err != nil {
		t.Fatal(err)
	}
	user := c.User(t, "stdio-user", meridian.RoleDataConsumer)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- rpc.ServeStdio(ctx, rpc.Config{Tools: c.Tools, Principal: user, Billing: c.Billing}, inR, outW)
	}()
	// As a real client does, wait for the initialize answer before calling.
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-client","version":"0.3"}}}`+"\n")
	if _, err := bufio.NewReader(outR).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	_, _ = io.WriteString(inW, strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_metadata","arguments":{"query":"orders"}}}`,
	}, "\n")+"\n")
	deadline := time.Now().Add(10 * time.Second)
	for {
		users, err = c.Billing.MCPUsageUsers(ctx, c.Admin, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(users.Users) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	inW.Close()
	<-done
	var got *billing.MCPUser
	for i := range users.Users {
		if users.Users[i].User == "stdio-user" {
			got = &users.Users[i]
		}
	}
	if got == nil || got.Client != "stdio-client 0.3" || got.Calls != 1 || got.Errors != 0 {
		t.Fatalf("stdio user = %+v (all %+v)", got, users.Users)
	}
}
