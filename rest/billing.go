package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/collab"
)

// billingRoutes are the Billing family (/v1/billing): usage limits, budgets, credit
// reports, adoption, MCP usage and the credit alert. Every route needs a workspace
// admin except the self-service ones (budgets/me, credits/me/...), which any
// authenticated user may call; others get 403.
func (s *server) billingRoutes() []route {
	p := apiPrefix + "/v1/billing"
	ts := func(name, what string) obj {
		return queryParam(name, what+" (epoch milliseconds).", obj{"type": "integer", "format": "int64", "minimum": 0})
	}
	window := []any{ts("startTs", "Start of the window, inclusive; default the current billing cycle's start"),
		ts("endTs", "End of the window, exclusive; default now")}
	mcpWindow := []any{ts("startTs", "Start of the window, inclusive; default 30 UTC days ago"), ts("endTs", "End of the window, exclusive; default now")}
	app := []any{queryParam("app", "Only this application: MCP, REST, UI or System.", obj{"type": "string", "maxLength": 64})}
	weeks := queryParam("weeks", "Number of ISO weeks (Monday start, UTC) of the weekly series, the current one included.",
		obj{"type": "integer", "minimum": 1, "maximum": billing.MaxWeeks, "default": billing.DefaultWeeks})
	days := queryParam("days", "Number of UTC days, today included.", obj{"type": "integer", "minimum": 1, "maximum": billing.MaxDays, "default": billing.DefaultDays})
	ok := func(what string, v any, errs ...int) obj {
		return responses(obj{"200": resp(what, typeSchema(v))}, append([]int{403}, errs...)...)
	}
	budgetsBody := jsonBody("The whole set of ceilings; a ceiling left out is removed; an empty list is rejected (400).", obj{
		"type": "object", "required": []any{"budgets"}, "properties": obj{"budgets": obj{"type": "array", "minItems": 1,
			"maxItems": billing.MaxBudgets, "items": obj{"type": "object", "required": []any{"window", "credits"}, "properties": obj{
				"window":  obj{"type": "string", "enum": anyList(billing.Windows)},
				"credits": obj{"type": "number", "exclusiveMinimum": 0},
				"scope":   obj{"type": "string", "enum": []any{billing.ScopeTotal, billing.ScopeUser}, "default": billing.ScopeTotal},
			}}}}}, true)
	alertSchema := typeSchema(billing.CreditAlert{})
	rs := []route{
		{method: http.MethodGet, path: p + "/usage/{name}", handler: s.h(s.billingFeatureUsage), id: "getBillingFeatureUsage",
			summary: "Get the configured limits of a feature", description: "The plan, the price per unit of the feature (or of every feature with all), and the budgets: configured limits, no usage counts.",
			params:    []any{pathParamSpec("name", "A feature name (mcpToolCalls, semanticSearch, hybridSearch, nlqSearch, embeddings, sparqlQueries, executions) or all.", obj{"type": "string", "minLength": 1})},
			responses: ok("The limits.", billing.FeatureLimits{}, 400, 404)},
		{method: http.MethodGet, path: p + "/budgets", handler: s.h(s.getBudgets), id: "listCreditBudgets",
			summary: "List the credit ceilings with their consumption", description: "Each ceiling with the consumption of its current window (UTC; WEEKLY starts on Monday), what remains and when it resets. A user-scoped ceiling lists each user's consumption and reports the highest.",
			responses: ok("The ceilings.", billing.Budgets{})},
		{method: http.MethodPut, path: p + "/budgets", handler: s.h(s.putBudgets), id: "putCreditBudgets",
			summary: "Replace the credit ceilings", description: "Replaces the whole set. A call that would exceed a ceiling is refused before its work: 429 over REST, isError with statusCode 429 over MCP.",
			body: budgetsBody, responses: ok("The new ceilings with their consumption.", billing.Budgets{}, 400, 413)},
		{method: http.MethodDelete, path: p + "/budgets", handler: s.h(s.deleteBudgets), id: "deleteCreditBudgets",
			summary: "Remove every credit ceiling", description: "Leaves the workspace-wide credit pool.",
			responses: responses(obj{"204": resp("The ceilings were removed.", nil)}, 403)},
		{method: http.MethodGet, path: p + "/budgets/me", handler: s.h(s.myBudgets), id: "getMyCreditBudgets",
			summary: "List the ceilings that apply to the caller", description: "Self-service, any authenticated user: total ceilings with the workspace's consumption, user ceilings with the caller's own.",
			responses: ok("The caller's ceilings.", billing.Budgets{})},
		{method: http.MethodGet, path: p + "/credits/summary", handler: s.h(s.creditsSummary), id: "getCreditsSummary",
			summary: "Get the full usage breakdown of the current cycle", description: "App-based (per app and action, per feature) and entity-based (per entity touched, per user).",
			responses: ok("The summary.", billing.Summary{})},
		{method: http.MethodGet, path: p + "/credits/remaining", handler: s.h(s.creditsRemaining), id: "getCreditsRemaining",
			summary: "Get the remaining credits of the current cycle", responses: ok("The pool.", billing.Pool{})},
		{method: http.MethodGet, path: p + "/credits/conversations", handler: s.h(s.creditsConversations), id: "getCreditsByConversation",
			summary: "Get the credits per conversation id", description: "Spend that names no conversation is under the key unattributed.",
			params: window, responses: ok("The credits per conversation.", billing.Conversations{}, 400)},
		{method: http.MethodGet, path: p + "/credits/apps", handler: s.h(s.creditsApps), id: "getCreditsByApp",
			summary: "Get the usage per app and action", description: "Raw units (units, in each action's unit) and converted credits.",
			params: window, responses: ok("The usage per app.", billing.Apps{}, 400)},
		{method: http.MethodGet, path: p + "/credits/apps/history", handler: s.h(s.creditsAppsHistory), id: "getCreditsAppsHistory",
			summary: "Get the usage by app and UTC date", description: "From startTs's UTC day to today; endTs is ignored. Idle days are listed with no apps.",
			params: []any{obj{"name": "startTs", "in": "query", "required": true, "description": "Start (epoch milliseconds); at most 366 days ago.",
				"schema": obj{"type": "integer", "format": "int64", "minimum": 1}}, ts("endTs", "Ignored")},
			responses: ok("The history.", billing.AppsHistory{}, 400)},
		{method: http.MethodGet, path: p + "/credits/entities", handler: s.h(s.creditsEntities), id: "getCreditsByEntity",
			summary: "Get the entity-based usage", description: "Assets and test cases the actions touched (an action touching two entities counts for both), and users; at most 1000 of each, highest first.",
			params: window, responses: ok("The entity-based usage.", billing.EntitiesUsage{}, 400)},
		{method: http.MethodGet, path: p + "/credits/breakdown/users", handler: s.h(s.breakdownUsers), id: "getCreditsByUser",
			summary: "Get the credits by user, current cycle", params: app, responses: ok("The users.", billing.UsersBreakdown{}, 400)},
		{method: http.MethodGet, path: p + "/credits/breakdown/users/{userName}/agents", handler: s.h(s.breakdownUserAgents), id: "getCreditsByUserAgent",
			summary:   "Get one user's credits by agent and source, current cycle",
			params:    cat([]any{pathParamSpec("userName", "The user's name.", obj{"type": "string", "minLength": 1, "maxLength": 200})}, app),
			responses: ok("The agents.", billing.AgentsBreakdown{}, 400, 404)},
		{method: http.MethodGet, path: p + "/credits/breakdown/sources", handler: s.h(s.breakdownSources), id: "getCreditsBySource",
			summary: "Get the credits by application source, current cycle", description: "A source is the MCP client's name, REST, UI or system.",
			params: app, responses: ok("The sources.", billing.SourcesBreakdown{}, 400)},
		{method: http.MethodGet, path: p + "/credits/breakdown/cross", handler: s.h(s.breakdownCross), id: "getCreditsCross",
			summary: "Get the credits by user and source, current cycle", params: app, responses: ok("User, source, credits.", billing.CrossBreakdown{}, 400)},
		{method: http.MethodGet, path: p + "/credits/me/breakdown/sources", handler: s.h(s.mySources), id: "getMyCreditsBySource",
			summary: "Get the caller's credits by source, current cycle", description: "Self-service, any authenticated user.",
			responses: ok("The caller's sources.", billing.SourcesBreakdown{})},
		{method: http.MethodGet, path: p + "/credits/me/breakdown/actions", handler: s.h(s.myActions), id: "getMyCreditsByAction",
			summary: "Get the caller's credits by action, current cycle", description: "Self-service, any authenticated user.",
			responses: ok("The caller's actions.", billing.ActionsBreakdown{})},
		{method: http.MethodGet, path: p + "/credits/me/breakdown/cross", handler: s.h(s.myCross), id: "getMyCreditsCross",
			summary: "Get the caller's credits by source and action, current cycle", description: "Self-service, any authenticated user.",
			responses: ok("Source, action, credits.", billing.MyCrossBreakdown{})},
		{method: http.MethodGet, path: p + "/overview", handler: s.h(s.billingOverview), id: "getBillingOverview",
			summary: "Get the billing overview", description: "Plan, pool, one meter per feature, usage per app, budgets, and the last 7 UTC days (today included) as a series.",
			responses: ok("The overview.", billing.Overview{})},
		{method: http.MethodGet, path: p + "/weekly-impact", handler: s.h(s.weeklyImpact), id: "getWeeklyImpact",
			summary: "Get the weekly impact snapshot", description: "The last 7 complete UTC days against the 7 days before.",
			responses: ok("The snapshot.", billing.WeeklyImpact{})},
		{method: http.MethodPost, path: p + "/weekly-impact/send-digest", handler: s.h(s.sendDigest), id: "sendWeeklyImpactDigest",
			summary: "E-mail the weekly snapshot to the admins", description: "To every active (not deleted) non-bot admin user with an e-mail address; 503 when no notifier is configured.",
			responses: ok("What was sent.", billing.Digest{})},
		{method: http.MethodGet, path: p + "/adoption", handler: s.h(s.adoption), id: "getAdoption",
			summary: "Get the adoption report", description: "Daily and weekly active users, the activation funnel (billable, activated, active in 30 days, engaged on 4+ of 30 days), feature adoption and per-user aggregates over the last days days.",
			params: []any{weeks, days}, responses: ok("The report.", billing.Adoption{}, 400)},
		{method: http.MethodGet, path: p + "/adoption/summary", handler: s.h(s.adoptionSummary), id: "getAdoptionSummary",
			summary: "Get the adoption summary", params: []any{weeks}, responses: ok("The summary.", billing.AdoptionSummary{}, 400)},
		{method: http.MethodGet, path: p + "/adoption/users", handler: s.h(s.adoptionUsers), id: "listAdoptionUsers",
			summary:     "List the billable users with their status and 30-day aggregates",
			description: "Non-bot users: active, dormant (activated, idle 30 days), never activated, and soft-deleted.",
			params: []any{
				queryParam("page", "Page number, from 0.", obj{"type": "integer", "minimum": 0, "default": 0}),
				queryParam("pageSize", "Users per page.", obj{"type": "integer", "minimum": 1, "maximum": billing.MaxPageSize, "default": billing.DefaultPageSize}),
				queryParam("search", "Case-insensitive substring of the name, display name or e-mail.", obj{"type": "string", "maxLength": 200}),
				queryParam("status", "Only users with this status.", obj{"type": "string", "enum": []any{billing.StatusActive, billing.StatusDormant, billing.StatusNeverActivated, billing.StatusDeleted}}),
				queryParam("sort", "Sort key.", obj{"type": "string", "enum": []any{"name", "credits", "actions", "activeDays", "lastActive", "status"}, "default": "name"}),
				queryParam("direction", "asc or desc; default asc for name and status, desc otherwise.", obj{"type": "string", "enum": []any{"asc", "desc"}}),
			},
			responses: ok("A page of users.", billing.Directory{}, 400)},
		{method: http.MethodGet, path: p + "/conversations/daily", handler: s.h(s.conversationsDaily), id: "getConversationsDaily",
			summary: "Get the conversations and distinct senders per UTC day", description: "Idle days are zero.",
			params: []any{days}, responses: ok("The series.", billing.ConversationsDaily{}, 400)},
		{method: http.MethodGet, path: p + "/mcp/usage/summary", handler: s.h(s.mcpSummary), id: "getMcpUsageSummary",
			summary: "Get the MCP usage summary of a time window", params: mcpWindow, responses: ok("The summary.", billing.MCPSummary{}, 400)},
		{method: http.MethodGet, path: p + "/mcp/usage/history", handler: s.h(s.mcpHistory), id: "getMcpUsageHistory",
			summary: "Get the MCP calls per UTC date", description: "ISO date to success and failure counts; idle days are zero.",
			params: mcpWindow, responses: ok("The history.", billing.MCPHistory{}, 400)},
		{method: http.MethodGet, path: p + "/mcp/usage/breakdown/tools", handler: s.h(s.mcpTools), id: "getMcpUsageByTool",
			summary: "Get the MCP calls per tool", description: "Calls, errors, credits and latency p50/p95 in milliseconds.",
			params: mcpWindow, responses: ok("The tools.", billing.MCPTools{}, 400)},
		{method: http.MethodGet, path: p + "/mcp/usage/breakdown/users", handler: s.h(s.mcpUsers), id: "getMcpUsageByUser",
			summary: "Get the MCP calls per user", description: "Calls, errors, credits and the clients (name and version), the latest in client.",
			params: mcpWindow, responses: ok("The users.", billing.MCPUsers{}, 400)},
		{method: http.MethodGet, path: p + "/creditAlert", handler: s.h(s.getCreditAlert), id: "getCreditAlert",
			summary: "Get the credit alert", description: "404 when none is configured. Webhook secret keys are masked.",
			responses: ok("The alert.", billing.CreditAlert{}, 404)},
		{method: http.MethodPut, path: p + "/creditAlert", handler: s.h(s.putCreditAlert), id: "putCreditAlert",
			summary:     "Create or replace the credit alert",
			description: "Rule types poolPercentUsed (percent of the pool), dailyCredits (credits per UTC day), dailySpike (a day at least multiplier times the previous 7 days' average and at least minAbsolute), runCredits (credits of one conversation), runwayDays (days of pool left at the last 7 days' rate). Each threshold fires once per window through the destinations.",
			body:        jsonBody("The alert.", alertSchema, true), responses: ok("The stored alert.", billing.CreditAlert{}, 400, 413)},
	}
	for i := range rs {
		rs[i].tag = "billing"
	}
	return rs
}

