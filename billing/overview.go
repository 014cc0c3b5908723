package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

// overviewDays is the length of the overview's series (the specification's limit).
const overviewDays = 7

// DayUsage is one UTC day's usage.
type DayUsage struct {
	Date string `json:"date"`
	Usage
}

// Overview is the billing overview.
type Overview struct {
	Plan      Plan           `json:"plan"`
	Pool      Pool           `json:"pool"`
	Meters    []FeatureUsage `json:"meters"`
	Apps      []AppUsage     `json:"apps"`
	Budgets   []BudgetStatus `json:"budgets"`
	Last7Days []DayUsage     `json:"last7Days"`
}

// Overview returns the plan, the current cycle's pool and meters (one per feature),
// the usage per app, the budgets, and the last 7 UTC days (today included) as a
// series. Errors: EUnauthorized, EForbidden, and the store's.
func (s *Service) Overview(ctx context.Context, p *meridian.Principal) (Overview, error) {
	if err := requireAdmin(p); err != nil {
		return Overview{}, err
	}
	// One grouping of the cycle gives the apps, the meters and the pool.
	_, cs, ce := s.cycleRange()
	apps, err := s.apps(ctx, Range{StartTs: cs.UnixMilli(), EndTs: ce.UnixMilli()})
	if err != nil {
		return Overview{}, err
	}
	byFeature := map[string]Usage{}
	var used int64
	for _, a := range apps {
		for _, x := range a.Actions {
			u := byFeature[x.Feature]
			u.Units += x.Units
			u.Actions += x.Usage.Actions
			u.Credits = creditsOf(microOf(u.Credits) + microOf(x.Credits))
			byFeature[x.Feature] = u
			used += microOf(x.Credits)
		}
	}
	meters := []FeatureUsage{}
	for _, name := range s.prices.FeatureNames() {
		pr := s.prices.Features[name]
		meters = append(meters, FeatureUsage{Feature: name, Unit: pr.Unit, CreditsPerUnit: pr.Credits, Usage: byFeature[name]})
	}
	usedCredits := creditsOf(used)
	pool := Pool{Plan: s.plan.Name, CycleStart: cs.UnixMilli(), CycleEnd: ce.UnixMilli(), CreditsPerCycle: s.plan.CreditsPerCycle,
		Used: usedCredits, Remaining: max(0, s.plan.CreditsPerCycle-usedCredits), PercentUsed: round2(100 * usedCredits / s.plan.CreditsPerCycle)}
	budgets, err := s.budgetStatus(ctx, "")
	if err != nil {
		return Overview{}, err
	}
	today := dayOf(s.now().UnixMilli())
	series, err := s.daily(ctx, today-overviewDays+1, today, filter{})
	if err != nil {
		return Overview{}, err
	}
	return Overview{Plan: s.plan, Pool: pool, Meters: meters, Apps: apps, Budgets: budgets.Budgets, Last7Days: series}, nil
}

// daily is the usage of each day from first to last (day numbers), idle days zero.
func (s *Service) daily(ctx context.Context, first, last int64, f filter) ([]DayUsage, error) {
	f.from, f.to = first*dayMs, (last+1)*dayMs
	groups, err := s.aggregate(ctx, f, colDay)
	if err != nil {
		return nil, err
	}
	idx := map[string]agg{}
	for _, g := range groups {
		idx[g.keys[0]] = g
	}
	out := make([]DayUsage, 0, last-first+1)
	for d := first; d <= last; d++ {
		out = append(out, DayUsage{Date: date(d), Usage: usageOf(idx[fmt.Sprint(d)])})
	}
	return out, nil
}

// WeekStats are the figures of one 7-day window.
type WeekStats struct {
	Range
	Credits       float64            `json:"credits"`
	Actions       int64              `json:"actions"`
	Failures      int64              `json:"failures"`
	ActiveUsers   int                `json:"activeUsers"`
	Conversations int                `json:"conversations"`
	Features      map[string]float64 `json:"features"`
}

// WeeklyImpact compares the last 7 complete UTC days with the 7 days before.
type WeeklyImpact struct {
	Current  WeekStats          `json:"current"`
	Previous WeekStats          `json:"previous"`
	Change   map[string]float64 `json:"change"`
}

// WeeklyImpact returns the weekly snapshot: the last 7 complete UTC days (ending at
// today's midnight) against the 7 days before them; change holds each figure's
// difference and, where the previous one is not zero, its percent change. Errors:
// EUnauthorized, EForbidden, and the store's.
func (s *Service) WeeklyImpact(ctx context.Context, p *meridian.Principal) (WeeklyImpact, error) {
	if err := requireAdmin(p); err != nil {
		return WeeklyImpact{}, err
	}
	return s.weeklyImpact(ctx)
}

