package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// standardOperations drives the standard operation set of one entity family: get by id
// and name, list, PUT update, PATCH by id and name, followers, versions, soft delete,
// restore, async delete and delete by name (soft, then hard).
func standardOperations(t *testing.T, s *server, base, namePrefix string, e map[string]any, putBody map[string]any) {
	t.Helper()
	c := s.admin
	id, fqn := str(e["id"]), str(e["fullyQualifiedName"])
	steward := s.user(t, "steward_"+strings.ReplaceAll(strings.Trim(base, "/"), "/", "_"), "DataSteward")

	t.Run("get by id and by name", func(t *testing.T) {
		if got := c.must(200, "GET", base+"/"+id, nil); got["fullyQualifiedName"] != fqn {
			t.Errorf("by id = %v", got)
		}
		if got := c.must(200, "GET", base+"/"+namePrefix+esc(fqn), nil); got["id"] != id {
			t.Errorf("by name = %v", got)
		}
		if got := c.must(200, "GET", base+"/"+id+"?fields=owners,followers,tags", nil); got["owners"] == nil || got["followers"] == nil {
			t.Errorf("fields=owners,followers,tags = %v", got)
		}
	})

	t.Run("list with limit and after", func(t *testing.T) {
		p := c.must(200, "GET", base+"?limit=1", nil)
		if num(object(p["paging"])["total"]) < 1 || len(list(p["data"])) != 1 {
			t.Errorf("list = %v", p)
		}
	})

	t.Run("PUT updates by name", func(t *testing.T) {
		r := c.do("PUT", base, putBody, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		if got := r.obj(t); got["id"] != id || got["description"] != putBody["description"] {
			t.Errorf("PUT = %v", got)
		}
		wantVersion(t, r.obj(t), 0.2)
	})

	t.Run("PATCH by id and by name", func(t *testing.T) {
		e := c.must(200, "PATCH", base+"/"+id, ops(patchOp("add", "/displayName", "Display")))
		wantVersion(t, e, 0.3)
		e = c.must(200, "PATCH", base+"/name/"+esc(fqn), ops(patchOp("replace", "/displayName", "Display 2")))
		wantVersion(t, e, 0.4)
		if fc := fieldChange(e, "fieldsUpdated", "displayName"); fc == nil || fc["oldValue"] != "Display" {
			t.Errorf("changeDescription = %v", e["changeDescription"])
		}
	})

	t.Run("followers: add the caller, remove by user id", func(t *testing.T) {
		r := steward.c.do("PUT", base+"/"+id+"/followers", nil, nil)
		if r.status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		g := c.must(200, "GET", base+"/"+id+"?fields=followers", nil)
		if got := strings.Join(sortedNames(g["followers"], "id"), ","); got != steward.id {
			t.Errorf("followers = %v, want %s", g["followers"], steward.id)
		}
		wantVersion(t, g, 0.4) // following makes no version
		r = steward.c.do("DELETE", base+"/"+id+"/followers/"+steward.id, nil, nil)
		if r.status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		g = c.must(200, "GET", base+"/"+id+"?fields=followers", nil)
		if len(list(g["followers"])) != 0 {
			t.Errorf("followers after removal = %v", g["followers"])
		}
		// A non-admin cannot make someone else follow.
		expectError(t, steward.c.do("PUT", base+"/"+id+"/followers", `"`+s.adminID(t)+`"`, nil), 403, "")
	})

	t.Run("versions", func(t *testing.T) {
		h := c.must(200, "GET", base+"/"+id+"/versions", nil)
		if len(list(h["versions"])) != 4 {
			t.Errorf("versions = %d, want 4", len(list(h["versions"])))
		}
		v := c.must(200, "GET", base+"/"+id+"/versions/0.1", nil)
		if v["id"] != id {
			t.Errorf("version 0.1 = %v", v)
		}
		wantVersion(t, v, 0.1)
	})

	t.Run("soft delete and restore", func(t *testing.T) {
		d := c.must(200, "DELETE", base+"/"+id, nil)
		if d["deleted"] != true {
			t.Errorf("deleted = %v", d["deleted"])
		}
		expectError(t, c.do("GET", base+"/"+id, nil, nil), 404, "")
		r := c.must(200, "PUT", base+"/restore", map[string]any{"id": id})
		if r["deleted"] != false {
			t.Errorf("restored deleted = %v", r["deleted"])
		}
	})

	t.Run("async delete", func(t *testing.T) {
		r := c.do("DELETE", base+"/async/"+id, nil, nil)
		if r.status != http.StatusAccepted || str(r.obj(t)["jobId"]) == "" {
			t.Fatalf("%s: want 202 with a jobId", r)
		}
		eventually(t, 10*time.Second, "the entity is soft-deleted", func() bool {
			return c.do("GET", base+"/"+id, nil, nil).status == http.StatusNotFound
		})
		c.must(200, "PUT", base+"/restore", map[string]any{"id": id})
	})

	t.Run("delete by name, soft then hard", func(t *testing.T) {
		d := c.must(200, "DELETE", base+"/"+namePrefix+esc(fqn), nil)
		if d["deleted"] != true {
			t.Errorf("delete by name = %v", d)
		}
		r := c.do("DELETE", base+"/"+namePrefix+esc(fqn)+"?hardDelete=true", nil, nil)
		if r.status != 200 && r.status != 204 {
			t.Errorf("%s: want 200 or 204", r)
		}
		expectError(t, c.do("GET", base+"/"+id+"?include=all", nil, nil), 404, "")
	})
}

// adminID returns the admin user's id.
func (s *server) adminID(t *testing.T) string {
	t.Helper()
	return str(s.admin.must(200, "GET", "/api/v1/users/me", nil)["id"])
}

func TestAIServicesHaveTheStandardOperationsAndTestConnection(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	for _, tc := range []struct {
		base, serviceType string
	}{
		{"/api/v1/services/mcpServices", "Mcp"},
		{"/api/v1/services/llmServices", "OpenAI"},
	} {
		t.Run(tc.base, func(t *testing.T) {
			e := c.must(201, "POST", tc.base, map[string]any{"name": "hub_" + tc.serviceType, "serviceType": tc.serviceType})
			if e["fullyQualifiedName"] != "hub_"+tc.serviceType {
				t.Errorf("FQN = %v", e["fullyQualifiedName"])
			}
			id := str(e["id"])
			r := c.do("PUT", tc.base+"/"+id+"/testConnectionResult",
				map[string]any{"status": "Successful", "lastUpdatedAt": 1700000000000}, nil)
			if r.status != 200 {
				t.Fatalf("%s: want 200", r)
			}
			if object(r.obj(t)["testConnectionResult"])["status"] != "Successful" {
				t.Errorf("testConnectionResult = %v", r.obj(t)["testConnectionResult"])
			}
			wantVersion(t, r.obj(t), 0.2)
			// Reset the version so the shared steps count from 0.1.
			e = c.must(201, "POST", tc.base, map[string]any{"name": "std_" + tc.serviceType, "serviceType": tc.serviceType})
			standardOperations(t, s, tc.base, "name/", e,
				map[string]any{"name": "std_" + tc.serviceType, "serviceType": tc.serviceType, "description": "updated"})
			expectError(t, c.do("POST", tc.base, map[string]any{"name": "x"}, nil), 400, "serviceType")
			expectError(t, c.do("POST", tc.base, map[string]any{"name": "x", "serviceType": "Nope"}, nil), 400, "serviceType")
		})
	}
}

func TestMCPServersValidateTheirCreateBody(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	c.must(201, "POST", "/api/v1/services/mcpServices", map[string]any{"name": "mcp_hub", "serviceType": "Mcp"})
	e := c.must(201, "POST", "/api/v1/mcpServers", map[string]any{"name": "postgres_mcp", "serverType": "Database",
		"service": "mcp_hub", "transportType": "Stdio"})
	if e["fullyQualifiedName"] != "mcp_hub.postgres_mcp" || object(e["service"])["type"] != "mcpService" {
		t.Errorf("mcpServer = %v", e)
	}
	standardOperations(t, s, "/api/v1/mcpServers", "name/", e, map[string]any{"name": "postgres_mcp",
		"serverType": "Database", "service": "mcp_hub", "transportType": "Stdio", "description": "updated"})

	bad := []struct {
		name, field string
		body        map[string]any
		status      int
	}{
		{"missing serverType", "serverType", map[string]any{"name": "a", "service": "mcp_hub"}, 400},
		{"missing service", "service", map[string]any{"name": "a", "serverType": "Database"}, 400},
		{"missing name", "name", map[string]any{"serverType": "Database", "service": "mcp_hub"}, 400},
		{"transportType Carrier", "transportType", map[string]any{"name": "a", "serverType": "Database", "service": "mcp_hub", "transportType": "Carrier"}, 400},
		{"serverType Toaster", "serverType", map[string]any{"name": "a", "serverType": "Toaster", "service": "mcp_hub"}, 400},
		{"unknown service", "", map[string]any{"name": "a", "serverType": "Database", "service": "nope"}, 404},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			expectError(t, c.do("POST", "/api/v1/mcpServers", b.body, nil), b.status, b.field)
		})
	}
}

