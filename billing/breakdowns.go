package billing

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

// Breakdown bounds: the app filter.
const maxAppParam = 64

// SourceUsage is one application source's usage.
type SourceUsage struct {
	Source string `json:"source"`
	App    string `json:"app"`
	Usage
}

// AgentUsage is one agent's (or, without an agent, one source's) usage.
type AgentUsage struct {
	Agent  string `json:"agent"`
	Source string `json:"source"`
	Usage
}

// CrossSource is one source's credits under a user or the caller.
type CrossSource struct {
	Source  string        `json:"source"`
	Credits float64       `json:"credits"`
	Actions []ActionUsage `json:"actions,omitempty"`
}

// CrossUser is one user's credits by source.
type CrossUser struct {
	User    string        `json:"user"`
	Credits float64       `json:"credits"`
	Sources []CrossSource `json:"sources"`
}

// UsersBreakdown is the credits by user of the current cycle.
type UsersBreakdown struct {
	Range
	App   string      `json:"app,omitempty"`
	Users []UserUsage `json:"users"`
}

// AgentsBreakdown is one user's credits by agent and source.
type AgentsBreakdown struct {
	Range
	App    string       `json:"app,omitempty"`
	User   string       `json:"user"`
	Agents []AgentUsage `json:"agents"`
}

// SourcesBreakdown is the credits by application source.
type SourcesBreakdown struct {
	Range
	App     string        `json:"app,omitempty"`
	User    string        `json:"user,omitempty"`
	Sources []SourceUsage `json:"sources"`
}

// ActionsBreakdown is the caller's credits by action.
type ActionsBreakdown struct {
	Range
	User    string        `json:"user"`
	Actions []ActionUsage `json:"actions"`
}

// CrossBreakdown is user × source × credits.
type CrossBreakdown struct {
	Range
	App   string      `json:"app,omitempty"`
	Users []CrossUser `json:"users"`
}

// MyCrossBreakdown is the caller's source × action × credits.
type MyCrossBreakdown struct {
	Range
	User    string        `json:"user"`
	Sources []CrossSource `json:"sources"`
}

func checkApp(app string) error {
	if len(app) > maxAppParam {
		return meridian.Errorf(meridian.EInvalid, "app is longer than %d characters", maxAppParam)
	}
	return nil
}

func (s *Service) cycleFilter(app, user string) (Range, filter) {
	r, _, _ := s.cycleRange()
	return r, filter{from: r.StartTs, to: r.EndTs, app: app, user: user}
}

// BreakdownUsers returns the credits of each user in the current cycle, optionally of
// one app. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) BreakdownUsers(ctx context.Context, p *meridian.Principal, app string) (UsersBreakdown, error) {
	if err := requireAdmin(p); err != nil {
		return UsersBreakdown{}, err
	}
	if err := checkApp(app); err != nil {
		return UsersBreakdown{}, err
	}
	r, f := s.cycleFilter(app, "")
	groups, err := s.aggregate(ctx, f, colUser)
	if err != nil {
		return UsersBreakdown{}, err
	}
	sortAggs(groups)
	out := UsersBreakdown{Range: r, App: app, Users: []UserUsage{}}
	for _, g := range groups {
		out.Users = append(out.Users, UserUsage{User: g.keys[0], Usage: usageOf(g)})
	}
	return out, nil
}

// BreakdownUserAgents returns one user's credits in the current cycle by agent and
// source. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) BreakdownUserAgents(ctx context.Context, p *meridian.Principal, user, app string) (AgentsBreakdown, error) {
	if err := requireAdmin(p); err != nil {
		return AgentsBreakdown{}, err
	}
	if err := checkApp(app); err != nil {
		return AgentsBreakdown{}, err
	}
	if user == "" || len(user) > maxLabel {
		return AgentsBreakdown{}, meridian.Errorf(meridian.EInvalid, "userName must be 1 to %d characters", maxLabel)
	}
	r, f := s.cycleFilter(app, user)
	groups, err := s.aggregate(ctx, f, colAgent, colSource)
	if err != nil {
		return AgentsBreakdown{}, err
	}
	sortAggs(groups)
	out := AgentsBreakdown{Range: r, App: app, User: user, Agents: []AgentUsage{}}
	for _, g := range groups {
		out.Agents = append(out.Agents, AgentUsage{Agent: g.keys[0], Source: g.keys[1], Usage: usageOf(g)})
	}
	return out, nil
}

// BreakdownSources returns the credits of each application source in the current
// cycle. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) BreakdownSources(ctx context.Context, p *meridian.Principal, app string) (SourcesBreakdown, error) {
	if err := requireAdmin(p); err != nil {
		return SourcesBreakdown{}, err
	}
	if err := checkApp(app); err != nil {
		return SourcesBreakdown{}, err
	}
	r, f := s.cycleFilter(app, "")
	return s.sources(ctx, r, f)
}