func (s *Service) weeklyImpact(ctx context.Context) (WeeklyImpact, error) {
	end := dayOf(s.now().UnixMilli()) * dayMs
	cur, err := s.weekStats(ctx, Range{StartTs: end - 7*dayMs, EndTs: end})
	if err != nil {
		return WeeklyImpact{}, err
	}
	prev, err := s.weekStats(ctx, Range{StartTs: end - 14*dayMs, EndTs: end - 7*dayMs})
	if err != nil {
		return WeeklyImpact{}, err
	}
	ch := map[string]float64{}
	cmp := func(name string, c, p float64) {
		ch[name] = c - p
		if p != 0 {
			ch[name+"Percent"] = round2(100 * (c - p) / p)
		}
	}
	cmp("credits", cur.Credits, prev.Credits)
	cmp("actions", float64(cur.Actions), float64(prev.Actions))
	cmp("activeUsers", float64(cur.ActiveUsers), float64(prev.ActiveUsers))
	cmp("conversations", float64(cur.Conversations), float64(prev.Conversations))
	return WeeklyImpact{Current: cur, Previous: prev, Change: ch}, nil
}

func (s *Service) weekStats(ctx context.Context, r Range) (WeekStats, error) {
	f := filter{from: r.StartTs, to: r.EndTs}
	st := WeekStats{Range: r, Features: map[string]float64{}}
	groups, err := s.aggregate(ctx, f, colFeature)
	if err != nil {
		return st, err
	}
	var credits int64
	for _, g := range groups {
		st.Features[g.keys[0]] = creditsOf(g.credits)
		credits += g.credits
		st.Actions += g.count
		st.Failures += g.failures
	}
	st.Credits = creditsOf(credits)
	users, err := s.aggregate(ctx, f, colUser)
	if err != nil {
		return st, err
	}
	st.ActiveUsers = len(users)
	convs, err := s.aggregate(ctx, f, colConversation)
	if err != nil {
		return st, err
	}
	for _, c := range convs {
		if c.keys[0] != Unattributed {
			st.Conversations++
		}
	}
	return st, nil
}

// Digest is what send-digest did.
type Digest struct {
	Snapshot   WeeklyImpact      `json:"snapshot"`
	Recipients []string          `json:"recipients"`
	Sent       int               `json:"sent"`
	Failed     map[string]string `json:"failed"`
}

// SendDigest builds the weekly snapshot and e-mails it, through the Notifier, to
// every active (not deleted) non-bot admin user with an e-mail address. Errors:
// EUnauthorized, EForbidden, EUnavailable (no notifier), and the store's.
func (s *Service) SendDigest(ctx context.Context, p *meridian.Principal) (Digest, error) {
	if err := requireAdmin(p); err != nil {
		return Digest{}, err
	}
	if s.notifier == nil {
		return Digest{}, meridian.Errorf(meridian.EUnavailable, "No notifier is configured: e-mail cannot be sent")
	}
	snap, err := s.weeklyImpact(ctx)
	if err != nil {
		return Digest{}, err
	}
	users, err := s.users(ctx)
	if err != nil {
		return Digest{}, err
	}
	out := Digest{Snapshot: snap, Recipients: []string{}, Failed: map[string]string{}}
	text := fmt.Sprintf("Meridian weekly AI credit impact, %s to %s (UTC): %g credits (%+g against the week before), %d actions, %d active users, %d conversations.",
		time.UnixMilli(snap.Current.StartTs).UTC().Format(time.DateOnly), time.UnixMilli(snap.Current.EndTs-1).UTC().Format(time.DateOnly),
		snap.Current.Credits, snap.Change["credits"], snap.Current.Actions, snap.Current.ActiveUsers, snap.Current.Conversations)
	for _, u := range users {
		if u.Deleted || u.IsBot || !u.IsAdmin || u.Email == "" {
			continue
		}
		out.Recipients = append(out.Recipients, u.Email)
		d := collab.Destination{Type: collab.DestinationEmail, Config: collab.DestinationConfig{Receivers: []string{u.Email}}}
		if _, err := s.notifier.Notify(ctx, d, collab.Message{Subject: "Meridian weekly AI credit impact", Text: text, Body: snap}); err != nil {
			out.Failed[u.Email] = err.Error()
			continue
		}
		out.Sent++
	}
	return out, nil
}

// user is what the adoption reports and the digest read of a user entity.
type user struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Email       string `json:"email"`
	IsBot       bool   `json:"isBot"`
	IsAdmin     bool   `json:"isAdmin"`
	Deleted     bool   `json:"deleted"`
	CreatedAt   int64  `json:"-"`
}

// maxUsers bounds how many users the adoption reports read.
const maxUsers = 100000

