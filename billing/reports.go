package billing

import (
	"context"
	"math"
	"sort"

	"github.com/meridian-catalog/meridian"
)

// Usage is credits and raw units.
type Usage struct {
	Units   int64   `json:"units"`
	Credits float64 `json:"credits"`
	Actions int64   `json:"actions"`
}

func usageOf(a agg) Usage {
	return Usage{Units: a.units, Credits: creditsOf(a.credits), Actions: a.count}
}

// ActionUsage is one action's usage: raw units in its unit, converted credits.
type ActionUsage struct {
	Action  string `json:"action"`
	Feature string `json:"feature"`
	Unit    string `json:"unit"`
	Usage
}

// AppUsage is one application's usage with its actions.
type AppUsage struct {
	App string `json:"app"`
	Usage
	Actions []ActionUsage `json:"actionsBreakdown"`
}

// FeatureUsage is one feature's (meter's) usage.
type FeatureUsage struct {
	Feature        string  `json:"feature"`
	Unit           string  `json:"unit"`
	CreditsPerUnit float64 `json:"creditsPerUnit"`
	Usage
}

// EntityUsage is the credits of the actions that touched an entity.
type EntityUsage struct {
	Type string `json:"type"`
	FQN  string `json:"fqn"`
	Usage
}

// UserUsage is one user's usage.
type UserUsage struct {
	User string `json:"user"`
	Usage
}

// Pool is the credit pool of the current cycle.
type Pool struct {
	Plan            string  `json:"plan"`
	CycleStart      int64   `json:"cycleStart"`
	CycleEnd        int64   `json:"cycleEnd"`
	CreditsPerCycle float64 `json:"creditsPerCycle"`
	Used            float64 `json:"used"`
	Remaining       float64 `json:"remaining"`
	PercentUsed     float64 `json:"percentUsed"`
}

// Remaining returns the credit pool of the current cycle. Errors: EUnauthorized,
// EForbidden, and the store's.
func (s *Service) Remaining(ctx context.Context, p *meridian.Principal) (Pool, error) {
	if err := requireAdmin(p); err != nil {
		return Pool{}, err
	}
	return s.pool(ctx)
}

func (s *Service) pool(ctx context.Context) (Pool, error) {
	r, cs, ce := s.cycleRange()
	t, err := s.total(ctx, filter{from: r.StartTs, to: ce.UnixMilli()})
	if err != nil {
		return Pool{}, err
	}
	used := creditsOf(t.credits)
	return Pool{Plan: s.plan.Name, CycleStart: cs.UnixMilli(), CycleEnd: ce.UnixMilli(), CreditsPerCycle: s.plan.CreditsPerCycle,
		Used: used, Remaining: math.Max(0, s.plan.CreditsPerCycle-used), PercentUsed: round2(100 * used / s.plan.CreditsPerCycle)}, nil
}

// Summary is the full usage breakdown of the current cycle.
type Summary struct {
	Pool     Pool           `json:"pool"`
	Apps     []AppUsage     `json:"apps"`
	Features []FeatureUsage `json:"features"`
	Entities EntitiesUsage  `json:"entities"`
}

// CreditsSummary returns the current cycle's usage, app-based (per app and action, per
// feature) and entity-based (per entity touched, per user). Errors: EUnauthorized,
// EForbidden, and the store's.
func (s *Service) CreditsSummary(ctx context.Context, p *meridian.Principal) (Summary, error) {
	if err := requireAdmin(p); err != nil {
		return Summary{}, err
	}
	pool, err := s.pool(ctx)
	if err != nil {
		return Summary{}, err
	}
	r := Range{StartTs: pool.CycleStart, EndTs: pool.CycleEnd}
	apps, err := s.apps(ctx, r)
	if err != nil {
		return Summary{}, err
	}
	features, err := s.features(ctx, filter{from: r.StartTs, to: r.EndTs})
	if err != nil {
		return Summary{}, err
	}
	ents, err := s.entities(ctx, r)
	if err != nil {
		return Summary{}, err
	}
	return Summary{Pool: pool, Apps: apps, Features: features, Entities: ents}, nil
}