func (s *Service) sources(ctx context.Context, r Range, f filter) (SourcesBreakdown, error) {
	groups, err := s.aggregate(ctx, f, colSource, colApp)
	if err != nil {
		return SourcesBreakdown{}, err
	}
	sortAggs(groups)
	out := SourcesBreakdown{Range: r, App: f.app, User: f.user, Sources: []SourceUsage{}}
	for _, g := range groups {
		out.Sources = append(out.Sources, SourceUsage{Source: g.keys[0], App: g.keys[1], Usage: usageOf(g)})
	}
	return out, nil
}

// BreakdownCross returns, for the current cycle, each user's credits by source.
// Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) BreakdownCross(ctx context.Context, p *meridian.Principal, app string) (CrossBreakdown, error) {
	if err := requireAdmin(p); err != nil {
		return CrossBreakdown{}, err
	}
	if err := checkApp(app); err != nil {
		return CrossBreakdown{}, err
	}
	r, f := s.cycleFilter(app, "")
	groups, err := s.aggregate(ctx, f, colUser, colSource)
	if err != nil {
		return CrossBreakdown{}, err
	}
	sortAggs(groups)
	out := CrossBreakdown{Range: r, App: app, Users: []CrossUser{}}
	idx := map[string]int{}
	totals := map[string]int64{}
	for _, g := range groups {
		i, ok := idx[g.keys[0]]
		if !ok {
			i = len(out.Users)
			idx[g.keys[0]] = i
			out.Users = append(out.Users, CrossUser{User: g.keys[0], Sources: []CrossSource{}})
		}
		out.Users[i].Sources = append(out.Users[i].Sources, CrossSource{Source: g.keys[1], Credits: creditsOf(g.credits)})
		totals[g.keys[0]] += g.credits
	}
	for i := range out.Users {
		out.Users[i].Credits = creditsOf(totals[out.Users[i].User])
	}
	return out, nil
}

// MySources returns the caller's credits by source in the current cycle. Errors:
// EUnauthorized, and the store's.
func (s *Service) MySources(ctx context.Context, p *meridian.Principal) (SourcesBreakdown, error) {
	if err := requireUser(p); err != nil {
		return SourcesBreakdown{}, err
	}
	r, f := s.cycleFilter("", p.Name)
	return s.sources(ctx, r, f)
}

// MyActions returns the caller's credits by action in the current cycle. Errors:
// EUnauthorized, and the store's.
func (s *Service) MyActions(ctx context.Context, p *meridian.Principal) (ActionsBreakdown, error) {
	if err := requireUser(p); err != nil {
		return ActionsBreakdown{}, err
	}
	r, f := s.cycleFilter("", p.Name)
	groups, err := s.aggregate(ctx, f, colFeature, colAction)
	if err != nil {
		return ActionsBreakdown{}, err
	}
	sortAggs(groups)
	out := ActionsBreakdown{Range: r, User: p.Name, Actions: []ActionUsage{}}
	for _, g := range groups {
		out.Actions = append(out.Actions, ActionUsage{Action: g.keys[1], Feature: g.keys[0], Unit: s.prices.Features[g.keys[0]].Unit, Usage: usageOf(g)})
	}
	return out, nil
}

// MyCross returns the caller's credits by source and action in the current cycle.
// Errors: EUnauthorized, and the store's.
func (s *Service) MyCross(ctx context.Context, p *meridian.Principal) (MyCrossBreakdown, error) {
	if err := requireUser(p); err != nil {
		return MyCrossBreakdown{}, err
	}
	r, f := s.cycleFilter("", p.Name)
	groups, err := s.aggregate(ctx, f, colSource, colFeature, colAction)
	if err != nil {
		return MyCrossBreakdown{}, err
	}
	sortAggs(groups)
	out := MyCrossBreakdown{Range: r, User: p.Name, Sources: []CrossSource{}}
	idx := map[string]int{}
	totals := map[string]int64{}
	for _, g := range groups {
		i, ok := idx[g.keys[0]]
		if !ok {
			i = len(out.Sources)
			idx[g.keys[0]] = i
			out.Sources = append(out.Sources, CrossSource{Source: g.keys[0], Actions: []ActionUsage{}})
		}
		out.Sources[i].Actions = append(out.Sources[i].Actions, ActionUsage{Action: g.keys[2], Feature: g.keys[1],
			Unit: s.prices.Features[g.keys[1]].Unit, Usage: usageOf(g)})
		totals[g.keys[0]] += g.credits
	}
	for i := range out.Sources {
		out.Sources[i].Credits = creditsOf(totals[out.Sources[i].Source])
	}
	return out, nil
}