func TestLLMModelsFilterByService(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	for _, svc := range []string{"openai", "anthropic"} {
		typ := map[string]string{"openai": "OpenAI", "anthropic": "Anthropic"}[svc]
		c.must(201, "POST", "/api/v1/services/llmServices", map[string]any{"name": svc, "serviceType": typ})
	}
	m := c.must(201, "POST", "/api/v1/llmModels", map[string]any{"name": "gpt4o", "baseModel": "gpt-4o", "service": "openai"})
	c.must(201, "POST", "/api/v1/llmModels", map[string]any{"name": "gpt4mini", "baseModel": "gpt-4o-mini", "service": "openai"})
	c.must(201, "POST", "/api/v1/llmModels", map[string]any{"name": "claude", "baseModel": "claude", "service": "anthropic"})
	if m["fullyQualifiedName"] != "openai.gpt4o" {
		t.Errorf("FQN = %v", m["fullyQualifiedName"])
	}
	p := c.must(200, "GET", "/api/v1/llmModels?service=openai", nil)
	if got := strings.Join(sortedNames(p["data"], "name"), ","); got != "gpt4mini,gpt4o" || num(object(p["paging"])["total"]) != 2 {
		t.Errorf("service=openai = %s total %v", got, object(p["paging"])["total"])
	}
	p = c.must(200, "GET", "/api/v1/llmModels?service=anthropic", nil)
	if got := strings.Join(sortedNames(p["data"], "name"), ","); got != "claude" {
		t.Errorf("service=anthropic = %s", got)
	}
	p = c.must(200, "GET", "/api/v1/llmModels?service=nobody", nil)
	if len(list(p["data"])) != 0 {
		t.Errorf("service=nobody = %v", p["data"])
	}
	expectError(t, c.do("POST", "/api/v1/llmModels", map[string]any{"name": "x", "service": "openai"}, nil), 400, "baseModel")
	m2 := c.must(201, "POST", "/api/v1/llmModels", map[string]any{"name": "std", "baseModel": "b", "service": "openai"})
	standardOperations(t, s, "/api/v1/llmModels", "name/", m2, map[string]any{"name": "std", "baseModel": "b",
		"service": "openai", "description": "updated"})
}

