// Package rpc is Meridian's MCP server: the tools of package tools put on the wire with
// mark3labs/mcp-go, over stdio (`meridian mcp`) and stateless streamable HTTP (/mcp and
// /api/mcp under `meridian serve`).
//
// Both protocol eras are served: initialize negotiates 2024-11-05 to 2025-11-25, and
// server/discover serves 2026-07-28 (per-request _meta, Mcp-Method/Mcp-Name headers,
// ttlMs/cacheScope on lists). The HTTP transport keeps no session state, so replicas
// behind a load balancer need no affinity.
//
// Read-only mode (Config.ReadOnly through tools.Config, or a token scoped to
// metadata:read only) removes the write tools from tools/list. A client that calls one
// anyway gets a tool result with isError and statusCode 403, not "unknown tool": the
// tool exists, the caller may not use it, and the message says why. An unknown tool
// name is a JSON-RPC error -32602.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/collab/audit"
	"github.com/meridian-catalog/meridian/tools"
)

// Config wires the MCP server.
type Config struct {
	// Tools are the tools served; tools.Config.ReadOnly makes the server read-only.
	Tools *tools.Set
	// Auth verifies the Bearer tokens of HTTP requests.
	Auth *auth.Authority
	// Principal is the caller when the request context carries none: the stdio
	// principal (--as), and in-process clients in tests.
	Principal *meridian.Principal
	// Logger receives transport errors and one line per tool call; nil discards them.
	Logger *slog.Logger
	// Version is the server version reported in serverInfo.
	Version string
	// AllowedOrigins are the browser origins (scheme://host[:port]) accepted besides
	// the server's own host and localhost; "*" accepts any.
	AllowedOrigins []string
	// DisableLocalhostProtection turns off mcp-go's DNS rebinding protection, for a
	// reverse proxy on the same host that forwards a public Host header over loopback.
	DisableLocalhostProtection bool
	// TrustedProxies are the peers whose X-Forwarded-Host and X-Forwarded-Proto are
	// believed (ParseTrustedProxies); from anyone else they are ignored.
	TrustedProxies []netip.Prefix
	// Audit records every call of a write tool and every failed authentication in the
	// audit log; nil records nothing.
	Audit *audit.Writer
	// Billing meters every tool call and enforces the credit budgets before it runs
	// (billing.go); nil meters nothing.
	Billing *billing.Service
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c.Logger
}

// instructions tell a model how to use the server.
const instructions = "Meridian is a metadata catalog. Find entities with search_metadata, then read them with " +
	"get_entity_details (entityType plus fqn, the fullyQualifiedName). Results are bounded: follow nextCursor for " +
	"more. Write tools change the catalog: confirm the target with the user first, and prefer update_entity for " +
	"descriptions, display names, owners and tags."

// NewServer returns the MCP server with every tool of c.Tools.
func NewServer(c Config) *server.MCPServer {
	log := c.logger()
	version := c.Version
	if version == "" {
		version = "dev"
	}
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res == nil || c.Tools.CanWrite(principal(ctx, c)) {
			return
		}
		kept := res.Tools[:0]
		for _, t := range res.Tools {
			if def, ok := c.Tools.Lookup(t.Name); ok && !def.Write {
				kept = append(kept, t)
			}
		}
		res.Tools = kept
	})
	s := server.NewMCPServer("meridian", version,
		server.WithTitle("Meridian metadata catalog"),
		server.WithInstructions(instructions),
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithHooks(hooks),
		// tools/list depends on the caller (read-only tokens see fewer tools): private.
		server.WithCacheHints(int64((5*time.Minute).Milliseconds()), mcp.CacheScopePrivate),
	)
	for _, t := range c.Tools.Tools() {
		s.AddTool(Definition(t), handler(c, t.Name, log))
	}
	return s
}

// principal is the caller of a request: from the context, else the configured one.
func principal(ctx context.Context, c Config) *meridian.Principal {
	if p := meridian.PrincipalFrom(ctx); p != nil {
		return p
	}
	return c.Principal
}

