package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// micro is the number of micro-credits in a credit: the ledger stores integers.
const micro = 1_000_000

// maxCreditsPerUnit bounds a configured price.
const maxCreditsPerUnit = 1e6

// Price is what one unit of a feature costs.
type Price struct {
	// Unit names what is counted: call, query, text, execution.
	Unit string `json:"unit"`
	// Credits is the price of one unit.
	Credits float64 `json:"credits"`
}

// PriceTable converts raw units into credits. Every change is stored as a new
// version; an entry keeps the version it was priced with.
type PriceTable struct {
	// Version is assigned when the table is stored (1, 2, …).
	Version int `json:"version"`
	// Features holds the price of every feature.
	Features map[string]Price `json:"features"`
	// Actions overrides the price per unit of one action (a tool name or a REST
	// operation id).
	Actions map[string]float64 `json:"actions,omitempty"`
	// ToolFeatures maps an MCP tool to the feature it is metered under; other tools
	// are mcpToolCalls.
	ToolFeatures map[string]string `json:"toolFeatures,omitempty"`
	// Operations maps a metered REST operation id to its feature; operations not
	// listed are not metered.
	Operations map[string]string `json:"operations,omitempty"`
}

// DefaultPrices is the documented default price table (docs/billing.md).
func DefaultPrices() *PriceTable {
	return &PriceTable{
		Features: map[string]Price{
			FeatureMCPToolCalls:   {Unit: "call", Credits: 1},
			FeatureSemanticSearch: {Unit: "query", Credits: 2},
			FeatureHybridSearch:   {Unit: "query", Credits: 2},
			FeatureNLQSearch:      {Unit: "query", Credits: 2},
			FeatureEmbeddings:     {Unit: "text", Credits: 0.01},
			FeatureSPARQL:         {Unit: "query", Credits: 3},
			FeatureExecutions:     {Unit: "execution", Credits: 1},
		},
		ToolFeatures: map[string]string{
			"semantic_search":        FeatureSemanticSearch,
			"find_context":           FeatureHybridSearch,
			"search_company_context": FeatureHybridSearch,
			"nlq_search":             FeatureNLQSearch,
			"sparql_query":           FeatureSPARQL,
		},
		Operations: map[string]string{
			"searchSemantic":       FeatureSemanticSearch,
			"vectorSearch":         FeatureSemanticSearch,
			"searchHybrid":         FeatureHybridSearch,
			"sparqlQuery":          FeatureSPARQL,
			"sparqlQueryPost":      FeatureSPARQL,
			"createMcpExecution":   FeatureExecutions,
			"createAgentExecution": FeatureExecutions,
		},
	}
}

// ParsePrices reads a price table from JSON (the MERIDIAN_BILLING_PRICES file).
// Features it leaves out keep their default price. Errors: EInvalid.
func ParsePrices(b []byte) (*PriceTable, error) {
	var in PriceTable
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, meridian.Errorf(meridian.EInvalid, "Invalid price table: %v", err)
	}
	t := DefaultPrices()
	for f, p := range in.Features {
		t.Features[f] = p
	}
	if in.Actions != nil {
		t.Actions = in.Actions
	}
	for k, v := range in.ToolFeatures {
		t.ToolFeatures[k] = v
	}
	for k, v := range in.Operations {
		t.Operations[k] = v
	}
	return t, t.Validate()
}

// Validate checks the table. Errors: EInvalid.
func (t *PriceTable) Validate() error {
	ok := func(c float64) bool { return !math.IsNaN(c) && c >= 0 && c <= maxCreditsPerUnit }
	for f, p := range t.Features {
		if !ok(p.Credits) || p.Unit == "" {
			return meridian.Errorf(meridian.EInvalid, "Invalid price of %s: credits must be 0 to %g and unit set", f, float64(maxCreditsPerUnit))
		}
	}
	for a, c := range t.Actions {
		if !ok(c) {
			return meridian.Errorf(meridian.EInvalid, "Invalid price of action %s: credits must be 0 to %g", a, float64(maxCreditsPerUnit))
		}
	}
	for _, m := range []map[string]string{t.ToolFeatures, t.Operations} {
		for k, f := range m {
			if _, known := t.Features[f]; !known {
				return meridian.Errorf(meridian.EInvalid, "Invalid price table: %s is metered under unknown feature %s", k, f)
			}
		}
	}
	return nil
}

// ToolFeature is the feature an MCP tool call is metered under.
func (t *PriceTable) ToolFeature(tool string) string {
	if f, ok := t.ToolFeatures[tool]; ok {
		return f
	}
	return FeatureMCPToolCalls
}

