package rpc

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/tools"
)

// Attribution keys a client may send in a tools/call request's _meta (or, over HTTP,
// as the X-Meridian-Conversation-Id and X-Meridian-Agent headers).
const (
	metaConversation = "conversationId"
	metaAgent        = "agent"
)

// httpClient is what the HTTP transport knows of the caller beyond the token: a
// stateless exchange keeps no initialize clientInfo, so User-Agent names the client.
type httpClient struct {
	userAgent, conversation, agent string
}

type httpClientKey struct{}

// meter admits a tool call against the budgets and returns its reservation, with the
// call's attribution on the context; a refused call returns the isError result to
// answer (statusCode 429, naming the ceiling, its window and when it resets).
func meter(ctx context.Context, c Config, p *meridian.Principal, name string, req mcp.CallToolRequest, args map[string]any) (context.Context, *billing.Reservation, *tools.Result) {
	if c.Billing == nil {
		return ctx, nil, nil
	}
	a := billing.Attribution{Principal: p, App: billing.AppMCP}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		a.ClientName, a.ClientVersion = info.ClientInfo.Name, info.ClientInfo.Version
	} else if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok && s.GetClientInfo().Name != "" {
		a.ClientName, a.ClientVersion = s.GetClientInfo().Name, s.GetClientInfo().Version
	}
	if h, ok := ctx.Value(httpClientKey{}).(httpClient); ok {
		if a.ClientName == "" && h.userAgent != "" {
			a.ClientName, a.ClientVersion, _ = strings.Cut(h.userAgent, "/")
			a.ClientVersion, _, _ = strings.Cut(a.ClientVersion, " ")
		}
		a.Conversation, a.Agent = h.conversation, h.agent
	}
	if m := req.Params.Meta; m != nil {
		if v, ok := m.AdditionalFields[metaConversation].(string); ok {
			a.Conversation = v
		}
		if v, ok := m.AdditionalFields[metaAgent].(string); ok {
			a.Agent = v
		}
	}
	ctx = billing.WithAttribution(ctx, a)
	resv, err := c.Billing.Reserve(ctx, c.Billing.Prices().ToolFeature(name), name, 1, touched(args))
	if err != nil {
		res := tools.ErrorResult(tools.WithHint(err, "A credit budget set by a workspace admin is used up; retry after the window resets, or ask an admin to raise it"))
		return ctx, nil, &res
	}
	return ctx, resv, nil
}

// touched names the entity a tool call's arguments address (fqn with entityType).
func touched(args map[string]any) []billing.EntityRef {
	fqn, _ := args["fqn"].(string)
	if fqn == "" {
		return nil
	}
	typ, _ := args["entityType"].(string)
	if typ == "" {
		typ, _ = args["entity_type"].(string)
	}
	return []billing.EntityRef{{Type: typ, FQN: fqn}}
}