// Definition renders a tool for tools/list: title, description, the input and output
// schemas, and all four annotations set explicitly (mcp-go would otherwise advertise
// destructiveHint and openWorldHint true).
func Definition(t *tools.Tool) mcp.Tool {
	in, _ := json.Marshal(t.Input)
	out, _ := json.Marshal(t.Output)
	a := t.Annotations()
	return mcp.Tool{
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  in,
		RawOutputSchema: out,
		Annotations: mcp.ToolAnnotation{
			Title:           t.Title,
			ReadOnlyHint:    mcp.ToBoolPtr(a.ReadOnly),
			DestructiveHint: mcp.ToBoolPtr(a.Destructive),
			IdempotentHint:  mcp.ToBoolPtr(a.Idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(a.OpenWorld),
		},
	}
}

// handler runs one tool for the caller and renders its result: structuredContent and
// the same JSON as text, or isError with {error, statusCode, hint} and no structured
// content.
func handler(c Config, name string, log *slog.Logger) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		p := principal(ctx, c)
		var res tools.Result
		args, ok := req.Params.Arguments.(map[string]any)
		if !ok && req.Params.Arguments != nil {
			res = tools.ErrorResult(tools.WithHint(meridian.Errorf(meridian.EInvalid, "The arguments of %s must be a JSON object", name),
				"Send arguments as an object of named parameters"))
		} else if mctx, resv, refused := meter(ctx, c, p, name, req, args); refused != nil {
			res = *refused
		} else {
			var err error
			res, err = c.Tools.Call(mctx, p, name, args)
			resv.Done(err != nil || res.IsError)
			if err != nil {
				if errors.Is(err, tools.ErrUnknownTool) {
					return nil, server.ErrToolNotFound
				}
				return nil, err
			}
		}
		who := ""
		if p != nil {
			who = p.Name
		}
		auditCall(ctx, c, p, name, args, res)
		log.InfoContext(ctx, "mcp tool call", slog.String("tool", name), slog.String("user", who),
			slog.Int("status", res.StatusCode), slog.Int("chars", len(res.Text)),
			slog.Duration("duration", time.Since(start)))
		return Render(res), nil
	}
}

// Render turns a tools.Result into an MCP CallToolResult. The text of a successful
// result is the JSON of its structured content (tools.Result says so), so it is also
// sent as the raw structuredContent: the wire answer is the same (encoding/json
// escapes <, > and & when it copies the text into the answer, as it does when it
// encodes the object), and the object is not encoded a second time.
func Render(res tools.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(res.Text)}, IsError: res.IsError}
	if !res.IsError && res.Structured != nil {
		out.StructuredContent = res.Structured
		out.RawStructuredContent = json.RawMessage(res.Text)
	}
	return out
}

// auditCall records a call of a write tool in the audit log, whatever its outcome: the
// caller, the tool, the entity its arguments name, the status, and the client's address
// (the HTTP transport puts it in the context; stdio calls come from the local process).
func auditCall(ctx context.Context, c Config, p *meridian.Principal, name string, args map[string]any, res tools.Result) {
	if c.Audit == nil {
		return
	}
	if t, ok := c.Tools.Lookup(name); !ok || !t.Write {
		return
	}
	e := audit.Entry{Source: audit.SourceMCP, Kind: audit.KindWrite, Method: "tools/call", Path: name, Status: res.StatusCode}
	if e.Status == 0 {
		e.Status = 200
		if res.IsError {
			e.Status = 500
		}
	}
	if p != nil {
		e.UserName = p.Name
	}
	if r, ok := audit.RequestFrom(ctx); ok {
		e.RemoteAddr, e.RequestID = r.RemoteAddr, r.RequestID
	} else {
		e.RemoteAddr = "stdio"
	}
	for _, key := range []string{"entityType", "entity_type"} {
		if v, ok := args[key].(string); ok && e.EntityType == "" {
			e.EntityType = v
		}
	}
	for _, key := range []string{"fqn", "fullyQualifiedName", "entityFqn"} {
		if v, ok := args[key].(string); ok && e.EntityFQN == "" {
			e.EntityFQN = v
		}
	}
	if res.IsError {
		var body struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(res.Text), &body) == nil {
			e.Message = body.Error
		}
	}
	c.Audit.Record(e)
}
