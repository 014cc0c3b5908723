// Package billing is Meridian's credit ledger for AI usage: every AI action (an MCP
// tool call over stdio or HTTP, a semantic, hybrid or natural-language search, an
// embedding computed, a SPARQL query, an execution record created) is metered into an
// append-only ledger the moment it happens, priced through a versioned price table,
// and attributed to a user, an application source, an agent, a conversation and the
// entities it touched. Budgets (credit ceilings per window) are enforced before the
// work; credit alerts fire once per threshold per window; the reports read the ledger.
//
// The module (Module) owns its tables on both drivers. A Service is built over an open
// store.Driver with New and runs its background work (journal drain, alert
// evaluation) with Run.
//
// # Durability: the journal
//
// Metering must be cheap and never lost. Record appends the entry, as one JSON line,
// to this process's journal segment with a single write(2) before the caller answers:
// no fsync on the caller's path. The bytes are in the kernel once write returns, so a
// crash of the process (kill -9, a panic) loses nothing. Run drains the segment into
// the ledger table every FlushInterval (100 ms by default): it rotates to a new
// segment, inserts the rotated segment's entries in one transaction (a durable commit:
// this is the group fsync), then removes the segment. A segment whose process is gone
// (its advisory lock is free) is replayed at the next start; entries are keyed by
// their id, so a replay after a crash between commit and removal inserts nothing
// twice. A power loss can lose at most the entries of the last FlushInterval.
package billing

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

var migrations, _ = fs.Sub(migrationFiles, "migrations")

// Module is the store module that owns the billing tables.
func Module() store.Module {
	return store.Module{Name: "billing", Migrations: migrations}
}

// Features: the meters of the ledger. Each has a unit and a price per unit.
const (
	FeatureMCPToolCalls   = "mcpToolCalls"
	FeatureSemanticSearch = "semanticSearch"
	FeatureHybridSearch   = "hybridSearch"
	FeatureNLQSearch      = "nlqSearch"
	FeatureEmbeddings     = "embeddings"
	FeatureSPARQL         = "sparqlQueries"
	FeatureExecutions     = "executions"
)

// Applications an entry is spent through.
const (
	AppMCP    = "MCP"
	AppREST   = "REST"
	AppUI     = "UI"
	AppSystem = "System"
)

// Unattributed is the conversation (and agent) of spend that names none.
const Unattributed = "unattributed"

// Bounds of attribution strings and entities per entry.
const (
	maxLabel       = 200
	maxEntities    = 20
	defaultFlush   = 100 * time.Millisecond
	alertTickEvery = time.Minute
	// evaluateEvery is the least time between two alert evaluations after drains.
	evaluateEvery = time.Second
)

// Config configures a Service.
type Config struct {
	// Driver is the open store, opened with Module.
	Driver store.Driver
	// JournalDir holds the journal segments (created when missing). Required.
	JournalDir string
	// Plan is the credit pool; its zero value is DefaultPlan.
	Plan Plan
	// Prices is the price table; nil means DefaultPrices. When it differs from the
	// newest stored version, it is stored as a new version.
	Prices *PriceTable
	// Notifier delivers credit alerts and digests; nil drops them (logged).
	Notifier collab.Notifier
	// Sealer encrypts webhook secret keys of alert destinations at rest; nil stores
	// them as given.
	Sealer store.Sealer
	// Now is the clock; nil means time.Now. Tests set a fake one.
	Now func() time.Time
	// FlushInterval is how often the journal is drained; 0 means 100 ms.
	FlushInterval time.Duration
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
}

// Service is the billing capability over a store.
type Service struct {
	db       store.Driver
	plan     Plan
	notifier collab.Notifier
	sealer   store.Sealer
	now      func() time.Time
	log      *slog.Logger
	flush    time.Duration

	prices *PriceTable // the current version, immutable once stored

	journal *journal

	// mu guards the enforcement state: the budgets and the consumption counters.
	mu       sync.Mutex
	budgets  []RateLimit
	counters map[counterKey]int64
	live     map[string]Entry // reserved, not yet Done
	// commitMu is held by a drain from taking its batch until it committed, so a
	// counter built from the table plus pending sees each entry once.
	commitMu sync.Mutex
	// drainMu guards pending and the journal's rotation.
	drainMu sync.Mutex
	pending []Entry // journaled, not yet in the table

	alertMu sync.Mutex // one alert evaluation at a time
	kick    chan struct{}
}

