package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

// Alert rule types.
const (
	RulePoolPercentUsed = "poolPercentUsed"
	RuleDailyCredits    = "dailyCredits"
	RuleDailySpike      = "dailySpike"
	RuleRunCredits      = "runCredits"
	RuleRunwayDays      = "runwayDays"
)

// RuleTypes lists the alert rule types.
var RuleTypes = []string{RulePoolPercentUsed, RuleDailyCredits, RuleDailySpike, RuleRunCredits, RuleRunwayDays}

// Bounds of a credit alert.
const (
	MaxRules        = 20
	MaxThresholds   = 20
	MaxDestinations = 20
	// spikeBaselineDays is how many complete UTC days before today make the spike
	// baseline (their average daily credits).
	spikeBaselineDays = 7
	// runwayDays is how many complete UTC days make the burn rate of the runway.
	runwayBurnDays = 7
	// runLookback bounds how far back conversations are checked by runCredits.
	runLookback = 24 * time.Hour
)

// AlertRule is one rule of the credit alert. Thresholds are numbers whose meaning
// depends on the type:
//   - poolPercentUsed: percent of the cycle's pool used (fires once per cycle each);
//   - dailyCredits: credits spent in the UTC day (once per day each);
//   - dailySpike: credits spent in the UTC day, counted only while the day is a spike,
//     i.e. its spend is at least Multiplier times the average of the 7 previous days
//     and at least MinAbsolute (once per day each; no thresholds means MinAbsolute);
//   - runCredits: credits of one run, i.e. one conversation id (once per conversation
//     each; unattributed spend is no run);
//   - runwayDays: days of pool left at the last 7 days' burn rate; fires when the
//     runway falls to the threshold or below (once per cycle each).
type AlertRule struct {
	Type        string    `json:"type"`
	Thresholds  []float64 `json:"thresholds"`
	Multiplier  float64   `json:"multiplier,omitempty"`
	MinAbsolute float64   `json:"minAbsolute,omitempty"`
}

// CreditAlert is the workspace's credit alert.
type CreditAlert struct {
	Rules        []AlertRule          `json:"rules"`
	Destinations []collab.Destination `json:"destinations"`
	Enabled      *bool                `json:"enabled,omitempty"`
	UpdatedAt    int64                `json:"updatedAt,omitempty"`
	UpdatedBy    string               `json:"updatedBy,omitempty"`
}

func (a CreditAlert) enabled() bool { return a.Enabled == nil || *a.Enabled }

// validAlert checks and normalizes an alert. Errors: EInvalid.
func validAlert(a CreditAlert) (CreditAlert, error) {
	if a.Rules == nil {
		a.Rules = []AlertRule{}
	}
	if a.Destinations == nil {
		a.Destinations = []collab.Destination{}
	}
	if a.Enabled == nil {
		t := true
		a.Enabled = &t
	}
	if len(a.Rules) > MaxRules {
		return a, meridian.Errorf(meridian.EInvalid, "rules holds %d rules; at most %d are allowed", len(a.Rules), MaxRules)
	}
	if len(a.Destinations) > MaxDestinations {
		return a, meridian.Errorf(meridian.EInvalid, "destinations holds %d entries; at most %d are allowed", len(a.Destinations), MaxDestinations)
	}
	for i, r := range a.Rules {
		known := false
		for _, t := range RuleTypes {
			known = known || t == r.Type
		}
		if !known {
			return a, meridian.Errorf(meridian.EInvalid, "rules[%d].type %q is not one of %v", i, r.Type, RuleTypes)
		}
		if len(r.Thresholds) > MaxThresholds {
			return a, meridian.Errorf(meridian.EInvalid, "rules[%d].thresholds holds more than %d values", i, MaxThresholds)
		}
		if len(r.Thresholds) == 0 && r.Type != RuleDailySpike {
			return a, meridian.Errorf(meridian.EInvalid, "rules[%d].thresholds must hold at least one number", i)
		}
		for _, t := range r.Thresholds {
			if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > maxBudgetCredits {
				return a, meridian.Errorf(meridian.EInvalid, "rules[%d].thresholds must be numbers from 0 to %g", i, float64(maxBudgetCredits))
			}
		}
		if r.Type == RuleDailySpike {
			if math.IsNaN(r.Multiplier) || r.Multiplier <= 0 || r.Multiplier > 1000 {
				return a, meridian.Errorf(meridian.EInvalid, "rules[%d].multiplier must be above 0 and at most 1000 for dailySpike", i)
			}
			if math.IsNaN(r.MinAbsolute) || r.MinAbsolute < 0 || r.MinAbsolute > maxBudgetCredits {
				return a, meridian.Errorf(meridian.EInvalid, "rules[%d].minAbsolute must be 0 or more for dailySpike", i)
			}
		} else if r.Multiplier != 0 || r.MinAbsolute != 0 {
			return a, meridian.Errorf(meridian.EInvalid, "rules[%d]: multiplier and minAbsolute apply to dailySpike only", i)
		}
		if r.Thresholds == nil {
			a.Rules[i].Thresholds = []float64{}
		}
	}
	for i, d := range a.Destinations {
		switch d.Type {
		case collab.DestinationWebhook:
			u, err := url.Parse(d.Config.Endpoint)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(d.Config.Endpoint) > 2048 {
				return a, meridian.Errorf(meridian.EInvalid, "destinations[%d].config.endpoint must be an http or https URL", i)
			}
		case collab.DestinationEmail:
			if len(d.Config.Receivers) == 0 || len(d.Config.Receivers) > 100 {
				return a, meridian.Errorf(meridian.EInvalid, "destinations[%d].config.receivers must hold 1 to 100 addresses", i)
			}
			for _, r := range d.Config.Receivers {
				if !strings.Contains(r, "@") || len(r) > 320 {
					return a, meridian.Errorf(meridian.EInvalid, "destinations[%d].config.receivers: %q is not an e-mail address", i, r)
				}
			}
		default:
			return a, meridian.Errorf(meridian.EInvalid, "destinations[%d].type must be %s or %s", i, collab.DestinationWebhook, collab.DestinationEmail)
		}
		if d.Timeout < 0 || d.Timeout > 300 {
			return a, meridian.Errorf(meridian.EInvalid, "destinations[%d].timeout must be 0 to 300 seconds", i)
		}
	}
	return a, nil
}

