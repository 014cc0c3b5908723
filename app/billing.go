package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian/billing"
)

// BillingConfig configures the credit ledger: the plan and the price table.
type BillingConfig struct {
	// Plan is the credit pool; its zero value is billing.DefaultPlan.
	Plan billing.Plan
	// Prices is the price table; nil means billing.DefaultPrices.
	Prices *billing.PriceTable
}

// BillingFromEnv reads the billing configuration from the environment:
// MERIDIAN_BILLING_CREDITS (credits per cycle), MERIDIAN_BILLING_CYCLE_START (a date,
// YYYY-MM-DD, UTC, on which some cycle starts), MERIDIAN_BILLING_CYCLE_MONTHS (cycle
// length, default 1), MERIDIAN_BILLING_PLAN (plan name) and MERIDIAN_BILLING_PRICES (a
// JSON price table file; features it leaves out keep their default price).
func BillingFromEnv() (BillingConfig, error) {
	var c BillingConfig
	c.Plan.Name = os.Getenv("MERIDIAN_BILLING_PLAN")
	if v := strings.TrimSpace(os.Getenv("MERIDIAN_BILLING_CREDITS")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return c, fmt.Errorf("MERIDIAN_BILLING_CREDITS %q must be a number above 0", v)
		}
		c.Plan.CreditsPerCycle = f
	}
	if v := strings.TrimSpace(os.Getenv("MERIDIAN_BILLING_CYCLE_START")); v != "" {
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return c, fmt.Errorf("MERIDIAN_BILLING_CYCLE_START %q must be a date YYYY-MM-DD", v)
		}
		c.Plan.CycleStart = t.UnixMilli()
	}
	if v := strings.TrimSpace(os.Getenv("MERIDIAN_BILLING_CYCLE_MONTHS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 120 {
			return c, fmt.Errorf("MERIDIAN_BILLING_CYCLE_MONTHS %q must be 1 to 120", v)
		}
		c.Plan.CycleMonths = n
	}
	if path := strings.TrimSpace(os.Getenv("MERIDIAN_BILLING_PRICES")); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("MERIDIAN_BILLING_PRICES: %w", err)
		}
		if c.Prices, err = billing.ParsePrices(b); err != nil {
			return c, fmt.Errorf("MERIDIAN_BILLING_PRICES: %w", err)
		}
	}
	return c, nil
}