func anyList(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// billingOff answers when the server runs without the billing service.
var billingOff = errStatus(http.StatusNotFound, "Billing is not enabled on this server")

// bill runs fn with the billing service and writes its answer.
func (s *server) bill(w http.ResponseWriter, fn func(b *billing.Service) (any, error)) error {
	if s.billing == nil {
		return billingOff
	}
	v, err := fn(s.billing)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// intQuery parses an integer query parameter; absent is 0. Errors: 400.
func intQuery(r *http.Request, name string) (int, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, invalid("%s must be a whole number from 0", name)
	}
	return n, nil
}

// window parses startTs and endTs.
func window(r *http.Request) (int64, int64, error) {
	start, err := tsParam(r, "startTs")
	if err != nil {
		return 0, 0, err
	}
	end, err := tsParam(r, "endTs")
	return start, end, err
}

// readStrict decodes a JSON object body into v, refusing unknown fields.
func readStrict(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if _, err := decodeJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("Invalid request format: %s", jsonProblem(err))
	}
	return nil
}

func (s *server) billingFeatureUsage(w http.ResponseWriter, r *http.Request) error {
	name, err := pathParam(r, "name")
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.FeatureUsageLimits(r.Context(), principal(r), name) })
}

func (s *server) getBudgets(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.GetBudgets(r.Context(), principal(r)) })
}