func (s *Service) features(ctx context.Context, f filter) ([]FeatureUsage, error) {
	groups, err := s.aggregate(ctx, f, colFeature)
	if err != nil {
		return nil, err
	}
	got := map[string]agg{}
	for _, g := range groups {
		got[g.keys[0]] = g
	}
	out := []FeatureUsage{}
	for _, name := range s.prices.FeatureNames() {
		pr := s.prices.Features[name]
		out = append(out, FeatureUsage{Feature: name, Unit: pr.Unit, CreditsPerUnit: pr.Credits, Usage: usageOf(got[name])})
	}
	return out, nil
}

// Conversations is the credits per conversation id.
type Conversations struct {
	Range
	Total         float64            `json:"total"`
	Conversations map[string]float64 `json:"conversations"`
}

// CreditsByConversation returns the credits per conversation id in the range;
// unattributed spend is under "unattributed". Errors: EUnauthorized, EForbidden,
// EInvalid, and the store's.
func (s *Service) CreditsByConversation(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (Conversations, error) {
	if err := requireAdmin(p); err != nil {
		return Conversations{}, err
	}
	r, err := s.rangeOf(startTs, endTs)
	if err != nil {
		return Conversations{}, err
	}
	groups, err := s.aggregate(ctx, filter{from: r.StartTs, to: r.EndTs}, colConversation)
	if err != nil {
		return Conversations{}, err
	}
	out := Conversations{Range: r, Conversations: map[string]float64{}}
	var total int64
	for _, g := range groups {
		out.Conversations[g.keys[0]] = creditsOf(g.credits)
		total += g.credits
	}
	out.Total = creditsOf(total)
	return out, nil
}

// Apps is the per-app, per-action usage of a range.
type Apps struct {
	Range
	Apps []AppUsage `json:"apps"`
}

// CreditsByApp returns each app's usage and each of its actions', raw units and
// credits. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) CreditsByApp(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (Apps, error) {
	if err := requireAdmin(p); err != nil {
		return Apps{}, err
	}
	r, err := s.rangeOf(startTs, endTs)
	if err != nil {
		return Apps{}, err
	}
	apps, err := s.apps(ctx, r)
	return Apps{Range: r, Apps: apps}, err
}

func (s *Service) apps(ctx context.Context, r Range) ([]AppUsage, error) {
	groups, err := s.aggregate(ctx, filter{from: r.StartTs, to: r.EndTs}, colApp, colFeature, colAction)
	if err != nil {
		return nil, err
	}
	sortAggs(groups)
	byApp := map[string]*AppUsage{}
	credits := map[string]int64{}
	var order []string
	for _, g := range groups {
		a := byApp[g.keys[0]]
		if a == nil {
			a = &AppUsage{App: g.keys[0], Actions: []ActionUsage{}}
			byApp[g.keys[0]] = a
			order = append(order, g.keys[0])
		}
		u := usageOf(g)
		a.Units += u.Units
		a.Actions = append(a.Actions, ActionUsage{Action: g.keys[2], Feature: g.keys[1], Unit: s.prices.Features[g.keys[1]].Unit, Usage: u})
		a.Usage.Actions += u.Actions
		credits[g.keys[0]] += g.credits
	}
	out := make([]AppUsage, 0, len(order))
	for _, name := range order {
		a := byApp[name]
		a.Credits = creditsOf(credits[name])
		out = append(out, *a)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Credits > out[j].Credits })
	return out, nil
}

// AppDay is one app's usage on one day.
type AppDay struct {
	Date string           `json:"date"`
	Apps map[string]Usage `json:"apps"`
}

// AppsHistory is usage by app and date.
type AppsHistory struct {
	Range
	History []AppDay `json:"history"`
}

