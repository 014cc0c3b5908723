package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Grouping columns of the ledger a report may group by: a fixed allow-list, never
// input.
const (
	colApp          = "app"
	colAction       = "action"
	colFeature      = "feature"
	colSource       = "source"
	colClient       = "client"
	colUser         = "user_name"
	colAgent        = "agent"
	colConversation = "conversation"
	colDay          = "CAST(ts / 86400000 AS TEXT)"
	// colDailyDay is colDay on the daily rollup.
	colDailyDay = "CAST(day AS TEXT)"
)

const dayMs = 86400000

// filter selects ledger rows: [from, to), and optionally one app, one user, and
// tool calls only (no embeddings computed inside them).
type filter struct {
	from, to int64
	app      string
	user     string
	calls    bool
}

// agg is one group of a report.
type agg struct {
	keys                            []string
	units, credits, count, failures int64
}

// where renders f as conditions and arguments on the ledger.
func (f filter) where() (string, []any) {
	to := f.to
	if to <= 0 {
		to = math.MaxInt64
	}
	return f.rest(" WHERE ts >= $1 AND ts < $2", []any{f.from, to})
}

// whereDaily renders f on the daily rollup: the days [from, to) touches.
func (f filter) whereDaily() (string, []any) {
	to := int64(math.MaxInt64)
	if f.to > 0 {
		to = (f.to + dayMs - 1) / dayMs
	}
	return f.rest(" WHERE day >= $1 AND day < $2", []any{f.from / dayMs, to})
}

// rest adds the app, user and calls conditions.
func (f filter) rest(w string, args []any) (string, []any) {
	if f.app != "" {
		args = append(args, f.app)
		w += fmt.Sprintf(" AND app = $%d", len(args))
	}
	if f.user != "" {
		args = append(args, f.user)
		w += fmt.Sprintf(" AND user_name = $%d", len(args))
	}
	if f.calls {
		args = append(args, FeatureEmbeddings)
		w += fmt.Sprintf(" AND feature <> $%d", len(args))
	}
	return w, args
}

// daily reports whether the rollup answers f grouped by cols: whole UTC days (an end
// past now counts as the end of today: no entry is later than now) and no grouping
// the rollup lacks (conversation).
func (f filter) daily(now int64, cols []string) bool {
	if f.from%dayMs != 0 || (f.to > 0 && f.to%dayMs != 0 && f.to <= now) {
		return false
	}
	for _, c := range cols {
		if c == colConversation {
			return false
		}
	}
	return true
}

// Sums of a grouping, on the ledger and on the rollup.
const (
	ledgerSums = "CAST(COALESCE(SUM(units), 0) AS BIGINT), CAST(COALESCE(SUM(credits), 0) AS BIGINT), COUNT(*), CAST(COALESCE(SUM(failed), 0) AS BIGINT)"
	dailySums  = "CAST(COALESCE(SUM(units), 0) AS BIGINT), CAST(COALESCE(SUM(credits), 0) AS BIGINT), CAST(COALESCE(SUM(actions), 0) AS BIGINT), CAST(COALESCE(SUM(failures), 0) AS BIGINT)"
)

