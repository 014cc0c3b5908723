package billing

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Budget windows. Every window is in UTC: HOURLY starts on the hour, FOURHOURS at
// 00:00, 04:00, … 20:00, DAILY at midnight, WEEKLY on Monday at midnight (ISO 8601
// weeks), MONTHLY on the first of the month, YEARLY on 1 January; GLOBAL never resets.
const (
	WindowHourly    = "HOURLY"
	WindowFourHours = "FOURHOURS"
	WindowDaily     = "DAILY"
	WindowWeekly    = "WEEKLY"
	WindowMonthly   = "MONTHLY"
	WindowYearly    = "YEARLY"
	WindowGlobal    = "GLOBAL"
)

// Windows lists the budget windows.
var Windows = []string{WindowHourly, WindowFourHours, WindowDaily, WindowWeekly, WindowMonthly, WindowYearly, WindowGlobal}

// Budget scopes: a total ceiling caps the whole workspace, a user ceiling caps each
// user on their own.
const (
	ScopeTotal = "total"
	ScopeUser  = "user"
)

// Bounds of a budget set.
const (
	MaxBudgets       = 50
	maxBudgetCredits = 1e12
)

// RateLimit is a credit ceiling.
type RateLimit struct {
	Window  string  `json:"window"`
	Credits float64 `json:"credits"`
	Scope   string  `json:"scope"`
}

// WindowBounds returns the window of kind win holding t, [start, end), in UTC. For
// GLOBAL, start is the epoch and end is the zero time (no reset).
func WindowBounds(win string, t time.Time) (time.Time, time.Time) {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch win {
	case WindowHourly:
		s := t.Truncate(time.Hour)
		return s, s.Add(time.Hour)
	case WindowFourHours:
		s := day.Add(time.Duration(t.Hour()/4*4) * time.Hour)
		return s, s.Add(4 * time.Hour)
	case WindowDaily:
		return day, day.AddDate(0, 0, 1)
	case WindowWeekly:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		s := day.AddDate(0, 0, -back)
		return s, s.AddDate(0, 0, 7)
	case WindowMonthly:
		s := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return s, s.AddDate(0, 1, 0)
	case WindowYearly:
		s := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		return s, s.AddDate(1, 0, 0)
	}
	return time.UnixMilli(0).UTC(), time.Time{}
}

// counterKey names the consumption of one window of one ceiling: user is empty for a
// total ceiling.
type counterKey struct {
	win   string
	start int64
	user  string
}

func keyFor(b RateLimit, t time.Time, user string) counterKey {
	start, _ := WindowBounds(b.Window, t)
	k := counterKey{win: b.Window, start: start.UnixMilli()}
	if b.Scope == ScopeUser {
		k.user = user
	}
	return k
}

// capped reports whether spend through app counts against the ceilings. The system's
// own background work (the semantic indexer's embeddings) is in the ledger, the pool
// and every report, but no ceiling counts it: it is never refused, so counting it would
// only refuse callers for work they did not ask for.
func capped(app string) bool { return app != AppSystem }

// countLocked adds delta micro-credits of e to the live counters it falls in.
func (s *Service) countLocked(e Entry, delta int64) {
	if delta == 0 || len(s.counters) == 0 || !capped(e.App) {
		return
	}
	t := time.UnixMilli(e.Ts)
	for _, b := range s.budgets {
		k := keyFor(b, t, e.User)
		if v, ok := s.counters[k]; ok {
			s.counters[k] = v + delta
		}
	}
}

// admitLocked refuses e when it would push a ceiling over; s.mu is held.
func (s *Service) admitLocked(ctx context.Context, e Entry, now time.Time) error {
	for _, b := range s.budgets {
		k := keyFor(b, now, e.User)
		used, ok := s.counters[k]
		if !ok {
			for old := range s.counters {
				if old.win == k.win && old.start != k.start {
					delete(s.counters, old)
				}
			}
			var err error
			if used, err = s.consumed(ctx, k); err != nil {
				return err
			}
			s.counters[k] = used
		}
		if used+e.Credits > microOf(b.Credits) {
			return exceeded(b, now, used, e.Credits)
		}
	}
	return nil
}