func (s *server) myBudgets(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MyBudgets(r.Context(), principal(r)) })
}

func (s *server) putBudgets(w http.ResponseWriter, r *http.Request) error {
	if s.billing == nil {
		return billingOff
	}
	// Authorization first: a non-admin learns nothing from validation.
	if _, err := s.billing.GetBudgets(r.Context(), principal(r)); meridian.ErrorCode(err) == meridian.EForbidden {
		return err
	}
	var body struct {
		Budgets *[]billing.RateLimit `json:"budgets"`
	}
	if err := readStrict(r, &body); err != nil {
		return err
	}
	if body.Budgets == nil {
		return invalid("budgets is required: an array of ceilings {window, credits, scope}")
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.PutBudgets(r.Context(), principal(r), *body.Budgets) })
}

func (s *server) deleteBudgets(w http.ResponseWriter, r *http.Request) error {
	if s.billing == nil {
		return billingOff
	}
	if err := s.billing.DeleteBudgets(r.Context(), principal(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) creditsSummary(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.CreditsSummary(r.Context(), principal(r)) })
}

func (s *server) creditsRemaining(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.Remaining(r.Context(), principal(r)) })
}

func (s *server) creditsConversations(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) {
		return b.CreditsByConversation(r.Context(), principal(r), start, end)
	})
}

