package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// EntityRef is an entity a metered action touched.
type EntityRef struct {
	Type string `json:"type,omitempty"`
	FQN  string `json:"fqn"`
}

// Entry is one row of the ledger.
type Entry struct {
	ID           string      `json:"id"`
	Ts           int64       `json:"ts"`
	Feature      string      `json:"feature"`
	Action       string      `json:"action"`
	App          string      `json:"app"`
	Source       string      `json:"source"`
	Client       string      `json:"client,omitempty"`
	User         string      `json:"user"`
	IsBot        bool        `json:"isBot,omitempty"`
	Agent        string      `json:"agent"`
	Conversation string      `json:"conversation"`
	Units        int64       `json:"units"`
	Credits      int64       `json:"microCredits"`
	PriceVersion int         `json:"priceVersion"`
	Failed       bool        `json:"failed,omitempty"`
	LatencyUs    int64       `json:"latencyUs"`
	Entities     []EntityRef `json:"entities,omitempty"`
}

// Attribution says who spends: set on the context by the edges (rpc, rest) so that
// what a call computes inside (embeddings) is attributed to it.
type Attribution struct {
	Principal *meridian.Principal
	// App is MCP, REST, UI or System.
	App string
	// ClientName and ClientVersion are the MCP client's (initialize clientInfo).
	ClientName, ClientVersion string
	// Agent and Conversation name the agent and the conversation, when told.
	Agent, Conversation string
}

type attributionKey struct{}

// WithAttribution returns ctx carrying a.
func WithAttribution(ctx context.Context, a Attribution) context.Context {
	return context.WithValue(ctx, attributionKey{}, a)
}

// AttributionFrom returns the attribution on ctx; without one, the principal on ctx
// (or the system) spending through the System app.
func AttributionFrom(ctx context.Context) Attribution {
	if a, ok := ctx.Value(attributionKey{}).(Attribution); ok {
		return a
	}
	return Attribution{Principal: meridian.PrincipalFrom(ctx), App: AppSystem}
}