func TestAIApplicationsAndPromptTemplates(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin

	t.Run("aiApplication", func(t *testing.T) {
		e := c.must(201, "POST", "/api/v1/aiApplications", map[string]any{"name": "sales_assistant", "applicationType": "Assistant"})
		if e["fullyQualifiedName"] != "sales_assistant" {
			t.Errorf("FQN = %v", e["fullyQualifiedName"])
		}
		expectError(t, c.do("POST", "/api/v1/aiApplications", map[string]any{"name": "x"}, nil), 400, "applicationType")
		expectError(t, c.do("POST", "/api/v1/aiApplications", map[string]any{"name": "x", "applicationType": "Toaster"}, nil), 400, "applicationType")
		// AI application lists accept before.
		c.must(201, "POST", "/api/v1/aiApplications", map[string]any{"name": "z_agent", "applicationType": "Agent"})
		p1 := c.must(200, "GET", "/api/v1/aiApplications?limit=1", nil)
		p2 := c.must(200, "GET", "/api/v1/aiApplications?limit=1&after="+url.QueryEscape(str(object(p1["paging"])["after"])), nil)
		back := c.must(200, "GET", "/api/v1/aiApplications?limit=1&before="+url.QueryEscape(str(object(p2["paging"])["before"])), nil)
		if got := sortedNames(back["data"], "name"); len(got) != 1 || got[0] != "sales_assistant" {
			t.Errorf("before page = %v", got)
		}
		standardOperations(t, s, "/api/v1/aiApplications", "name/", e, map[string]any{"name": "sales_assistant",
			"applicationType": "Assistant", "description": "updated"})
	})

	t.Run("promptTemplate", func(t *testing.T) {
		e := c.must(201, "POST", "/api/v1/promptTemplates", map[string]any{"name": "summarize",
			"templateContent": "Summarize {{text}}",
			"variables":       []any{map[string]any{"name": "text", "dataType": "String", "required": true}}})
		bad := []struct{ name, content, want string }{
			{"placeholder naming no declared variable", "Summarize {{text}} in {{language}}", "language"},
			{"required variable unused", "Summarize everything", "text"},
		}
		for _, b := range bad {
			t.Run(b.name, func(t *testing.T) {
				r := c.do("POST", "/api/v1/promptTemplates", map[string]any{"name": "bad", "templateContent": b.content,
					"variables": []any{map[string]any{"name": "text", "dataType": "String", "required": true}}}, nil)
				expectError(t, r, 400, b.want)
			})
		}
		t.Run("a patch that breaks the template is refused", func(t *testing.T) {
			r := c.do("PATCH", "/api/v1/promptTemplates/"+str(e["id"]), ops(patchOp("replace", "/templateContent", "Hi {{who}}")), nil)
			expectError(t, r, 400, "who")
		})
		expectError(t, c.do("POST", "/api/v1/promptTemplates", map[string]any{"name": "x"}, nil), 400, "templateContent")
		standardOperations(t, s, "/api/v1/promptTemplates", "name/", e, map[string]any{"name": "summarize",
			"templateContent": "Summarize {{text}}", "description": "updated",
			"variables": []any{map[string]any{"name": "text", "dataType": "String", "required": true}}})
	})
}

