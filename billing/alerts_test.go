package billing_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/billing"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

func testAlertCRUD(t *testing.T, f *fixture) {
	_, err := f.svc.GetCreditAlert(f.ctx, admin)
	wantCode(t, err, meridian.ENotFound)
	hook := collab.Destination{Type: collab.DestinationWebhook, Config: collab.DestinationConfig{Endpoint: "https://hooks.example.com/x", SecretKey: "s3cret"}}
	for _, bad := range []billing.CreditAlert{
		{Rules: []billing.AlertRule{{Type: "monthlyCredits", Thresholds: []float64{1}}}},
		{Rules: []billing.AlertRule{{Type: billing.RuleDailyCredits}}},
		{Rules: []billing.AlertRule{{Type: billing.RuleDailySpike}}},
		{Rules: []billing.AlertRule{{Type: billing.RuleDailyCredits, Thresholds: []float64{-1}}}},
		{Rules: []billing.AlertRule{{Type: billing.RuleDailyCredits, Thresholds: []float64{1}, Multiplier: 2}}},
		{Destinations: []collab.Destination{{Type: collab.DestinationWebhook, Config: collab.DestinationConfig{Endpoint: "ftp://x"}}}},
		{Destinations: []collab.Destination{{Type: collab.DestinationEmail}}},
		{Destinations: []collab.Destination{{Type: "Slack"}}},
	} {
		_, err := f.svc.PutCreditAlert(f.ctx, admin, bad)
		wantCode(t, err, meridian.EInvalid)
	}
	got, err := f.svc.PutCreditAlert(f.ctx, admin, billing.CreditAlert{
		Rules:        []billing.AlertRule{{Type: billing.RulePoolPercentUsed, Thresholds: []float64{80, 50}}},
		Destinations: []collab.Destination{hook}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled == nil || !*got.Enabled || got.Destinations[0].Config.SecretKey != store.Mask || got.UpdatedBy != "admin" {
		t.Errorf("stored alert = %+v", got)
	}
	// Sent back masked, the secret is kept.
	hook.Config.SecretKey = store.Mask
	if _, err := f.svc.PutCreditAlert(f.ctx, admin, billing.CreditAlert{Destinations: []collab.Destination{hook}}); err != nil {
		t.Fatal(err)
	}
	got, err = f.svc.GetCreditAlert(f.ctx, admin)
	if err != nil || got.Destinations[0].Config.SecretKey != store.Mask || len(got.Rules) != 0 {
		t.Errorf("alert after a masked PUT = %+v, %v", got, err)
	}
}

func testAlertsOnce(t *testing.T, f *fixture) {
	hook, sink := newWebhook(t), newSMTPSink(t)
	f.notifier.smtpAddr = sink.ln.Addr().String()
	_, err := f.svc.PutCreditAlert(f.ctx, admin, billing.CreditAlert{
		Rules: []billing.AlertRule{{Type: billing.RulePoolPercentUsed, Thresholds: []float64{50, 80}},
			{Type: billing.RuleDailyCredits, Thresholds: []float64{5, 10}}},
		Destinations: []collab.Destination{
			{Type: collab.DestinationWebhook, Config: collab.DestinationConfig{Endpoint: hook.URL}},
			{Type: collab.DestinationEmail, Config: collab.DestinationConfig{Receivers: []string{"ops@example.com"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := as(alice, billing.AppMCP, "c 1", "")
	evaluate := func(want ...string) {
		t.Helper()
		fired, err := f.svc.EvaluateAlerts(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range fired {
			got = append(got, x.Rule+"@"+time.UnixMilli(x.Start).UTC().Format(time.DateOnly)+"/"+ftoa(x.Threshold))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	f.svc.Record(ctx, billing.FeatureMCPToolCalls, "x", 6, nil)
	evaluate("dailyCredits@2026-11-18/5")
	evaluate()
	f.svc.Record(ctx, billing.FeatureMCPToolCalls, "x", 5, nil)
	evaluate("dailyCredits@2026-11-18/10")
	// A restart does not fire again.
	f.svc = f.open(nil)
	evaluate()
	// The next day: the pool crosses 50%, and the day's thresholds fire anew.
	f.clock.Add(24 * time.Hour)
	f.svc.Record(ctx, billing.FeatureMCPToolCalls, "x", 40, nil)
	evaluate("poolPercentUsed@2026-11-01/50", "dailyCredits@2026-11-19/5", "dailyCredits@2026-11-19/10")
	evaluate()
	bodies := hook.got()
	if len(bodies) != 5 {
		t.Fatalf("webhook got %d bodies, want 5", len(bodies))
	}
	pool := bodies[2]
	fig, _ := pool["figures"].(map[string]any)
	if pool["rule"] != billing.RulePoolPercentUsed || pool["threshold"] != 50.0 || fig["percentUsed"] != 51.0 || fig["creditsUsed"] != 51.0 ||
		!strings.Contains(pool["message"].(string), "51.00%") {
		t.Errorf("pool firing = %v", pool)
	}
	mails := sink.got()
	if len(mails) != 5 || mails[0].to[0] != "ops@example.com" || !strings.Contains(mails[0].data, "Subject: Meridian credit alert: dailyCredits") {
		t.Errorf("mails = %+v", mails)
	}
	// Disabled, nothing fires.
	off := false
	if _, err := f.svc.PutCreditAlert(f.ctx, admin, billing.CreditAlert{Enabled: &off,
		Rules: []billing.AlertRule{{Type: billing.RulePoolPercentUsed, Thresholds: []float64{1}}}}); err != nil {
		t.Fatal(err)
	}
	evaluate()
}

// testAlertsAfterQuickDrains: Run evaluates spend drained less than a second after its
// last evaluation, a second later, though nothing more is drained.
func testAlertsAfterQuickDrains(t *testing.T, f *fixture) {
	svc, err := billing.New(f.ctx, billing.Config{Driver: f.db, JournalDir: t.TempDir(), Plan: plan, Notifier: f.notifier,
		Now: f.clock.Now, FlushInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	hook := collab.Destination{Type: collab.DestinationWebhook, Config: collab.DestinationConfig{Endpoint: newWebhook(t).URL}}
	if _, err := svc.PutCreditAlert(f.ctx, admin, billing.CreditAlert{
		Rules:        []billing.AlertRule{{Type: billing.RuleDailyCredits, Thresholds: []float64{5}}},
		Destinations: []collab.Destination{hook}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	spend := as(alice, billing.AppMCP, "c 1", "")
	// The alert's change and the first spend are each evaluated at once (the second
	// starts the second), below the threshold; the third spend crosses it.
	for range 3 {
		svc.Record(spend, billing.FeatureMCPToolCalls, "x", 2, nil)
		time.Sleep(200 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.notifier.count() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the threshold crossed by the third spend did not fire within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func testAlertRules(t *testing.T, f *fixture) {
	// Eight credits on each of the 7 days before today: the baseline and the burn rate.
	ctx := as(alice, billing.AppMCP, "c 1", "")
	for i := 7; i >= 1; i-- {
		f.clock.Set(start.AddDate(0, 0, -i))
		f.svc.Record(ctx, billing.FeatureMCPToolCalls, "x", 8, nil)
	}
	f.clock.Set(start)
	_, err := f.svc.PutCreditAlert(f.ctx, admin, billing.CreditAlert{Rules: []billing.AlertRule{
		{Type: billing.RuleDailySpike, Multiplier: 3, MinAbsolute: 10},
		{Type: billing.RuleRunCredits, Thresholds: []float64{5}},
		{Type: billing.RuleRunwayDays, Thresholds: []float64{3}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	evaluate := func() map[string]billing.Firing {
		t.Helper()
		fired, err := f.svc.EvaluateAlerts(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]billing.Firing{}
		for _, x := range fired {
			out[x.Rule] = x
		}
		return out
	}
	// 56 used: 44 left at 8 a day is 5.5 days; today's 0 is no spike.
	if got := evaluate(); len(got) != 0 {
		t.Fatalf("fired %v before any spike", got)
	}
	f.svc.Record(ctx, billing.FeatureMCPToolCalls, "x", 19, nil)                                      // unattributed: no run
	f.svc.Record(as(alice, billing.AppMCP, "c 1", "run-1"), billing.FeatureMCPToolCalls, "x", 6, nil) // 25 today
	f.svc.Record(as(bob, billing.AppMCP, "c 1", "run-2"), billing.FeatureMCPToolCalls, "x", 3, nil)   // 28 today
	got := evaluate()
	spike, run, runway := got[billing.RuleDailySpike], got[billing.RuleRunCredits], got[billing.RuleRunwayDays]
	if len(got) != 3 || spike.Threshold != 10 || spike.Figures["creditsToday"] != 28 || spike.Figures["baselineDailyAverage"] != 8 {
		t.Errorf("spike = %+v (all %v)", spike, got)
	}
	if run.Run != "run-1" || run.Figures["runCredits"] != 6 {
		t.Errorf("run = %+v", run)
	}
	// 84 used, 16 left at 8 a day: 2 days.
	if runway.Figures["runwayDays"] != 2 || runway.Figures["remaining"] != 16 {
		t.Errorf("runway = %+v", runway)
	}
	if again := evaluate(); len(again) != 0 {
		t.Errorf("fired again: %v", again)
	}
}