// ExceededError is the refusal of a call by a ceiling: an ETooManyRequests
// meridian.Error (errors.As finds it) with when the ceiling's window resets (zero for
// GLOBAL), for a Retry-After.
type ExceededError struct {
	Err      *meridian.Error
	ResetsAt time.Time
}

func (e *ExceededError) Error() string { return e.Err.Error() }

// Unwrap returns the meridian.Error.
func (e *ExceededError) Unwrap() error { return e.Err }

// exceeded is the refusal of a call by ceiling b.
func exceeded(b RateLimit, now time.Time, used, cost int64) error {
	_, end := WindowBounds(b.Window, now)
	resets := "it never resets (GLOBAL)"
	if !end.IsZero() {
		resets = "it resets at " + end.Format(time.RFC3339)
	}
	who := "the workspace"
	if b.Scope == ScopeUser {
		who = "each user"
	}
	return &ExceededError{ResetsAt: end, Err: meridian.Errorf(meridian.ETooManyRequests,
		"Credit budget exceeded: the %s ceiling of %s credits for %s has %s credits used and this call costs %s; %s",
		b.Window, fmtCredits(microOf(b.Credits)), who, fmtCredits(used), fmtCredits(cost), resets)}
}

// dayDiv is the first day number at or after ms (ms itself when it is the largest).
func dayDiv(ms int64) int64 {
	if ms == math.MaxInt64 {
		return ms
	}
	return (ms + dayMs - 1) / dayMs
}

func fmtCredits(m int64) string { return fmt.Sprintf("%g", creditsOf(m)) }

// consumed is the consumption of key now: the ledger table plus what is journaled or
// reserved and not yet in it.
func (s *Service) consumed(ctx context.Context, k counterKey) (int64, error) {
	start := time.UnixMilli(k.start)
	_, end := WindowBounds(k.win, start)
	endMs := int64(math.MaxInt64)
	if !end.IsZero() {
		endMs = end.UnixMilli()
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	var sum int64
	err := s.read(ctx, func(db store.SQL) error {
		q := "SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM billing_ledger WHERE ts >= $1 AND ts < $2 AND app <> $3"
		args := []any{k.start, endMs, AppSystem}
		if k.win != WindowHourly && k.win != WindowFourHours {
			// Windows of whole UTC days read the daily rollup (no entry is later than now).
			q = "SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM billing_daily WHERE day >= $1 AND day < $2 AND app <> $3"
			args = []any{k.start / dayMs, dayDiv(endMs), AppSystem}
		}
		if k.user != "" {
			q += " AND user_name = $4"
			args = append(args, k.user)
		}
		return db.QueryRow(ctx, q, args...).Scan(&sum)
	})
	if err != nil {
		return 0, err
	}
	in := func(e Entry) bool {
		return e.Ts >= k.start && e.Ts < endMs && (k.user == "" || e.User == k.user) && capped(e.App)
	}
	s.drainMu.Lock()
	for _, e := range s.pending {
		if in(e) {
			sum += e.Credits
		}
	}
	s.drainMu.Unlock()
	for _, e := range s.live {
		if in(e) {
			sum += e.Credits
		}
	}
	return sum, nil
}

// loadBudgets reads the stored ceilings.
func (s *Service) loadBudgets(ctx context.Context) ([]RateLimit, error) {
	var out []RateLimit
	err := s.read(ctx, func(db store.SQL) error {
		rows, err := db.Query(ctx, "SELECT win, credits, scope FROM billing_budgets ORDER BY position")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b RateLimit
			var c int64
			if err := rows.Scan(&b.Window, &c, &b.Scope); err != nil {
				return err
			}
			b.Credits = creditsOf(c)
			out = append(out, b)
		}
		return rows.Err()
	})
	return out, err
}