func TestContextPluginsMaskSecretsForOrdinaryUsers(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := s.admin
	consumer := s.user(t, "consumer", "DataConsumer")
	steward := s.user(t, "steward", "DataSteward")

	r := c.do("POST", "/api/v1/ai/contextPlugins", map[string]any{"name": "confluence", "pluginType": "Confluence",
		"provider": "Atlassian", "connectionConfig": map[string]any{"baseUrl": "https://example.atlassian.net", "password": "s3cret"}}, nil)
	if r.status != 201 {
		t.Fatalf("%s: want 201", r)
	}
	e := r.obj(t)
	id := str(e["id"])
	if e["entityStatus"] != "Approved" {
		t.Errorf("entityStatus = %v, want Approved", e["entityStatus"])
	}
	if tags, ok := e["tags"].([]any); !ok || len(tags) != 0 {
		t.Errorf("tags = %v, want []", e["tags"])
	}

	// Only a bot an admin granted secrets access sees secrets; every other caller,
	// admins and other bots included, sees the mask.
	bot, botID := s.bot(t, "plugin-bot")
	c.must(200, "PUT", "/api/v1/bots/"+botID+"/secretsAccess", nil)
	otherBot := s.botClient(t, "other-bot", "DataSteward")
	for _, tc := range []struct {
		who  string
		c    *client
		want string
	}{
		{"admin", c, "*********"},
		{"granted bot", bot, "s3cret"},
		{"bot without the grant", otherBot, "*********"},
		{"DataConsumer", consumer.c, "*********"},
		{"DataSteward", steward.c, "*********"},
	} {
		t.Run(tc.who+" reads the password as "+tc.want, func(t *testing.T) {
			for _, p := range []string{"/api/v1/ai/contextPlugins/" + id, "/api/v1/ai/contextPlugins/name/confluence"} {
				g := tc.c.must(200, "GET", p, nil)
				cfg := object(g["connectionConfig"])
				if cfg["password"] != tc.want {
					t.Errorf("%s: password = %v, want %s", p, cfg["password"], tc.want)
				}
				if cfg["baseUrl"] != "https://example.atlassian.net" {
					t.Errorf("%s: baseUrl = %v, want it in clear", p, cfg["baseUrl"])
				}
			}
			l := tc.c.must(200, "GET", "/api/v1/ai/contextPlugins", nil)
			for _, d := range list(l["data"]) {
				if got := object(object(d)["connectionConfig"])["password"]; got != tc.want {
					t.Errorf("list: password = %v, want %s", got, tc.want)
				}
			}
			v := tc.c.must(200, "GET", "/api/v1/ai/contextPlugins/"+id+"/versions/0.1", nil)
			if got := object(v["connectionConfig"])["password"]; got != tc.want {
				t.Errorf("version 0.1: password = %v, want %s", got, tc.want)
			}
			h := tc.c.must(200, "GET", "/api/v1/ai/contextPlugins/"+id+"/versions", nil)
			for _, raw := range list(h["versions"]) {
				if strings.Contains(str(raw), "s3cret") != (tc.want == "s3cret") {
					t.Errorf("versions list secret exposure wrong for %s: %s", tc.who, str(raw))
				}
			}
		})
	}

	t.Run("a steward sending the mask back keeps the secret", func(t *testing.T) {
		g := steward.c.must(200, "GET", "/api/v1/ai/contextPlugins/"+id, nil)
		cfg := object(g["connectionConfig"])
		e := steward.c.must(200, "PATCH", "/api/v1/ai/contextPlugins/"+id, ops(
			patchOp("replace", "/connectionConfig", cfg), patchOp("add", "/description", "wiki")))
		if object(e["connectionConfig"])["password"] != "*********" {
			t.Errorf("steward patch answer password = %v", object(e["connectionConfig"])["password"])
		}
		a := bot.must(200, "GET", "/api/v1/ai/contextPlugins/"+id, nil)
		if object(a["connectionConfig"])["password"] != "s3cret" {
			t.Errorf("after masked round trip password = %v, want s3cret", object(a["connectionConfig"])["password"])
		}
	})

	t.Run("testConnection", func(t *testing.T) {
		r := c.must(200, "POST", "/api/v1/ai/contextPlugins/"+id+"/testConnection", nil)
		if r["status"] != "Successful" {
			t.Errorf("testConnection = %v", r)
		}
	})

	p := c.must(201, "POST", "/api/v1/ai/contextPlugins", map[string]any{"name": "std", "pluginType": "Confluence",
		"provider": "Atlassian", "connectionConfig": map[string]any{"token": "t0k"}})
	standardOperations(t, s, "/api/v1/ai/contextPlugins", "name/", p, map[string]any{"name": "std",
		"pluginType": "Confluence", "provider": "Atlassian", "description": "updated"})
	expectError(t, c.do("POST", "/api/v1/ai/contextPlugins", map[string]any{"name": "x", "pluginType": "Confluence"}, nil), 400, "provider")
}

// botClient creates a bot user through the REST API (as an admin), generates a bot
// token for it and returns a client using that token.
func (s *server) botClient(t *testing.T, name, role string) *client {
	t.Helper()
	u := s.admin.must(201, "POST", "/api/v1/users", map[string]any{"name": name, "email": name + "@example.com",
		"isBot": true, "roles": []any{role}})
	g := s.admin.must(200, "PUT", "/api/v1/users/generateToken/"+str(u["id"]), map[string]any{"JWTTokenExpiry": "7"})
	tok := str(g["JWTToken"])
	if tok == "" {
		t.Fatalf("generateToken = %v, want a JWTToken", g)
	}
	claims := jwtPayload(t, tok)
	if claims["isBot"] != true || claims["tokenType"] != "BOT" || claims["sub"] != name {
		t.Errorf("bot token claims = %v", claims)
	}
	return s.client(t, tok)
}