// users reads every user entity, deleted ones included, by name.
func (s *Service) users(ctx context.Context) ([]user, error) {
	var out []user
	tx, err := s.db.Begin(ctx, false)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var after *store.Cursor
	for len(out) < maxUsers {
		rows, _, err := tx.List(ctx, store.ListQuery{Kind: meridian.KindUser, Include: store.IncludeAll, After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			var u user
			_ = json.Unmarshal(r.Doc, &u)
			u.Name, u.Deleted = r.Name, r.Deleted
			out = append(out, u)
		}
		if len(rows) < 1000 {
			break
		}
		last := rows[len(rows)-1]
		after = &store.Cursor{Name: last.Name, ID: last.ID}
	}
	return out, nil
}

// DailyConversations is one UTC day's conversations.
type DailyConversations struct {
	Date          string `json:"date"`
	Conversations int    `json:"conversations"`
	Senders       int    `json:"senders"`
}

// ConversationsDaily is the conversation series.
type ConversationsDaily struct {
	Range
	Days []DailyConversations `json:"days"`
}

// Bounds of the days parameter.
const (
	DefaultDays = 30
	MaxDays     = maxRangeDays
)

// ConversationsDaily returns, for each of the last days UTC days (today included), the
// number of distinct conversation ids and of distinct users who spent in one; idle
// days are zero. Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) ConversationsDaily(ctx context.Context, p *meridian.Principal, days int) (ConversationsDaily, error) {
	if err := requireAdmin(p); err != nil {
		return ConversationsDaily{}, err
	}
	days, err := boundDays(days)
	if err != nil {
		return ConversationsDaily{}, err
	}
	today := dayOf(s.now().UnixMilli())
	first := today - int64(days) + 1
	r := Range{StartTs: first * dayMs, EndTs: (today + 1) * dayMs}
	type sets struct{ convs, users map[string]bool }
	idx := map[int64]*sets{}
	err = s.each(ctx, filter{from: r.StartTs, to: r.EndTs}, false, func(e Entry) error {
		if e.Conversation == Unattributed {
			return nil
		}
		d := dayOf(e.Ts)
		st := idx[d]
		if st == nil {
			st = &sets{map[string]bool{}, map[string]bool{}}
			idx[d] = st
		}
		st.convs[e.Conversation] = true
		st.users[e.User] = true
		return nil
	})
	if err != nil {
		return ConversationsDaily{}, err
	}
	out := ConversationsDaily{Range: r, Days: []DailyConversations{}}
	for d := first; d <= today; d++ {
		dc := DailyConversations{Date: date(d)}
		if st := idx[d]; st != nil {
			dc.Conversations, dc.Senders = len(st.convs), len(st.users)
		}
		out.Days = append(out.Days, dc)
	}
	return out, nil
}

func boundDays(days int) (int, error) {
	if days == 0 {
		return DefaultDays, nil
	}
	if days < 1 || days > MaxDays {
		return 0, meridian.Errorf(meridian.EInvalid, "days must be 1 to %d", MaxDays)
	}
	return days, nil
}

// FeatureLimits is the answer of usage/{name}: configured limits, no usage counts.
type FeatureLimits struct {
	Plan         Plan           `json:"plan"`
	PriceVersion int            `json:"priceVersion"`
	Features     []FeatureLimit `json:"features"`
	Budgets      []RateLimit    `json:"budgets"`
}

// FeatureLimit is one feature's price and the actions priced apart under it.
type FeatureLimit struct {
	Name           string             `json:"name"`
	Unit           string             `json:"unit"`
	CreditsPerUnit float64            `json:"creditsPerUnit"`
	Actions        map[string]float64 `json:"actions,omitempty"`
}

// FeatureUsageLimits returns the configured limits of a feature, or of all ("all"):
// plan, price per unit, and the budgets. Errors: EUnauthorized, EForbidden, ENotFound
// (unknown feature).
func (s *Service) FeatureUsageLimits(ctx context.Context, p *meridian.Principal, name string) (FeatureLimits, error) {
	if err := requireAdmin(p); err != nil {
		return FeatureLimits{}, err
	}
	out := FeatureLimits{Plan: s.plan, PriceVersion: s.prices.Version, Features: []FeatureLimit{}}
	for _, f := range s.prices.FeatureNames() {
		if name != "all" && name != f {
			continue
		}
		pr := s.prices.Features[f]
		fl := FeatureLimit{Name: f, Unit: pr.Unit, CreditsPerUnit: pr.Credits}
		for a, c := range s.prices.Actions {
			feat := s.prices.ToolFeature(a)
			if op, ok := s.prices.Operation(a); ok {
				feat = op
			}
			if feat == f {
				if fl.Actions == nil {
					fl.Actions = map[string]float64{}
				}
				fl.Actions[a] = c
			}
		}
		out.Features = append(out.Features, fl)
	}
	if len(out.Features) == 0 {
		return FeatureLimits{}, meridian.Errorf(meridian.ENotFound, "Unknown feature %q: use all or one of %v", name, s.prices.FeatureNames())
	}
	s.mu.Lock()
	out.Budgets = append([]RateLimit{}, s.budgets...)
	s.mu.Unlock()
	return out, nil
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