// GetCreditAlert returns the alert, secrets masked. Errors: EUnauthorized, EForbidden,
// ENotFound (none configured), and the store's.
func (s *Service) GetCreditAlert(ctx context.Context, p *meridian.Principal) (CreditAlert, error) {
	if err := requireAdmin(p); err != nil {
		return CreditAlert{}, err
	}
	a, ok, err := s.loadAlert(ctx)
	if err != nil {
		return CreditAlert{}, err
	}
	if !ok {
		return CreditAlert{}, meridian.Errorf(meridian.ENotFound, "No credit alert is configured")
	}
	return masked(a), nil
}

// PutCreditAlert creates or replaces the alert; a webhook secretKey sent back masked
// keeps the stored one. Fired marks stay, so an unchanged rule does not fire again.
// Errors: EUnauthorized, EForbidden, EInvalid, and the store's.
func (s *Service) PutCreditAlert(ctx context.Context, p *meridian.Principal, a CreditAlert) (CreditAlert, error) {
	if err := requireAdmin(p); err != nil {
		return CreditAlert{}, err
	}
	a, err := validAlert(a)
	if err != nil {
		return CreditAlert{}, err
	}
	a.UpdatedAt, a.UpdatedBy = s.now().UnixMilli(), p.Name
	err = s.write(ctx, func(tx store.Tx) error {
		db := tx.SQL()
		prev, _, err := readAlert(ctx, db)
		if err != nil {
			return err
		}
		stored := a
		stored.Destinations = append([]collab.Destination(nil), a.Destinations...)
		for i, d := range stored.Destinations {
			if d.Config.SecretKey == store.Mask {
				d.Config.SecretKey = ""
				for _, old := range prev.Destinations {
					if old.Type == d.Type && old.Config.Endpoint == d.Config.Endpoint {
						d.Config.SecretKey = old.Config.SecretKey
					}
				}
			} else if d.Config.SecretKey != "" && s.sealer != nil {
				if d.Config.SecretKey, err = s.sealer.Seal(d.Config.SecretKey); err != nil {
					return err
				}
			}
			stored.Destinations[i] = d
		}
		b, _ := json.Marshal(stored)
		_, err = db.Exec(ctx, `INSERT INTO billing_alert (id, doc, updated_at) VALUES (1, $1, $2)
			ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`, string(b), a.UpdatedAt)
		return err
	})
	if err != nil {
		return CreditAlert{}, err
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return masked(a), nil
}

func masked(a CreditAlert) CreditAlert {
	a.Destinations = append([]collab.Destination(nil), a.Destinations...)
	for i := range a.Destinations {
		if a.Destinations[i].Config.SecretKey != "" {
			a.Destinations[i].Config.SecretKey = store.Mask
		}
	}
	return a
}

func readAlert(ctx context.Context, db store.SQL) (CreditAlert, bool, error) {
	var doc string
	err := db.QueryRow(ctx, "SELECT doc FROM billing_alert WHERE id = 1").Scan(&doc)
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return CreditAlert{}, false, nil
	}
	if err != nil {
		return CreditAlert{}, false, err
	}
	var a CreditAlert
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		return CreditAlert{}, false, err
	}
	return a, true, nil
}

