package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

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

// httpClient is what the HTTP transport knows of the caller beyond the token: the
// clientInfo the same principal's client (same User-Agent) sent in its last
// initialize, since a stateless exchange keeps no session, else its User-Agent.
type httpClient struct {
	info                           *mcp.Implementation
	userAgent, conversation, agent string
}

type httpClientKey struct{}

// maxClientInfos bounds the remembered initialize clientInfos; past it they are
// forgotten all at once (a client then shows as its User-Agent until it initializes).
const maxClientInfos = 4096

// clientInfos remembers, per principal and User-Agent, the clientInfo of the last
// initialize over stateless HTTP.
type clientInfos struct {
	mu sync.Mutex
	m  map[string]mcp.Implementation
}

func newClientInfos() *clientInfos { return &clientInfos{m: map[string]mcp.Implementation{}} }

// of records the clientInfo of an initialize body and returns what is known of the
// request's client.
func (c *clientInfos) of(r *http.Request, p *meridian.Principal, body []byte) httpClient {
	h := httpClient{userAgent: r.Header.Get("User-Agent"), conversation: r.Header.Get("X-Meridian-Conversation-Id"),
		agent: r.Header.Get("X-Meridian-Agent")}
	key := h.userAgent
	if p != nil {
		key = p.Name + "\x00" + key
	}
	if bytes.Contains(body, []byte(`"initialize"`)) {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				ClientInfo mcp.Implementation `json:"clientInfo"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" && msg.Params.ClientInfo.Name != "" {
			c.mu.Lock()
			if len(c.m) >= maxClientInfos {
				c.m = map[string]mcp.Implementation{}
			}
			c.m[key] = msg.Params.ClientInfo
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	if info, ok := c.m[key]; ok {
		h.info = &info
	}
	c.mu.Unlock()
	return h
}

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
		if a.ClientName == "" && h.info != nil {
			a.ClientName, a.ClientVersion = h.info.Name, h.info.Version
		}
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