// CreditsAppsHistory returns usage by app and UTC date from startTs (required) to now;
// endTs is ignored, as the specification says. Idle days are present with no apps.
// Errors: EUnauthorized, EForbidden, EInvalid (startTs missing, in the future, or more
// than 366 days ago), and the store's.
func (s *Service) CreditsAppsHistory(ctx context.Context, p *meridian.Principal, startTs int64) (AppsHistory, error) {
	if err := requireAdmin(p); err != nil {
		return AppsHistory{}, err
	}
	now := s.now().UnixMilli()
	if startTs <= 0 {
		return AppsHistory{}, meridian.Errorf(meridian.EInvalid, "startTs is required: epoch milliseconds of the first day")
	}
	if startTs > now {
		return AppsHistory{}, meridian.Errorf(meridian.EInvalid, "startTs %d is in the future", startTs)
	}
	if dayOf(now)-dayOf(startTs) >= maxRangeDays {
		return AppsHistory{}, meridian.Errorf(meridian.EInvalid, "startTs is more than %d days ago", maxRangeDays)
	}
	r := Range{StartTs: dayOf(startTs) * dayMs, EndTs: now + 1}
	groups, err := s.aggregate(ctx, filter{from: r.StartTs, to: r.EndTs}, colDay, colApp)
	if err != nil {
		return AppsHistory{}, err
	}
	idx := map[string]map[string]Usage{}
	for _, g := range groups {
		var d int64
		for _, c := range g.keys[0] {
			d = d*10 + int64(c-'0')
		}
		k := date(d)
		if idx[k] == nil {
			idx[k] = map[string]Usage{}
		}
		idx[k][g.keys[1]] = usageOf(g)
	}
	out := AppsHistory{Range: r, History: []AppDay{}}
	for d := dayOf(r.StartTs); d <= dayOf(now); d++ {
		apps := idx[date(d)]
		if apps == nil {
			apps = map[string]Usage{}
		}
		out.History = append(out.History, AppDay{Date: date(d), Apps: apps})
	}
	return out, nil
}

// EntitiesUsage is entity-based usage: the entities actions touched (assets, test
// cases) and the users who spent.
type EntitiesUsage struct {
	Range
	Assets    []EntityUsage `json:"assets"`
	TestCases []EntityUsage `json:"testCases"`
	Users     []UserUsage   `json:"users"`
}

// testCaseKind is the kind whose entities the entity report lists as test cases (as
// the quality module names it).
const testCaseKind = "testCase"

// maxEntityRows bounds each list of the entity report (the highest first).
const maxEntityRows = 1000

// CreditsByEntity returns entity-based usage in the range: each entity an action
// touched carries the credits of those actions (an action touching two entities counts
// for both), and each user their own. Errors: EUnauthorized, EForbidden, EInvalid, and
// the store's.
func (s *Service) CreditsByEntity(ctx context.Context, p *meridian.Principal, startTs, endTs int64) (EntitiesUsage, error) {
	if err := requireAdmin(p); err != nil {
		return EntitiesUsage{}, err
	}
	r, err := s.rangeOf(startTs, endTs)
	if err != nil {
		return EntitiesUsage{}, err
	}
	return s.entities(ctx, r)
}

func (s *Service) entities(ctx context.Context, r Range) (EntitiesUsage, error) {
	type key struct{ typ, fqn string }
	sums := map[key]*agg{}
	err := s.each(ctx, filter{from: r.StartTs, to: r.EndTs}, true, func(e Entry) error {
		seen := map[key]bool{}
		for _, ref := range e.Entities {
			k := key{ref.Type, ref.FQN}
			if seen[k] {
				continue
			}
			seen[k] = true
			a := sums[k]
			if a == nil {
				a = &agg{keys: []string{ref.Type, ref.FQN}}
				sums[k] = a
			}
			a.units += e.Units
			a.credits += e.Credits
			a.count++
		}
		return nil
	})
	if err != nil {
		return EntitiesUsage{}, err
	}
	all := make([]agg, 0, len(sums))
	for _, a := range sums {
		all = append(all, *a)
	}
	sortAggs(all)
	out := EntitiesUsage{Range: r, Assets: []EntityUsage{}, TestCases: []EntityUsage{}, Users: []UserUsage{}}
	for _, a := range all {
		u := EntityUsage{Type: a.keys[0], FQN: a.keys[1], Usage: usageOf(a)}
		if a.keys[0] == testCaseKind {
			if len(out.TestCases) < maxEntityRows {
				out.TestCases = append(out.TestCases, u)
			}
		} else if len(out.Assets) < maxEntityRows {
			out.Assets = append(out.Assets, u)
		}
	}
	users, err := s.aggregate(ctx, filter{from: r.StartTs, to: r.EndTs}, colUser)
	if err != nil {
		return EntitiesUsage{}, err
	}
	sortAggs(users)
	for _, g := range users {
		if len(out.Users) == maxEntityRows {
			break
		}
		out.Users = append(out.Users, UserUsage{User: g.keys[0], Usage: usageOf(g)})
	}
	return out, nil
}