func (s *Service) loadAlert(ctx context.Context) (CreditAlert, bool, error) {
	var a CreditAlert
	var ok bool
	err := s.read(ctx, func(db store.SQL) error {
		var err error
		a, ok, err = readAlert(ctx, db)
		return err
	})
	return a, ok, err
}

// Firing is one threshold crossed: what the notification says.
type Firing struct {
	Alert     string             `json:"alert"`
	Rule      string             `json:"rule"`
	Threshold float64            `json:"threshold"`
	Window    string             `json:"window"`
	Start     int64              `json:"windowStart"`
	End       int64              `json:"windowEnd,omitempty"`
	Run       string             `json:"conversationId,omitempty"`
	Figures   map[string]float64 `json:"figures"`
	Message   string             `json:"message"`
	FiredAt   int64              `json:"firedAt"`
}

// EvaluateAlerts checks every rule of the enabled alert against the ledger and fires
// each threshold newly crossed: its mark is stored first (so a restart never fires it
// twice), then the message goes to every enabled destination. It returns what fired.
// Errors: the store's.
func (s *Service) EvaluateAlerts(ctx context.Context) ([]Firing, error) {
	s.alertMu.Lock()
	defer s.alertMu.Unlock()
	a, ok, err := s.loadAlert(ctx)
	if err != nil || !ok || !a.enabled() || len(a.Rules) == 0 {
		return nil, err
	}
	if err := s.Drain(ctx); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	cs, ce := s.plan.Cycle(now)
	day, _ := WindowBounds(WindowDaily, now)
	var (
		cycleUsed, today int64
		days             []int64 // credits of the spikeBaselineDays days before today, oldest first
		runs             map[string]int64
	)
	err = s.read(ctx, func(db store.SQL) error {
		var err error
		if cycleUsed, err = sumCredits(ctx, db, cs.UnixMilli(), ce.UnixMilli()); err != nil {
			return err
		}
		if today, err = sumCredits(ctx, db, day.UnixMilli(), day.AddDate(0, 0, 1).UnixMilli()); err != nil {
			return err
		}
		for i := spikeBaselineDays; i >= 1; i-- {
			d := day.AddDate(0, 0, -i)
			v, err := sumCredits(ctx, db, d.UnixMilli(), d.AddDate(0, 0, 1).UnixMilli())
			if err != nil {
				return err
			}
			days = append(days, v)
		}
		runs, err = runCredits(ctx, db, now.Add(-runLookback).UnixMilli())
		return err
	})
	if err != nil {
		return nil, err
	}
	pool := microOf(s.plan.CreditsPerCycle)
	var baseline, burn float64
	for _, v := range days {
		baseline += creditsOf(v)
	}
	baseline /= float64(len(days))
	for _, v := range days[len(days)-runwayBurnDays:] {
		burn += creditsOf(v)
	}
	burn /= runwayBurnDays
	remaining := math.Max(0, creditsOf(pool-cycleUsed))
	var fired []Firing
	fire := func(r AlertRule, key string, th float64, window string, start, end time.Time, run string, fig map[string]float64, msg string) error {
		f := Firing{Alert: "creditAlert", Rule: r.Type, Threshold: th, Window: window, Start: start.UnixMilli(), Run: run,
			Figures: fig, Message: msg, FiredAt: now.UnixMilli()}
		if !end.IsZero() {
			f.End = end.UnixMilli()
		}
		ok, err := s.mark(ctx, key, th, start.UnixMilli(), now.UnixMilli())
		if err != nil || !ok {
			return err
		}
		s.notify(ctx, a, f)
		fired = append(fired, f)
		return nil
	}
	for _, r := range a.Rules {
		ths := append([]float64(nil), r.Thresholds...)
		sort.Float64s(ths)
		switch r.Type {
		case RulePoolPercentUsed:
			pct := 100 * creditsOf(cycleUsed) / s.plan.CreditsPerCycle
			for _, th := range ths {
				if pct >= th {
					if err := fire(r, r.Type, th, "cycle", cs, ce, "", map[string]float64{"percentUsed": round2(pct),
						"creditsUsed": creditsOf(cycleUsed), "creditsPerCycle": s.plan.CreditsPerCycle, "remaining": remaining},
						fmt.Sprintf("The credit pool is %.2f%% used (threshold %g%%): %g of %g credits this cycle", pct, th, creditsOf(cycleUsed), s.plan.CreditsPerCycle)); err != nil {
						return fired, err
					}
				}
			}
		case RuleDailyCredits:
			for _, th := range ths {
				if creditsOf(today) >= th {
					if err := fire(r, r.Type, th, "day", day, day.AddDate(0, 0, 1), "", map[string]float64{"creditsToday": creditsOf(today)},
						fmt.Sprintf("%g credits were spent today (UTC), at or above the threshold of %g", creditsOf(today), th)); err != nil {
						return fired, err
					}
				}
			}
		case RuleDailySpike:
			t := creditsOf(today)
			if t < r.MinAbsolute || t < r.Multiplier*baseline {
				continue
			}
			if len(ths) == 0 {
				ths = []float64{r.MinAbsolute}
			}
			key := fmt.Sprintf("%s:%g:%g", r.Type, r.Multiplier, r.MinAbsolute)
			for _, th := range ths {
				if t >= th {
					if err := fire(r, key, th, "day", day, day.AddDate(0, 0, 1), "", map[string]float64{"creditsToday": t,
						"baselineDailyAverage": round2(baseline), "multiplier": r.Multiplier, "minAbsolute": r.MinAbsolute},
						fmt.Sprintf("Spend spike: %g credits today (UTC) against a %.2f daily average over the previous %d days (multiplier %g)",
							t, baseline, spikeBaselineDays, r.Multiplier)); err != nil {
						return fired, err
					}
				}
			}
		case RuleRunCredits:
			ids := make([]string, 0, len(runs))
			for id := range runs {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				c := creditsOf(runs[id])
				for _, th := range ths {
					if c >= th {
						if err := fire(r, r.Type+":"+id, th, "run", time.UnixMilli(0), time.Time{}, id, map[string]float64{"runCredits": c},
							fmt.Sprintf("Conversation %s has spent %g credits, at or above the threshold of %g", id, c, th)); err != nil {
							return fired, err
						}
					}
				}
			}
		case RuleRunwayDays:
			if burn <= 0 {
				continue
			}
			runway := remaining / burn
			for _, th := range ths {
				if runway <= th {
					if err := fire(r, r.Type, th, "cycle", cs, ce, "", map[string]float64{"runwayDays": round2(runway),
						"remaining": remaining, "burnPerDay": round2(burn)},
						fmt.Sprintf("At %.2f credits a day the %g remaining credits last %.2f days (threshold %g days)", burn, remaining, runway, th)); err != nil {
						return fired, err
					}
				}
			}
		}
	}
	return fired, nil
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// mark stores a fired mark; false when it was already there.
func (s *Service) mark(ctx context.Context, key string, th float64, start, now int64) (bool, error) {
	var n int64
	err := s.write(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.SQL().Exec(ctx, `INSERT INTO billing_alert_fired (rule_key, threshold, window_start, fired_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (rule_key, threshold, window_start) DO NOTHING`,
			key, strconv.FormatFloat(th, 'g', -1, 64), start, now)
		return err
	})
	return n == 1, err
}

