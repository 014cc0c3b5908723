// Package activity keeps the activity stream (/api/v1/activity): the system's changes,
// taken from the outbox by a Consumer (never from conversations), in a table the module
// owns (Module) on both drivers, listed globally, per entity and per user, newest first
// with cursors.
//
// Retention: events older than the retention are deleted by a durable job
// (JobTypeRetention, store/jobs) that Run starts every Interval. The retention is 30
// days by default (activityStreamConfig.retentionDays); it is kept in the database, so
// every replica applies the same one, and is read and changed at
// /api/v1/activity/settings: a global number of days and, per domain, its own. An event
// belongs to the first domain of its entity (the entity's domains when the event was
// recorded); an event of an entity without a domain, or of a domain without its own
// retention, follows the global one.
package activity

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

//go:embed migrations
var migrationFiles embed.FS

var migrations, _ = fs.Sub(migrationFiles, "migrations")

// Module is the store module that owns the activity tables. An entity's events stay
// after it is removed: they are the stream's history, pruned by the retention.
func Module() store.Module { return store.Module{Name: "activity", Migrations: migrations} }

// JobTypeRetention is the type of the durable job that deletes expired events.
const JobTypeRetention = "activity.retention"

// Retention bounds.
const (
	DefaultRetentionDays = 30
	MinRetentionDays     = 1
	MaxRetentionDays     = 3650
	// MaxDomainRetentions bounds how many domains may have their own retention.
	MaxDomainRetentions = 1000
	// pruneBatch is how many events one statement deletes.
	pruneBatch = 1000
)

// Event is one entry of the activity stream.
type Event struct {
	ID              string   `json:"id"`
	EventType       string   `json:"eventType"`
	Timestamp       int64    `json:"timestamp"`
	Actor           Actor    `json:"actor"`
	Entity          EntityOf `json:"entity"`
	Domains         []string `json:"domains,omitempty"`
	PreviousVersion float64  `json:"previousVersion,omitempty"`
	CurrentVersion  float64  `json:"currentVersion,omitempty"`
	FieldsAdded     []string `json:"fieldsAdded,omitempty"`
	FieldsUpdated   []string `json:"fieldsUpdated,omitempty"`
	FieldsDeleted   []string `json:"fieldsDeleted,omitempty"`
}

// Actor is who made the change.
type Actor struct {
	Name string `json:"name"`
}

// EntityOf is the entity an event is about.
type EntityOf struct {
	ID                 string `json:"id"`
	Type               string `json:"type"`
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
}

// FromChange is the activity event of a change event: the change's names, never its
// values (the stream is a summary; the versions hold the values).
func FromChange(ev meridian.ChangeEvent) Event {
	e := Event{ID: ev.ID, EventType: ev.EventType, Timestamp: ev.Timestamp, Actor: Actor{Name: ev.UserName},
		Entity:          EntityOf{ID: ev.EntityID, Type: ev.EntityType, FullyQualifiedName: ev.EntityFQN},
		PreviousVersion: ev.PreviousVersion, CurrentVersion: ev.CurrentVersion}
	if ev.Entity != nil {
		e.Entity.Name = ev.Entity.Name()
		if e.Entity.FullyQualifiedName == "" {
			e.Entity.FullyQualifiedName = ev.Entity.FQN()
		}
		e.Domains = domainsOf(ev.Entity)
	}
	if cd := ev.ChangeDescription; cd != nil {
		for _, f := range cd.FieldsAdded {
			e.FieldsAdded = append(e.FieldsAdded, f.Name)
		}
		for _, f := range cd.FieldsUpdated {
			e.FieldsUpdated = append(e.FieldsUpdated, f.Name)
		}
		for _, f := range cd.FieldsDeleted {
			e.FieldsDeleted = append(e.FieldsDeleted, f.Name)
		}
	}
	return e
}

// domainsOf reads the FQNs of an entity's domains (its domains references, or a
// single domain reference).
func domainsOf(e meridian.Entity) []string {
	var refs []any
	switch v := e["domains"].(type) {
	case []any:
		refs = v
	}
	if d, ok := e["domain"].(map[string]any); ok {
		refs = append(refs, d)
	}
	var out []string
	for _, r := range refs {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["fullyQualifiedName"].(string)
		if name == "" {
			name, _ = m["name"].(string)
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// Consumer records the outbox's change events in the activity stream.
type Consumer struct{ db store.Driver }

// NewConsumer returns the outbox consumer over a driver opened with Module.
func NewConsumer(db store.Driver) *Consumer { return &Consumer{db: db} }

// Name is the consumer's position key.
func (c *Consumer) Name() string { return "activity" }

// Handle records one change event, once however often it is delivered. A write that
// changed nothing (entityNoChange) is not activity.
func (c *Consumer) Handle(ctx context.Context, ev meridian.ChangeEvent) error {
	return c.HandleBatch(ctx, []meridian.ChangeEvent{ev})
}

// HandleBatch records events as Handle does, in one transaction: a transaction (and on
// SQLite an fsync) per event cost half a core while a bulk load was indexed.
func (c *Consumer) HandleBatch(ctx context.Context, events []meridian.ChangeEvent) error {
	return store.InModuleTx(ctx, c.db, true, func(db store.SQL) error {
		for _, ev := range events {
			if ev.EventType == meridian.EventEntityNoChange {
				continue
			}
			if err := Insert(ctx, db, FromChange(ev)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Insert stores an event; one already stored (same id) is left alone.
func Insert(ctx context.Context, db store.SQL, e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	domain := ""
	if len(e.Domains) > 0 {
		domain = e.Domains[0]
	}
	_, err = db.Exec(ctx, `INSERT INTO activity_events (id, ts, event_type, entity_type, entity_id, entity_fqn, user_name, domain, doc)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
		e.ID, e.Timestamp, e.EventType, e.Entity.Type, strings.ToLower(e.Entity.ID), e.Entity.FullyQualifiedName, e.Actor.Name, domain, string(b))
	return err
}

// Config tunes a Service. Zero values take the defaults.
type Config struct {
	// Jobs runs the retention job; nil means Run prunes in its own goroutine, without a
	// job record.
	Jobs store.Jobs
	// Interval is how often Run starts the retention job (default 1 hour).
	Interval time.Duration
	// Now is the clock the retention counts from (default time.Now).
	Now func() time.Time
	// Logger receives the job's failures; nil discards them.
	Logger *slog.Logger
}

// Service lists the activity stream, keeps its retention settings, and prunes it. It is
// safe for concurrent use.
type Service struct {
	ents *store.Entities
	db   store.Driver
	c    Config
}

// New returns the service over an engine whose driver was opened with Module.
func New(ents *store.Entities, db store.Driver, c Config) *Service {
	if c.Interval <= 0 {
		c.Interval = time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{ents: ents, db: db, c: c}
}