// label bounds and cleans an attribution string.
func label(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, ""))
	if len(s) > maxLabel {
		cut := maxLabel
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// entry builds the ledger entry of an action from its attribution (without price).
func (s *Service) entry(a Attribution, feature, action string, units int64, entities []EntityRef) Entry {
	e := Entry{ID: meridian.NewID(), Ts: s.now().UnixMilli(), Feature: feature, Action: label(action), App: a.App,
		User: "system", Agent: label(a.Agent), Conversation: label(a.Conversation), Units: units}
	if e.App == "" {
		e.App = AppSystem
	}
	if p := a.Principal; p != nil && p.Name != "" {
		e.User, e.IsBot = label(p.Name), p.IsBot
	}
	switch e.App {
	case AppMCP:
		e.Source = label(a.ClientName)
		if e.Source == "" {
			e.Source = AppMCP
		}
		e.Client = label(strings.TrimSpace(a.ClientName + " " + a.ClientVersion))
	case AppSystem:
		e.Source = "system"
	default:
		e.Source = e.App
	}
	if e.Agent == "" {
		e.Agent = Unattributed
	}
	if e.Conversation == "" {
		e.Conversation = Unattributed
	}
	if len(entities) > maxEntities {
		entities = entities[:maxEntities]
	}
	for _, r := range entities {
		if r.FQN = label(r.FQN); r.FQN != "" {
			e.Entities = append(e.Entities, EntityRef{Type: label(r.Type), FQN: r.FQN})
		}
	}
	return e
}

// Record meters an action that needs no budget check (embeddings computed, work of
// the system) at its price now. It never fails the caller: an error is logged.
func (s *Service) Record(ctx context.Context, feature, action string, units int64, entities []EntityRef) {
	if s == nil || units <= 0 {
		return
	}
	e := s.entry(AttributionFrom(ctx), feature, action, units, entities)
	e.PriceVersion = s.prices.Version
	e.Credits = s.prices.unitPrice(feature, e.Action) * units
	s.mu.Lock()
	s.countLocked(e, e.Credits)
	s.append(e)
	s.mu.Unlock()
}

// append journals e (one write) and queues it for the drain. The caller holds s.mu, so
// a counter built from the table and the pending entries sees e exactly once.
func (s *Service) append(e Entry) {
	line, err := json.Marshal(e)
	if err != nil {
		s.log.Error("billing: encode an entry", "err", err)
		return
	}
	line = append(line, '\n')
	s.drainMu.Lock()
	err = s.journal.append(line)
	if err == nil {
		s.pending = append(s.pending, e)
	}
	s.drainMu.Unlock()
	if err != nil {
		s.log.Error("billing: journal an entry", "err", err)
	}
}

// Reservation is an action admitted by the budgets, its credits already counted
// against them. Done records it.
type Reservation struct {
	s        *Service
	e        Entry
	start    time.Time
	reserved int64
}

// Reserve admits an action before its work: it prices units of action under feature
// and, under one lock, checks every ceiling that applies to the caller; when one
// would be exceeded it returns ETooManyRequests naming the ceiling, the window and when
// it resets, and nothing is counted. Otherwise the credits count at once (so
// concurrent calls never overspend), and the caller calls Done when the work ends.
// Errors: ETooManyRequests.
func (s *Service) Reserve(ctx context.Context, feature, action string, units int64, entities []EntityRef) (*Reservation, error) {
	e := s.entry(AttributionFrom(ctx), feature, action, units, entities)
	e.PriceVersion = s.prices.Version
	e.Credits = s.prices.unitPrice(feature, e.Action) * units
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admitLocked(ctx, e, now); err != nil {
		if meridian.ErrorCode(err) == meridian.ETooManyRequests {
			// A refused call is on the ledger as a failure that cost nothing.
			e.Failed, e.Credits = true, 0
			s.append(e)
		}
		return nil, err
	}
	s.countLocked(e, e.Credits)
	s.live[e.ID] = e
	return &Reservation{s: s, e: e, start: time.Now(), reserved: e.Credits}, nil
}

// Done records the reserved action. A failed action is recorded with no credits (it
// counts as an error in the MCP usage) and its reservation is released.
func (r *Reservation) Done(failed bool) {
	if r == nil {
		return
	}
	r.e.LatencyUs = time.Since(r.start).Microseconds()
	r.e.Failed = failed
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, r.e.ID)
	if failed {
		r.e.Credits = 0
		s.countLocked(r.e, -r.reserved)
	}
	s.append(r.e)
}

// drain moves the pending entries into the ledger table in one transaction.
func (s *Service) drain(ctx context.Context) (int, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.drainMu.Lock()
	if len(s.pending) == 0 {
		s.drainMu.Unlock()
		return 0, nil
	}
	old, err := s.journal.rotate()
	batch := s.pending
	s.pending = nil
	s.drainMu.Unlock()
	if err != nil {
		s.requeue(batch)
		return 0, err
	}
	if len(batch) == 0 {
		retire(old)
		return 0, nil
	}
	if err := s.insert(ctx, batch); err != nil {
		// The old segment stays on disk (and locked by us) until a later drain or the
		// next start replays it; keep the entries pending meanwhile.
		s.requeue(batch)
		return 0, err
	}
	retire(old)
	return len(batch), nil
}

func (s *Service) requeue(batch []Entry) {
	s.drainMu.Lock()
	s.pending = append(batch, s.pending...)
	s.drainMu.Unlock()
}

// insert writes entries; an id already present is left alone (a replay).
func (s *Service) insert(ctx context.Context, batch []Entry) error {
	return s.write(ctx, func(tx store.Tx) error { return insertEntries(ctx, tx.SQL(), batch) })
}

// insertRows is how many entries one INSERT statement carries: a few dozen rows cut
// the statements per drain, while the bind of numbered parameters (linear in their
// count in SQLite) stays cheap.
const insertRows = 25