// notify sends a firing to every enabled destination; failures are logged.
func (s *Service) notify(ctx context.Context, a CreditAlert, f Firing) {
	if s.notifier == nil {
		s.log.Warn("billing: a credit alert fired with no notifier configured", "rule", f.Rule, "threshold", f.Threshold)
		return
	}
	msg := collab.Message{Subject: "Meridian credit alert: " + f.Rule, Text: f.Message, Body: f}
	for _, d := range a.Destinations {
		if d.Enabled != nil && !*d.Enabled {
			continue
		}
		if d.Config.SecretKey != "" && s.sealer != nil {
			if plain, err := s.sealer.Open(d.Config.SecretKey); err == nil {
				d.Config.SecretKey = plain
			}
		}
		if _, err := s.notifier.Notify(ctx, d, msg); err != nil {
			s.log.Warn("billing: credit alert delivery failed", "type", d.Type, "err", err)
		}
	}
}

func sumCredits(ctx context.Context, db store.SQL, from, to int64) (int64, error) {
	var v int64
	err := db.QueryRow(ctx, "SELECT CAST(COALESCE(SUM(credits), 0) AS BIGINT) FROM billing_ledger WHERE ts >= $1 AND ts < $2", from, to).Scan(&v)
	return v, err
}

// runCredits sums, over all time, the credits of each conversation active since from.
func runCredits(ctx context.Context, db store.SQL, from int64) (map[string]int64, error) {
	rows, err := db.Query(ctx, `SELECT conversation, CAST(SUM(credits) AS BIGINT) FROM billing_ledger
		WHERE conversation IN (SELECT DISTINCT conversation FROM billing_ledger WHERE ts >= $1 AND conversation <> $2)
		GROUP BY conversation`, from, Unattributed)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var c int64
		if err := rows.Scan(&id, &c); err != nil {
			return nil, err
		}
		out[id] = c
	}
	return out, rows.Err()
}
