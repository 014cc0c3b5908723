package billing

import (
	"context"
	"sort"

	"github.com/meridian-catalog/meridian"
)

// MCPSummary is the MCP usage of a time window.
type MCPSummary struct {
	Range
	Calls     int64   `json:"calls"`
	Successes int64   `json:"successes"`
	Failures  int64   `json:"failures"`
	ErrorRate float64 `json:"errorRate"`
	Credits   float64 `json:"credits"`
	Users     int     `json:"users"`
	Clients   int     `json:"clients"`
	Tools     int     `json:"tools"`
	P50Ms     float64 `json:"latencyP50Ms"`
	P95Ms     float64 `json:"latencyP95Ms"`
}

// MCPDay is one day's successes and failures.
type MCPDay struct {
	Success int64 `json:"success"`
	Failure int64 `json:"failure"`
}

// MCPHistory maps ISO dates to counts.
type MCPHistory struct {
	Range
	History map[string]MCPDay `json:"history"`
}

// MCPTool is one tool's calls.
type MCPTool struct {
	Tool    string  `json:"tool"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	Credits float64 `json:"credits"`
	P50Ms   float64 `json:"latencyP50Ms"`
	P95Ms   float64 `json:"latencyP95Ms"`
}

// MCPUser is one user's calls and clients.
type MCPUser struct {
	User    string   `json:"user"`
	Calls   int64    `json:"calls"`
	Errors  int64    `json:"errors"`
	Credits float64  `json:"credits"`
	Client  string   `json:"client"` // the one of the latest call
	Clients []string `json:"clients"`
}

// MCPTools is the per-tool breakdown.
type MCPTools struct {
	Range
	Tools []MCPTool `json:"tools"`
}

// MCPUsers is the per-user breakdown.
type MCPUsers struct {
	Range
	Users []MCPUser `json:"users"`
}

// mcpRange is the window of an MCP report: startTs and endTs, by default the last 30
// days. Errors: EInvalid.
func (s *Service) mcpRange(startTs, endTs int64) (Range, error) {
	if startTs == 0 {
		startTs = (dayOf(s.now().UnixMilli()) - DefaultDays + 1) * dayMs
	}
	r, err := s.rangeOf(startTs, endTs)
	if err != nil {
		return r, err
	}
	if dayOf(r.EndTs-1)-dayOf(r.StartTs) >= maxRangeDays {
		return r, meridian.Errorf(meridian.EInvalid, "the window is longer than %d days", maxRangeDays)
	}
	return r, nil
}

func ms(us int64) float64 { return float64(us) / 1000 }

// MCPUsageSummary returns the MCP tool calls of the window. Errors: EUnauthorized,
// EForbidden, EInvalid, and the store's.
func (s *Service) MCPUsageSummary(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (MCPSummary, error) {
	if err := requireAdmin(p); err != nil {
		return MCPSummary{}, err
	}
	r, err := s.mcpRange(startTs, endTs)
	if err != nil {
		return MCPSummary{}, err
	}
	out := MCPSummary{Range: r}
	users, clients, tools := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var lat reservoir
	var credits int64
	err = s.each(ctx, filter{from: r.StartTs, to: r.EndTs, app: AppMCP, calls: true}, false, func(e Entry) error {
		out.Calls++
		if e.Failed {
			out.Failures++
		}
		credits += e.Credits
		users[e.User], clients[e.Client], tools[e.Action] = true, true, true
		lat.add(e.LatencyUs)
		return nil
	})
	if err != nil {
		return MCPSummary{}, err
	}
	out.Successes = out.Calls - out.Failures
	if out.Calls > 0 {
		out.ErrorRate = round2(float64(out.Failures) / float64(out.Calls))
	}
	out.Credits = creditsOf(credits)
	out.Users, out.Clients, out.Tools = len(users), len(clients), len(tools)
	p50, p95 := lat.percentiles()
	out.P50Ms, out.P95Ms = ms(p50), ms(p95)
	return out, nil
}

// MCPUsageHistory maps each UTC date of the window to its successful and failed MCP
// tool calls; idle days are zero. Errors: EUnauthorized, EForbidden, EInvalid, and the
// store's.
func (s *Service) MCPUsageHistory(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (MCPHistory, error) {
	if err := requireAdmin(p); err != nil {
		return MCPHistory{}, err
	}
	r, err := s.mcpRange(startTs, endTs)
	if err != nil {
		return MCPHistory{}, err
	}
	groups, err := s.aggregate(ctx, filter{from: r.StartTs, to: r.EndTs, app: AppMCP, calls: true}, colDay)
	if err != nil {
		return MCPHistory{}, err
	}
	out := MCPHistory{Range: r, History: map[string]MCPDay{}}
	for d := dayOf(r.StartTs); d <= dayOf(r.EndTs-1); d++ {
		out.History[date(d)] = MCPDay{}
	}
	for _, g := range groups {
		var d int64
		for _, c := range g.keys[0] {
			d = d*10 + int64(c-'0')
		}
		out.History[date(d)] = MCPDay{Success: g.count - g.failures, Failure: g.failures}
	}
	return out, nil
}

// MCPUsageTools returns each tool's calls, errors, credits and latency p50/p95 in the
// window. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) MCPUsageTools(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (MCPTools, error) {
	if err := requireAdmin(p); err != nil {
		return MCPTools{}, err
	}
	r, err := s.mcpRange(startTs, endTs)
	if err != nil {
		return MCPTools{}, err
	}
	type acc struct {
		t   MCPTool
		c   int64
		lat reservoir
	}
	idx := map[string]*acc{}
	err = s.each(ctx, filter{from: r.StartTs, to: r.EndTs, app: AppMCP, calls: true}, false, func(e Entry) error {
		a := idx[e.Action]
		if a == nil {
			a = &acc{t: MCPTool{Tool: e.Action}}
			idx[e.Action] = a
		}
		a.t.Calls++
		if e.Failed {
			a.t.Errors++
		}
		a.c += e.Credits
		a.lat.add(e.LatencyUs)
		return nil
	})
	if err != nil {
		return MCPTools{}, err
	}
	out := MCPTools{Range: r, Tools: []MCPTool{}}
	for _, a := range idx {
		p50, p95 := a.lat.percentiles()
		a.t.Credits, a.t.P50Ms, a.t.P95Ms = creditsOf(a.c), ms(p50), ms(p95)
		out.Tools = append(out.Tools, a.t)
	}
	sort.Slice(out.Tools, func(i, j int) bool {
		if out.Tools[i].Calls != out.Tools[j].Calls {
			return out.Tools[i].Calls > out.Tools[j].Calls
		}
		return out.Tools[i].Tool < out.Tools[j].Tool
	})
	return out, nil
}

// MCPUsageUsers returns each user's MCP calls, errors, credits, and clients (the
// latest one first). Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) MCPUsageUsers(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (MCPUsers, error) {
	if err := requireAdmin(p); err != nil {
		return MCPUsers{}, err
	}
	r, err := s.mcpRange(startTs, endTs)
	if err != nil {
		return MCPUsers{}, err
	}
	type acc struct {
		u       MCPUser
		c       int64
		latest  int64
		clients map[string]bool
	}
	idx := map[string]*acc{}
	err = s.each(ctx, filter{from: r.StartTs, to: r.EndTs, app: AppMCP, calls: true}, false, func(e Entry) error {
		a := idx[e.User]
		if a == nil {
			a = &acc{u: MCPUser{User: e.User}, clients: map[string]bool{}, latest: -1}
			idx[e.User] = a
		}
		a.u.Calls++
		if e.Failed {
			a.u.Errors++
		}
		a.c += e.Credits
		a.clients[e.Client] = true
		if e.Ts >= a.latest {
			a.latest, a.u.Client = e.Ts, e.Client
		}
		return nil
	})
	if err != nil {
		return MCPUsers{}, err
	}
	out := MCPUsers{Range: r, Users: []MCPUser{}}
	for _, a := range idx {
		a.u.Credits = creditsOf(a.c)
		a.u.Clients = sortedKeys(a.clients)
		out.Users = append(out.Users, a.u)
	}
	sort.Slice(out.Users, func(i, j int) bool {
		if out.Users[i].Calls != out.Users[j].Calls {
			return out.Users[i].Calls > out.Users[j].Calls
		}
		return out.Users[i].User < out.Users[j].User
	})
	return out, nil
}
