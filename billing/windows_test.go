package billing_test

import (
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/billing"
)

func TestWindowBoundsAreUTCAndDocumented(t *testing.T) {
	at := time.Date(2026, 11, 18, 10, 30, 15, 0, time.UTC) // a Wednesday
	d := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		win        string
		at         time.Time
		start, end string
	}{
		{billing.WindowHourly, at, "2026-11-18T10:00:00Z", "2026-11-18T11:00:00Z"},
		{billing.WindowHourly, d("2026-11-18T10:59:59Z"), "2026-11-18T10:00:00Z", "2026-11-18T11:00:00Z"},
		{billing.WindowHourly, d("2026-11-18T11:00:00Z"), "2026-11-18T11:00:00Z", "2026-11-18T12:00:00Z"},
		{billing.WindowFourHours, at, "2026-11-18T08:00:00Z", "2026-11-18T12:00:00Z"},
		{billing.WindowFourHours, d("2026-11-18T23:59:00Z"), "2026-11-18T20:00:00Z", "2026-11-19T00:00:00Z"},
		{billing.WindowDaily, at, "2026-11-18T00:00:00Z", "2026-11-19T00:00:00Z"},
		{billing.WindowWeekly, at, "2026-11-16T00:00:00Z", "2026-11-23T00:00:00Z"},
		{billing.WindowWeekly, d("2026-11-22T23:59:59Z"), "2026-11-16T00:00:00Z", "2026-11-23T00:00:00Z"}, // Sunday
		{billing.WindowWeekly, d("2026-11-23T00:00:00Z"), "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"}, // Monday
		{billing.WindowMonthly, at, "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"},
		{billing.WindowYearly, at, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		// Another zone's wall clock does not move the UTC window.
		{billing.WindowDaily, time.Date(2026, 11, 19, 1, 0, 0, 0, time.FixedZone("CET", 3600)), "2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z"},
	}
	for _, tc := range tests {
		s, e := billing.WindowBounds(tc.win, tc.at)
		if !s.Equal(d(tc.start)) || !e.Equal(d(tc.end)) {
			t.Errorf("%s at %s = [%s, %s), want [%s, %s)", tc.win, tc.at, s, e, tc.start, tc.end)
		}
	}
	s, e := billing.WindowBounds(billing.WindowGlobal, at)
	if s.UnixMilli() != 0 || !e.IsZero() {
		t.Errorf("GLOBAL = [%s, %s), want [epoch, never)", s, e)
	}
}

func TestPlanCycles(t *testing.T) {
	p := billing.Plan{CreditsPerCycle: 1, CycleStart: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC).UnixMilli(), CycleMonths: 3}
	tests := []struct{ at, start, end time.Time }{
		{time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 15, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 4, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 1, 14, 23, 0, 0, 0, time.UTC), time.Date(2025, 10, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)},
		{time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 10, 15, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		s, e := p.Cycle(tc.at)
		if !s.Equal(tc.start) || !e.Equal(tc.end) {
			t.Errorf("cycle of %s = [%s, %s), want [%s, %s)", tc.at, s, e, tc.start, tc.end)
		}
	}
}

func TestParsePricesKeepsDefaultsAndRefusesBadTables(t *testing.T) {
	p, err := billing.ParsePrices([]byte(`{"features":{"semanticSearch":{"unit":"query","credits":5}},"actions":{"get_entity_details":0.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Features["semanticSearch"].Credits != 5 || p.Features["mcpToolCalls"].Credits != 1 || p.Actions["get_entity_details"] != 0.5 {
		t.Errorf("parsed %+v", p)
	}
	for _, bad := range []string{`{"features":{"x":{"unit":"call","credits":-1}}}`, `{"nope":1}`, `{"toolFeatures":{"t":"unknownFeature"}}`, `[`} {
		if _, err := billing.ParsePrices([]byte(bad)); err == nil {
			t.Errorf("ParsePrices(%s) accepted it", bad)
		}
	}
}