// New opens the billing service: it stores the price table as a new version when it
// changed, loads the budgets, and replays the journal segments a crashed process left
// behind. Errors: those of the store and of the journal directory.
func New(ctx context.Context, c Config) (*Service, error) {
	s := &Service{db: c.Driver, plan: c.Plan.withDefaults(), notifier: c.Notifier, sealer: c.Sealer, now: c.Now,
		log: c.Logger, flush: c.FlushInterval, counters: map[counterKey]int64{}, live: map[string]Entry{}, kick: make(chan struct{}, 1)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.flush <= 0 {
		s.flush = defaultFlush
	}
	prices := c.Prices
	if prices == nil {
		prices = DefaultPrices()
	}
	if err := prices.Validate(); err != nil {
		return nil, err
	}
	p, err := s.storePrices(ctx, prices)
	if err != nil {
		return nil, err
	}
	s.prices = p
	if s.budgets, err = s.loadBudgets(ctx); err != nil {
		return nil, err
	}
	if s.journal, err = openJournal(c.JournalDir); err != nil {
		return nil, err
	}
	if err := s.recover(ctx); err != nil {
		s.journal.close(false)
		return nil, err
	}
	return s, nil
}

// Prices returns the current price table.
func (s *Service) Prices() *PriceTable { return s.prices }

// Plan returns the plan.
func (s *Service) Plan() Plan { return s.plan }

// Run drains the journal into the ledger every FlushInterval, reloads the budgets
// (another node may change them) every 50 drains, and evaluates the credit alert once
// entries were drained (at most once a second, so entries drained sooner are evaluated
// a second after the last evaluation) and every minute, until ctx ends; then it drains
// once more.
func (s *Service) Run(ctx context.Context) {
	flush := time.NewTicker(s.flush)
	defer flush.Stop()
	alerts := time.NewTicker(alertTickEvery)
	defer alerts.Stop()
	ticks := 0
	var (
		evaluated time.Time
		pending   bool // entries drained since the last evaluation
	)
	for {
		select {
		case <-ctx.Done():
			bg := context.WithoutCancel(ctx)
			if err := s.Drain(bg); err != nil {
				s.log.Error("billing: final drain failed", "err", err)
			}
			return
		case <-flush.C:
			if ticks++; ticks%50 == 0 {
				if err := s.ReloadBudgets(ctx); err != nil && ctx.Err() == nil {
					s.log.Error("billing: reload the budgets", "err", err)
				}
			}
			n, err := s.drain(ctx)
			if err != nil {
				s.log.Error("billing: drain failed", "err", err)
				continue
			}
			// Entries drained within evaluateEvery of the last evaluation wait for a
			// later tick, not for the next drain that moves some: there may be none.
			pending = pending || n > 0
			if pending && time.Since(evaluated) >= evaluateEvery {
				s.evaluateLogged(ctx)
				evaluated, pending = time.Now(), false
			}
		case <-alerts.C:
			s.evaluateLogged(ctx)
		case <-s.kick:
			s.evaluateLogged(ctx)
		}
	}
}

// Close drains the journal into the ledger and closes it; entries recorded later are
// lost, so the edges stop first. Call it before the store closes. Errors: the
// store's (the entries then stay in the journal for the next start).
func (s *Service) Close(ctx context.Context) error {
	err := s.Drain(ctx)
	s.journal.close(err == nil) // drained: the last segment holds nothing
	return err
}

// Drain moves every journaled entry into the ledger table now (Run does it on its
// own); tests and the shutdown path call it. Errors: the store's.
func (s *Service) Drain(ctx context.Context) error {
	_, err := s.drain(ctx)
	return err
}

func (s *Service) evaluateLogged(ctx context.Context) {
	if _, err := s.EvaluateAlerts(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("billing: credit alert evaluation failed", "err", err)
	}
}

// read runs fn in a read-only transaction.
func (s *Service) read(ctx context.Context, fn func(db store.SQL) error) error {
	tx, err := s.db.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx.SQL())
}

// write runs fn in a writable transaction and commits when it returns nil.
func (s *Service) write(ctx context.Context, fn func(tx store.Tx) error) error {
	tx, err := s.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// requireAdmin is the rule of every report and setting but the self-service ones.
func requireAdmin(p *meridian.Principal) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Not authenticated")
	}
	if !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Principal: %s is not a workspace admin: billing needs the Admin role", p.Name)
	}
	return nil
}

// requireUser is the rule of the self-service endpoints.
func requireUser(p *meridian.Principal) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Not authenticated")
	}
	return nil
}