// Operation is the feature a REST operation is metered under, and whether it is.
func (t *PriceTable) Operation(id string) (string, bool) {
	f, ok := t.Operations[id]
	return f, ok
}

// unitPrice is the price of one unit of an action under a feature, in micro-credits.
func (t *PriceTable) unitPrice(feature, action string) int64 {
	if c, ok := t.Actions[action]; ok {
		return int64(math.Round(c * micro))
	}
	return int64(math.Round(t.Features[feature].Credits * micro))
}

// FeatureNames are the features, sorted.
func (t *PriceTable) FeatureNames() []string {
	out := make([]string, 0, len(t.Features))
	for f := range t.Features {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// canonical is the table without its version, for comparing with the stored one.
func (t *PriceTable) canonical() []byte {
	c := *t
	c.Version = 0
	b, _ := json.Marshal(c) // maps marshal with sorted keys
	return b
}

// storePrices stores t as a new version unless the newest stored version has the same
// content, and returns the current table with its version.
func (s *Service) storePrices(ctx context.Context, t *PriceTable) (*PriceTable, error) {
	out := *t
	err := s.write(ctx, func(tx store.Tx) error {
		db := tx.SQL()
		var version int64
		var doc string
		err := db.QueryRow(ctx, "SELECT version, doc FROM billing_prices ORDER BY version DESC LIMIT 1").Scan(&version, &doc)
		switch {
		case meridian.ErrorCode(err) == meridian.ENotFound:
		case err != nil:
			return err
		default:
			var prev PriceTable
			if json.Unmarshal([]byte(doc), &prev) == nil && bytes.Equal(prev.canonical(), t.canonical()) {
				out.Version = int(version)
				return nil
			}
		}
		out.Version = int(version) + 1
		_, err = db.Exec(ctx, "INSERT INTO billing_prices (version, created_at, doc) VALUES ($1, $2, $3)",
			out.Version, s.now().UnixMilli(), string(out.canonical()))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store the price table: %w", err)
	}
	return &out, nil
}

// Plan is the credit pool: credits per billing cycle, cycles of CycleMonths months
// starting at CycleStart.
type Plan struct {
	Name            string  `json:"name"`
	CreditsPerCycle float64 `json:"creditsPerCycle"`
	// CycleStart is any cycle's start, epoch milliseconds (UTC), taken at its day's
	// midnight; cycles repeat every CycleMonths months from it.
	CycleStart  int64 `json:"cycleStart"`
	CycleMonths int   `json:"cycleMonths"`
}

// DefaultPlan: 10,000 credits per calendar month.
var DefaultPlan = Plan{Name: "default", CreditsPerCycle: 10000, CycleStart: 0, CycleMonths: 1}

func (p Plan) withDefaults() Plan {
	if p.Name == "" {
		p.Name = DefaultPlan.Name
	}
	if p.CreditsPerCycle <= 0 || math.IsNaN(p.CreditsPerCycle) {
		p.CreditsPerCycle = DefaultPlan.CreditsPerCycle
	}
	if p.CycleMonths <= 0 || p.CycleMonths > 120 {
		p.CycleMonths = DefaultPlan.CycleMonths
	}
	// Cycles start at midnight UTC: the day's rollup is the cycle's grain.
	p.CycleStart -= ((p.CycleStart % dayMs) + dayMs) % dayMs
	return p
}

// Cycle returns the billing cycle holding t: [start, end).
func (p Plan) Cycle(t time.Time) (time.Time, time.Time) {
	anchor := time.UnixMilli(p.CycleStart).UTC()
	t = t.UTC()
	months := (t.Year()-anchor.Year())*12 + int(t.Month()-anchor.Month())
	k := months / p.CycleMonths
	if months < 0 && months%p.CycleMonths != 0 {
		k--
	}
	start := anchor.AddDate(0, k*p.CycleMonths, 0)
	for start.After(t) {
		k--
		start = anchor.AddDate(0, k*p.CycleMonths, 0)
	}
	end := anchor.AddDate(0, (k+1)*p.CycleMonths, 0)
	for !end.After(t) {
		k++
		start, end = end, anchor.AddDate(0, (k+1)*p.CycleMonths, 0)
	}
	return start, end
}

// creditsOf converts micro-credits to credits.
func creditsOf(m int64) float64 { return float64(m) / micro }

// microOf converts credits to micro-credits.
func microOf(c float64) int64 { return int64(math.Round(c * micro)) }
