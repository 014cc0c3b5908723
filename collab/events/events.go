// Package events delivers change events to the outside world: event subscriptions (an
// entity kind, eventSubscription) whose matching events go, in order and at least once,
// to webhooks signed with HMAC-SHA256 and to e-mail receivers through SMTP.
//
// How it works:
//   - Service is an outbox consumer (store.Dispatcher): outside every write
//     transaction it matches each change event against the subscriptions and appends it
//     to the ordered queue of each subscription it matches (event_subscription_queue,
//     a table of this module), recording per subscription the last event queued, so an
//     event replayed by the dispatcher is never queued twice.
//   - Run delivers the queues: one worker per subscription with due events (at most
//     Config.Workers at once), each taking a lease on its subscription so that only one
//     process delivers it. A worker sends the head of its queue to every destination
//     that has not yet received it and removes it once all have; a failure keeps it at
//     the head and retries it after an exponential backoff, so later events wait behind
//     it (order per subscription) while other subscriptions go on. After the retry
//     horizon the event is given up (counted in failedEvents, the newest kept for
//     FailedEvents) and the next one goes.
//   - The state (queue, counters, status, last error) lives in the module's tables on
//     both drivers, so delivery resumes where it stopped after a restart. A
//     subscription's statusDetails, computed on every read, shows it.
//
// Module declares the tables; New builds the service; Run delivers; Handle and Name make
// it a store.Consumer; TestDestination sends a test message; FailedEvents lists what was
// given up. docs/events.md describes the behaviour and its bounds.
package events

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/collab"
	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

var migrations, _ = fs.Sub(migrationFiles, "migrations")

// ModuleName is the name the module's migrations are recorded under.
const ModuleName = "eventsubscriptions"

// ConsumerName is the outbox consumer's name (its position is kept under it).
const ConsumerName = "eventSubscriptions"

// Default bounds of delivery.
const (
	DefaultMaxQueue     = 10000
	DefaultRetryHorizon = 24 * time.Hour
	DefaultMinBackoff   = time.Second
	DefaultMaxBackoff   = 5 * time.Minute
	DefaultWorkers      = 16
	DefaultPoll         = time.Second
	// leaseDuration bounds how long a crashed process keeps a subscription: longer than
	// one event's delivery to every destination (10 × MaxTimeout).
	leaseDuration = 15 * time.Minute
	// cacheTTL bounds how stale the subscriptions the consumer matches against may be
	// when another process changed them.
	cacheTTL = time.Minute
)

// Statuses of a subscription's delivery (statusDetails.status).
const (
	StatusActive        = "active"
	StatusAwaitingRetry = "awaitingRetry"
	StatusFailed        = "failed"
	StatusDisabled      = "disabled"
)

// Module is the store module that owns the delivery tables. A subscription's rows go
// with it when it is hard-deleted; its statusDetails is computed on every read.
func Module() store.Module {
	return store.Module{
		Name:       ModuleName,
		Migrations: migrations,
		OnRemove: func(ctx context.Context, db store.SQL, entityID string) error {
			for _, q := range []string{`DELETE FROM event_subscription_queue WHERE subscription_id = $1`,
				`DELETE FROM event_subscription_failed WHERE subscription_id = $1`} {
				if _, err := db.Exec(ctx, q, entityID); err != nil {
					return err
				}
			}
			_, err := db.Exec(ctx, `DELETE FROM event_subscription_state WHERE subscription_id = $1`, entityID)
			return err
		},
		Computed: map[string]store.ComputeFunc{meridian.KindEventSubscription: computeStatus},
	}
}

// Config tunes delivery. Zero values take the defaults.
type Config struct {
	// Notifier sends to destinations; nil builds one from SMTP and AllowedNetworks.
	Notifier collab.Notifier
	// SMTP is the mail server of e-mail destinations (SMTPFromEnv).
	SMTP SMTPConfig
	// AllowedNetworks are the internal networks webhooks may reach (see Notifier).
	AllowedNetworks []netip.Prefix
	// MaxQueue bounds the events waiting for one subscription; an event that finds the
	// queue full is dropped for it and counted in droppedEvents. Default 10,000.
	MaxQueue int
	// RetryHorizon is how long an event is retried before it is given up. Default 24h.
	RetryHorizon time.Duration
	// MinBackoff and MaxBackoff bound the pause between attempts, doubling from the
	// first to the second. Defaults 1s and 5m.
	MinBackoff, MaxBackoff time.Duration
	// Workers bounds the subscriptions delivered at once. Default 16.
	Workers int
	// Poll is how often Run looks for due events. Default 1s.
	Poll time.Duration
	// Node names this process in the delivery leases. Default a fixed name, enough for
	// one process.
	Node string
	// Logger receives delivery logs (never a secret or an event body); nil discards.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Service matches change events against the subscriptions and delivers them.
type Service struct {
	ents     *store.Entities
	db       store.Driver
	cfg      Config
	notifier collab.Notifier
	log      *slog.Logger
	wake     chan struct{}

	mu       sync.Mutex
	subs     []Subscription
	loadedAt time.Time
	valid    bool
	running  map[string]bool
}

// New returns the delivery service over the entity engine, whose driver must have been
// opened with Module.
func New(ents *store.Entities, cfg Config) *Service {
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = DefaultMaxQueue
	}
	if cfg.RetryHorizon <= 0 {
		cfg.RetryHorizon = DefaultRetryHorizon
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Node == "" {
		cfg.Node = "meridian"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := cfg.Notifier
	if n == nil {
		n = NewNotifier(cfg.SMTP, cfg.AllowedNetworks)
	}
	return &Service{ents: ents, db: ents.Driver(), cfg: cfg, notifier: n, log: log,
		wake: make(chan struct{}, 1), running: map[string]bool{}}
}

// Notifier is the service's notifier, for the other capabilities that notify
// destinations (credit alerts).
func (s *Service) Notifier() collab.Notifier { return s.notifier }

func (s *Service) now() int64 { return s.cfg.Now().UnixMilli() }

// poke wakes Run without blocking.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// write runs fn in a writable transaction for the module's own rows, which record no
// change event (store.InUnorderedTx): on PostgreSQL it does not take the lock that
// orders entity writes, so delivery never waits for writers nor holds them back; on
// SQLite it joins the engine's group commits. fn may run more than once.
func (s *Service) write(ctx context.Context, fn func(tx store.Tx) error) error {
	return store.InUnorderedTx(ctx, s.db, fn)
}