func insertEntries(ctx context.Context, db store.SQL, batch []Entry) error {
	const cols = 17
	inserted := map[string]bool{}
	all := batch
	for len(batch) > 0 {
		n := min(len(batch), insertRows)
		var q strings.Builder
		q.WriteString(`INSERT INTO billing_ledger (id, ts, feature, action, app, source, client, user_name, is_bot,
			agent, conversation, units, credits, price_version, failed, latency_us, entities) VALUES `)
		args := make([]any, 0, n*cols)
		for r, e := range batch[:n] {
			ents := "[]"
			if len(e.Entities) > 0 {
				b, _ := json.Marshal(e.Entities)
				ents = string(b)
			}
			if r > 0 {
				q.WriteString(", ")
			}
			placeholders(&q, r*cols, cols)
			args = append(args, e.ID, e.Ts, e.Feature, e.Action, e.App, e.Source, e.Client, e.User, b2i(e.IsBot), e.Agent,
				e.Conversation, e.Units, e.Credits, e.PriceVersion, b2i(e.Failed), e.LatencyUs, ents)
		}
		// RETURNING names the rows inserted: a replayed entry already there is not
		// added to the rollup again.
		q.WriteString(" ON CONFLICT (id) DO NOTHING RETURNING id")
		rows, err := db.Query(ctx, q.String(), args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			inserted[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		batch = batch[n:]
	}
	return rollUp(ctx, db, all, inserted)
}

// dailyKey is one row of the daily rollup.
type dailyKey struct {
	day                                               int64
	feature, action, app, source, client, user, agent string
}

// rollUp adds the inserted entries of batch to the daily rollup.
func rollUp(ctx context.Context, db store.SQL, batch []Entry, inserted map[string]bool) error {
	sums := map[dailyKey]*agg{}
	var keys []dailyKey
	for _, e := range batch {
		if !inserted[e.ID] {
			continue
		}
		k := dailyKey{e.Ts / dayMs, e.Feature, e.Action, e.App, e.Source, e.Client, e.User, e.Agent}
		a := sums[k]
		if a == nil {
			a = &agg{}
			sums[k] = a
			keys = append(keys, k)
		}
		a.units += e.Units
		a.credits += e.Credits
		a.count++
		if e.Failed {
			a.failures++
		}
	}
	const cols = 12
	for len(keys) > 0 {
		n := min(len(keys), insertRows)
		var q strings.Builder
		q.WriteString(`INSERT INTO billing_daily (day, feature, action, app, source, client, user_name, agent, units, credits,
			actions, failures) VALUES `)
		args := make([]any, 0, n*cols)
		for r, k := range keys[:n] {
			if r > 0 {
				q.WriteString(", ")
			}
			placeholders(&q, r*cols, cols)
			a := sums[k]
			args = append(args, k.day, k.feature, k.action, k.app, k.source, k.client, k.user, k.agent, a.units, a.credits, a.count, a.failures)
		}
		q.WriteString(` ON CONFLICT (day, feature, action, app, source, client, user_name, agent) DO UPDATE SET
			units = billing_daily.units + excluded.units, credits = billing_daily.credits + excluded.credits,
			actions = billing_daily.actions + excluded.actions, failures = billing_daily.failures + excluded.failures`)
		if _, err := db.Exec(ctx, q.String(), args...); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// placeholders writes ($from+1, …, $from+n).
func placeholders(q *strings.Builder, from, n int) {
	q.WriteString("(")
	for c := 1; c <= n; c++ {
		if c > 1 {
			q.WriteString(", ")
		}
		q.WriteString("$" + strconv.Itoa(from+c))
	}
	q.WriteString(")")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// recover replays the segments of processes that are gone.
func (s *Service) recover(ctx context.Context) error {
	files, err := s.journal.orphans()
	if err != nil {
		return fmt.Errorf("billing: list journal segments: %w", err)
	}
	for i, f := range files {
		entries, err := readSegment(f.Name())
		if err == nil && len(entries) > 0 {
			err = s.insert(ctx, entries)
		}
		if err != nil {
			for _, g := range files[i:] {
				g.Close()
			}
			return fmt.Errorf("billing: replay journal segment %s: %w", f.Name(), err)
		}
		if len(entries) > 0 {
			s.log.Info("billing: replayed a journal segment", "entries", len(entries))
		}
		retire(f)
	}
	return nil
}