func (s *server) creditsApps(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.CreditsByApp(r.Context(), principal(r), start, end) })
}

func (s *server) creditsAppsHistory(w http.ResponseWriter, r *http.Request) error {
	start, err := tsParam(r, "startTs")
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.CreditsAppsHistory(r.Context(), principal(r), start) })
}

func (s *server) creditsEntities(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.CreditsByEntity(r.Context(), principal(r), start, end) })
}

func (s *server) breakdownUsers(w http.ResponseWriter, r *http.Request) error {
	app := r.URL.Query().Get("app")
	return s.bill(w, func(b *billing.Service) (any, error) { return b.BreakdownUsers(r.Context(), principal(r), app) })
}

func (s *server) breakdownUserAgents(w http.ResponseWriter, r *http.Request) error {
	user, err := pathParam(r, "userName")
	if err != nil {
		return err
	}
	app := r.URL.Query().Get("app")
	return s.bill(w, func(b *billing.Service) (any, error) {
		return b.BreakdownUserAgents(r.Context(), principal(r), user, app)
	})
}

func (s *server) breakdownSources(w http.ResponseWriter, r *http.Request) error {
	app := r.URL.Query().Get("app")
	return s.bill(w, func(b *billing.Service) (any, error) { return b.BreakdownSources(r.Context(), principal(r), app) })
}