// ReloadBudgets reads the ceilings again (another node may have changed them). Errors:
// the store's.
func (s *Service) ReloadBudgets(ctx context.Context) error {
	b, err := s.loadBudgets(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sameBudgets(b, s.budgets) {
		s.budgets, s.counters = b, map[counterKey]int64{}
	}
	return nil
}

func sameBudgets(a, b []RateLimit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// validBudgets checks and normalizes a budget set. Errors: EInvalid.
func validBudgets(in []RateLimit) ([]RateLimit, error) {
	if len(in) == 0 {
		return nil, meridian.Errorf(meridian.EInvalid,
			"budgets must not be empty: send at least one ceiling, or DELETE /api/v1/billing/budgets to remove them all")
	}
	if len(in) > MaxBudgets {
		return nil, meridian.Errorf(meridian.EInvalid, "budgets holds %d ceilings; at most %d are allowed", len(in), MaxBudgets)
	}
	seen := map[[2]string]bool{}
	out := make([]RateLimit, 0, len(in))
	for i, b := range in {
		if !validWindow(b.Window) {
			return nil, meridian.Errorf(meridian.EInvalid, "budgets[%d].window %q is not one of %v", i, b.Window, Windows)
		}
		if b.Scope == "" {
			b.Scope = ScopeTotal
		}
		if b.Scope != ScopeTotal && b.Scope != ScopeUser {
			return nil, meridian.Errorf(meridian.EInvalid, "budgets[%d].scope %q must be total or user", i, b.Scope)
		}
		if math.IsNaN(b.Credits) || b.Credits <= 0 || b.Credits > maxBudgetCredits {
			return nil, meridian.Errorf(meridian.EInvalid, "budgets[%d].credits must be a number above 0 and at most %g", i, float64(maxBudgetCredits))
		}
		b.Credits = creditsOf(microOf(b.Credits))
		k := [2]string{b.Window, b.Scope}
		if seen[k] {
			return nil, meridian.Errorf(meridian.EInvalid, "budgets[%d]: a %s ceiling with scope %s is given twice", i, b.Window, b.Scope)
		}
		seen[k] = true
		out = append(out, b)
	}
	return out, nil
}

func validWindow(w string) bool {
	for _, x := range Windows {
		if x == w {
			return true
		}
	}
	return false
}

// BudgetStatus is a ceiling with its consumption in the current window.
type BudgetStatus struct {
	RateLimit
	// Consumed is the workspace's consumption (scope total), or the caller's
	// (self-service), or the highest user's (scope user, admin view).
	Consumed    float64 `json:"consumed"`
	Remaining   float64 `json:"remaining"`
	WindowStart int64   `json:"windowStart"`
	// ResetsAt is when the window ends; absent for GLOBAL.
	ResetsAt *int64 `json:"resetsAt,omitempty"`
	// Users is each user's consumption in the window (scope user, admin view).
	Users []UserCredits `json:"users,omitempty"`
}

// UserCredits is a user's credits.
type UserCredits struct {
	User    string  `json:"user"`
	Credits float64 `json:"credits"`
}

// Budgets is the answer of the budget endpoints.
type Budgets struct {
	Budgets []BudgetStatus `json:"budgets"`
}

// GetBudgets returns every ceiling with its consumption in the current window.
// Errors: EUnauthorized, EForbidden, and the store's.
func (s *Service) GetBudgets(ctx context.Context, p *meridian.Principal) (Budgets, error) {
	if err := requireAdmin(p); err != nil {
		return Budgets{}, err
	}
	return s.budgetStatus(ctx, "")
}

// MyBudgets returns the ceilings that apply to the caller with the caller's own
// consumption (a total ceiling shows the workspace's). Errors: EUnauthorized, and the
// store's.
func (s *Service) MyBudgets(ctx context.Context, p *meridian.Principal) (Budgets, error) {
	if err := requireUser(p); err != nil {
		return Budgets{}, err
	}
	return s.budgetStatus(ctx, p.Name)
}

func (s *Service) budgetStatus(ctx context.Context, me string) (Budgets, error) {
	s.mu.Lock()
	budgets := append([]RateLimit(nil), s.budgets...)
	s.mu.Unlock()
	now := s.now()
	out := Budgets{Budgets: []BudgetStatus{}}
	for _, b := range budgets {
		start, end := WindowBounds(b.Window, now)
		st := BudgetStatus{RateLimit: b, WindowStart: start.UnixMilli()}
		if !end.IsZero() {
			r := end.UnixMilli()
			st.ResetsAt = &r
		}
		var used int64
		switch {
		case b.Scope == ScopeTotal:
			s.mu.Lock()
			v, err := s.consumed(ctx, keyFor(b, now, ""))
			s.mu.Unlock()
			if err != nil {
				return Budgets{}, err
			}
			used = v
		case me != "":
			s.mu.Lock()
			v, err := s.consumed(ctx, keyFor(b, now, me))
			s.mu.Unlock()
			if err != nil {
				return Budgets{}, err
			}
			used = v
		default:
			users, err := s.creditsByUser(ctx, start.UnixMilli(), endOr(end))
			if err != nil {
				return Budgets{}, err
			}
			st.Users = users
			if len(users) > 0 {
				used = microOf(users[0].Credits)
			}
		}
		st.Consumed = creditsOf(used)
		st.Remaining = math.Max(0, creditsOf(microOf(b.Credits)-used))
		out.Budgets = append(out.Budgets, st)
	}
	return out, nil
}

func endOr(t time.Time) int64 {
	if t.IsZero() {
		return math.MaxInt64
	}
	return t.UnixMilli()
}

// creditsByUser sums each user's credits in [from, to) (the daily rollup for whole
// days, else the ledger), highest first.
func (s *Service) creditsByUser(ctx context.Context, from, to int64) ([]UserCredits, error) {
	groups, err := s.aggregate(ctx, filter{from: from, to: to}, colUser)
	if err != nil {
		return nil, err
	}
	out := make([]UserCredits, 0, len(groups))
	for _, g := range groups {
		out = append(out, UserCredits{User: g.keys[0], Credits: creditsOf(g.credits)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Credits != out[j].Credits {
			return out[i].Credits > out[j].Credits
		}
		return out[i].User < out[j].User
	})
	return out, nil
}

// PutBudgets replaces the whole set of ceilings: one left out is removed. Errors:
// EUnauthorized, EForbidden, EInvalid (an empty list among them), and the store's.
func (s *Service) PutBudgets(ctx context.Context, p *meridian.Principal, in []RateLimit) (Budgets, error) {
	if err := requireAdmin(p); err != nil {
		return Budgets{}, err
	}
	bs, err := validBudgets(in)
	if err != nil {
		return Budgets{}, err
	}
	if err := s.replaceBudgets(ctx, bs); err != nil {
		return Budgets{}, err
	}
	return s.budgetStatus(ctx, "")
}

// DeleteBudgets removes every ceiling, leaving the credit pool. Errors: EUnauthorized,
// EForbidden, and the store's.
func (s *Service) DeleteBudgets(ctx context.Context, p *meridian.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	return s.replaceBudgets(ctx, nil)
}

func (s *Service) replaceBudgets(ctx context.Context, bs []RateLimit) error {
	// The lock is held across the write so no call is admitted against a mix.
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.write(ctx, func(tx store.Tx) error {
		db := tx.SQL()
		if _, err := db.Exec(ctx, "DELETE FROM billing_budgets"); err != nil {
			return err
		}
		for i, b := range bs {
			if _, err := db.Exec(ctx, "INSERT INTO billing_budgets (position, win, credits, scope) VALUES ($1, $2, $3, $4)",
				i, b.Window, microOf(b.Credits), b.Scope); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.budgets, s.counters = bs, map[counterKey]int64{}
	return nil
}