// aggregate groups the rows f selects by cols (from the allow-list above), from the
// daily rollup when it can answer, else from the ledger.
func (s *Service) aggregate(ctx context.Context, f filter, cols ...string) ([]agg, error) {
	if err := s.Drain(ctx); err != nil {
		return nil, err
	}
	w, args := f.where()
	from, sums := " FROM billing_ledger", ledgerSums
	group := append([]string(nil), cols...)
	if f.daily(s.now().UnixMilli(), cols) {
		w, args = f.whereDaily()
		from, sums = " FROM billing_daily", dailySums
		for i, c := range group {
			if c == colDay {
				group[i] = colDailyDay
			}
		}
	}
	sel := strings.Join(group, ", ")
	q := "SELECT "
	if sel != "" {
		q += sel + ", "
	}
	q += sums + from + w
	if sel != "" {
		q += " GROUP BY " + sel
	}
	var out []agg
	err := s.read(ctx, func(db store.SQL) error {
		rows, err := db.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a := agg{keys: make([]string, len(cols))}
			dest := make([]any, 0, len(cols)+4)
			for i := range a.keys {
				dest = append(dest, &a.keys[i])
			}
			dest = append(dest, &a.units, &a.credits, &a.count, &a.failures)
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if sel == "" && a.count == 0 {
				continue
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	return out, err
}

// total is the one group of f with no grouping.
func (s *Service) total(ctx context.Context, f filter) (agg, error) {
	a, err := s.aggregate(ctx, f)
	if err != nil || len(a) == 0 {
		return agg{}, err
	}
	return a[0], nil
}

// each scans every row f selects with the columns each report needs beyond the
// groups: ts, user, conversation, action, app, client, failed, latency, credits,
// entities.
func (s *Service) each(ctx context.Context, f filter, onlyEntities bool, fn func(e Entry) error) error {
	if err := s.Drain(ctx); err != nil {
		return err
	}
	w, args := f.where()
	if onlyEntities {
		w += " AND entities <> '[]'"
	}
	return s.read(ctx, func(db store.SQL) error {
		rows, err := db.Query(ctx, `SELECT ts, user_name, is_bot, conversation, action, feature, app, source, client, failed,
			latency_us, units, credits, entities FROM billing_ledger`+w, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Entry
			var bot, failed int64
			var ents string
			if err := rows.Scan(&e.Ts, &e.User, &bot, &e.Conversation, &e.Action, &e.Feature, &e.App, &e.Source, &e.Client,
				&failed, &e.LatencyUs, &e.Units, &e.Credits, &ents); err != nil {
				return err
			}
			e.IsBot, e.Failed = bot != 0, failed != 0
			if onlyEntities {
				_ = json.Unmarshal([]byte(ents), &e.Entities)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// Range is a time range of a report, epoch milliseconds, [startTs, endTs).
type Range struct {
	StartTs int64 `json:"startTs"`
	EndTs   int64 `json:"endTs"`
}

// maxRangeDays bounds the ranges of the reports with a per-day series.
const maxRangeDays = 366

// rangeOf resolves startTs and endTs (0 when absent): absent start is the current
// cycle's start, absent end is now (inclusive of this millisecond). Errors: EInvalid.
func (s *Service) rangeOf(startTs, endTs int64) (Range, error) {
	now := s.now()
	if startTs < 0 || endTs < 0 {
		return Range{}, meridian.Errorf(meridian.EInvalid, "startTs and endTs are epoch milliseconds, 0 or more")
	}
	if startTs == 0 {
		cs, _ := s.plan.Cycle(now)
		startTs = cs.UnixMilli()
	}
	if endTs == 0 {
		endTs = now.UnixMilli() + 1
	}
	if endTs < startTs {
		return Range{}, meridian.Errorf(meridian.EInvalid, "endTs %d is before startTs %d", endTs, startTs)
	}
	return Range{StartTs: startTs, EndTs: endTs}, nil
}

// cycleRange is the current billing cycle up to now.
func (s *Service) cycleRange() (Range, time.Time, time.Time) {
	now := s.now()
	cs, ce := s.plan.Cycle(now)
	return Range{StartTs: cs.UnixMilli(), EndTs: now.UnixMilli() + 1}, cs, ce
}

// date is the ISO date (UTC) of a day number (ms / 86400000).
func date(day int64) string { return time.UnixMilli(day * dayMs).UTC().Format(time.DateOnly) }

// dayOf is the day number of a timestamp.
func dayOf(ts int64) int64 { return ts / dayMs }

// sortAggs orders groups by credits, then count, then keys, highest first.
func sortAggs(a []agg) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].credits != a[j].credits {
			return a[i].credits > a[j].credits
		}
		if a[i].count != a[j].count {
			return a[i].count > a[j].count
		}
		return strings.Join(a[i].keys, "\x00") < strings.Join(a[j].keys, "\x00")
	})
}

// percentile is the p-th percentile (0..1) of sorted values, nearest rank.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

// maxLatencySamples bounds the latencies kept for one percentile: past it, a uniform
// reservoir sample of that size stands for them all (memory stays bounded however
// large the window).
const maxLatencySamples = 100_000

// reservoir is a uniform sample of at most maxLatencySamples values (Algorithm R, with
// a fixed-seed generator so a report is repeatable).
type reservoir struct {
	vals []int64
	seen int64
	rng  uint64
}

func (r *reservoir) add(v int64) {
	r.seen++
	if len(r.vals) < maxLatencySamples {
		r.vals = append(r.vals, v)
		return
	}
	r.rng = r.rng*6364136223846793005 + 1442695040888963407
	if j := int64(r.rng>>1) % r.seen; j < maxLatencySamples {
		r.vals[j] = v
	}
}

// percentiles returns the p50 and p95 of the sample.
func (r *reservoir) percentiles() (int64, int64) {
	sort.Slice(r.vals, func(i, j int) bool { return r.vals[i] < r.vals[j] })
	return percentile(r.vals, 0.5), percentile(r.vals, 0.95)
}