func (s *server) breakdownCross(w http.ResponseWriter, r *http.Request) error {
	app := r.URL.Query().Get("app")
	return s.bill(w, func(b *billing.Service) (any, error) { return b.BreakdownCross(r.Context(), principal(r), app) })
}

func (s *server) mySources(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MySources(r.Context(), principal(r)) })
}

func (s *server) myActions(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MyActions(r.Context(), principal(r)) })
}

func (s *server) myCross(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MyCross(r.Context(), principal(r)) })
}

func (s *server) billingOverview(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.Overview(r.Context(), principal(r)) })
}

func (s *server) weeklyImpact(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.WeeklyImpact(r.Context(), principal(r)) })
}

func (s *server) sendDigest(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.SendDigest(r.Context(), principal(r)) })
}

func (s *server) adoption(w http.ResponseWriter, r *http.Request) error {
	weeks, err := intQuery(r, "weeks")
	if err != nil {
		return err
	}
	days, err := intQuery(r, "days")
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.Adoption(r.Context(), principal(r), weeks, days) })
}

func (s *server) adoptionSummary(w http.ResponseWriter, r *http.Request) error {
	weeks, err := intQuery(r, "weeks")
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.AdoptionSummary(r.Context(), principal(r), weeks) })
}

func (s *server) adoptionUsers(w http.ResponseWriter, r *http.Request) error {
	q := billing.DirectoryQuery{Search: r.URL.Query().Get("search"), Status: r.URL.Query().Get("status"),
		Sort: r.URL.Query().Get("sort"), Direction: strings.ToLower(r.URL.Query().Get("direction"))}
	var err error
	if q.Page, err = intQuery(r, "page"); err != nil {
		return err
	}
	if r.URL.Query().Has("pageSize") {
		if q.PageSize, err = intQuery(r, "pageSize"); err != nil {
			return err
		}
		if q.PageSize == 0 {
			return invalid("pageSize must be 1 to %d", billing.MaxPageSize)
		}
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.AdoptionUsers(r.Context(), principal(r), q) })
}

func (s *server) conversationsDaily(w http.ResponseWriter, r *http.Request) error {
	days, err := intQuery(r, "days")
	if err != nil {
		return err
	}
	if r.URL.Query().Has("days") && days == 0 {
		return invalid("days must be 1 to %d", billing.MaxDays)
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.ConversationsDaily(r.Context(), principal(r), days) })
}

func (s *server) mcpSummary(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MCPUsageSummary(r.Context(), principal(r), start, end) })
}

func (s *server) mcpHistory(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MCPUsageHistory(r.Context(), principal(r), start, end) })
}

func (s *server) mcpTools(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MCPUsageTools(r.Context(), principal(r), start, end) })
}

func (s *server) mcpUsers(w http.ResponseWriter, r *http.Request) error {
	start, end, err := window(r)
	if err != nil {
		return err
	}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.MCPUsageUsers(r.Context(), principal(r), start, end) })
}

func (s *server) getCreditAlert(w http.ResponseWriter, r *http.Request) error {
	return s.bill(w, func(b *billing.Service) (any, error) { return b.GetCreditAlert(r.Context(), principal(r)) })
}

func (s *server) putCreditAlert(w http.ResponseWriter, r *http.Request) error {
	if s.billing == nil {
		return billingOff
	}
	if _, err := s.billing.GetCreditAlert(r.Context(), principal(r)); meridian.ErrorCode(err) == meridian.EForbidden {
		return err
	}
	var body struct {
		Rules        []billing.AlertRule  `json:"rules"`
		Destinations []collab.Destination `json:"destinations"`
		Enabled      *bool                `json:"enabled"`
	}
	if err := readStrict(r, &body); err != nil {
		return err
	}
	a := billing.CreditAlert{Rules: body.Rules, Destinations: body.Destinations, Enabled: body.Enabled}
	return s.bill(w, func(b *billing.Service) (any, error) { return b.PutCreditAlert(r.Context(), principal(r), a) })
}
