package store

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/meridian-catalog/meridian"
)

// Consumer receives the change events of the outbox, in order. Handle runs inside a
// writable transaction that also records the consumer's new position, so a consumer
// whose effects live in the store sees each event exactly once, even across crashes.
// A consumer with effects outside the store (a webhook) sees each event at least once
// and must be idempotent.
type Consumer interface {
	// Name identifies the consumer; its position is kept under this name.
	Name() string
	// Handle processes one event. An error stops delivery to this consumer; the same
	// event is delivered again later.
	Handle(ctx context.Context, tx Tx, e meridian.ChangeEvent) error
}

// positionKey is the settings key of a consumer's position.
func positionKey(name string) string { return "outbox.position." + name }

// Dispatcher delivers outbox events to consumers. Each consumer keeps its own
// position, so one slow or failing consumer does not hold the others back.
type Dispatcher struct {
	db        Driver
	consumers []Consumer
	log       *slog.Logger
	wake      chan struct{}
	batch     int
	poll      time.Duration
	mu        sync.Mutex // one delivery pass at a time
}

// NewDispatcher returns a dispatcher for the consumers. Call Run to deliver in the
// background, Notify after writes, or Drain to deliver everything pending now.
func NewDispatcher(db Driver, log *slog.Logger, consumers ...Consumer) *Dispatcher {
	if log == nil {
		log = slog.Default()
	}
	return &Dispatcher{db: db, consumers: consumers, log: log, wake: make(chan struct{}, 1), batch: 100, poll: time.Second}
}

// Notify wakes the dispatcher; the engine calls it after each committed write.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers events until ctx ends: at once when notified, and every poll interval
// in case another process (a replica) wrote. Failures are logged and retried.
func (d *Dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(d.poll)
	defer t.Stop()
	for {
		if err := d.Drain(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("outbox delivery failed; will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// Drain delivers every pending event to every consumer and returns the first error.
func (d *Dispatcher) Drain(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var first error
	for _, c := range d.consumers {
		if err := d.drainOne(ctx, c); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (d *Dispatcher) drainOne(ctx context.Context, c Consumer) error {
	for {
		pos, err := d.Position(ctx, c.Name())
		if err != nil {
			return err
		}
		var events []meridian.ChangeEvent
		err = inRead(ctx, d.db, func(tx Tx) error {
			events, err = tx.Events(ctx, EventQuery{After: pos, Limit: d.batch})
			return err
		})
		if err != nil || len(events) == 0 {
			return err
		}
		for _, e := range events {
			if err := d.deliver(ctx, c, e); err != nil {
				return err
			}
		}
	}
}

// deliver hands one event to a consumer and records its position in one transaction.
func (d *Dispatcher) deliver(ctx context.Context, c Consumer, e meridian.ChangeEvent) error {
	tx, err := d.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another replica may have delivered it meanwhile.
	cur, err := position(ctx, tx, c.Name())
	if err != nil {
		return err
	}
	if cur >= e.Seq {
		return nil
	}
	if err := c.Handle(ctx, tx, e); err != nil {
		return err
	}
	if err := tx.PutSetting(ctx, positionKey(c.Name()), strconv.FormatInt(e.Seq, 10)); err != nil {
		return err
	}
	return tx.Commit()
}

// Position returns a consumer's position: the sequence number of the last event it
// handled, 0 before the first.
func (d *Dispatcher) Position(ctx context.Context, name string) (int64, error) {
	var pos int64
	err := inRead(ctx, d.db, func(tx Tx) error {
		var err error
		pos, err = position(ctx, tx, name)
		return err
	})
	return pos, err
}

// ConsumerStatus is a consumer's position and how many events wait for it.
type ConsumerStatus struct {
	Name     string `json:"name"`
	Position int64  `json:"position"`
	Pending  int    `json:"pending"`
}

// Status reports every consumer's position and backlog.
func (d *Dispatcher) Status(ctx context.Context) ([]ConsumerStatus, error) {
	out := []ConsumerStatus{}
	err := inRead(ctx, d.db, func(tx Tx) error {
		for _, c := range d.consumers {
			pos, err := position(ctx, tx, c.Name())
			if err != nil {
				return err
			}
			pending, err := tx.Events(ctx, EventQuery{After: pos})
			if err != nil {
				return err
			}
			out = append(out, ConsumerStatus{Name: c.Name(), Position: pos, Pending: len(pending)})
		}
		return nil
	})
	return out, err
}

func position(ctx context.Context, tx Tx, name string) (int64, error) {
	v, err := tx.Setting(ctx, positionKey(name))
	if meridian.ErrorCode(err) == meridian.ENotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

func inRead(ctx context.Context, db Driver, f func(Tx) error) error {
	tx, err := db.Begin(ctx, false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(tx)
}

// EventsOptions select change events for the events API: at or after Since (epoch ms),
// of the given entity types, after an opaque cursor, at most Limit (default 100,
// most 1000).
type EventsOptions struct {
	Since       int64
	EntityTypes []string
	After       string
	Limit       int
}

// EventPage is one page of change events.
type EventPage struct {
	Data  []meridian.ChangeEvent `json:"data"`
	After string                 `json:"after,omitempty"`
}

// Events lists change events for admins. Errors: EForbidden, EInvalid.
func (s *Entities) Events(ctx context.Context, p *meridian.Principal, o EventsOptions) (EventPage, error) {
	if !p.IsAdmin() {
		return EventPage{}, meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [ViewEvents] not allowed", principalName(p))
	}
	limit := o.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return EventPage{}, meridian.Errorf(meridian.EInvalid, "[query param limit must be between 1 and 1000]")
	}
	if o.Since < 0 {
		return EventPage{}, meridian.Errorf(meridian.EInvalid, "Timestamp %d is not valid, it should be in milliseconds since epoch", o.Since)
	}
	for _, t := range o.EntityTypes {
		if _, ok := s.reg.Kind(t); !ok {
			return EventPage{}, meridian.Errorf(meridian.EInvalid, "Unknown entity type %s", t)
		}
	}
	var after int64
	if o.After != "" {
		n, err := strconv.ParseInt(o.After, 10, 64)
		if err != nil || n < 0 {
			return EventPage{}, meridian.Errorf(meridian.EInvalid, "Invalid cursor %q", o.After)
		}
		after = n
	}
	var page EventPage
	err := s.inReadTx(ctx, func(tx Tx) error {
		events, err := tx.Events(ctx, EventQuery{After: after, Since: o.Since, EntityTypes: o.EntityTypes, Limit: limit + 1})
		if err != nil {
			return err
		}
		if len(events) > limit {
			events = events[:limit]
			page.After = strconv.FormatInt(events[limit-1].Seq, 10)
		}
		page.Data = events
		return nil
	})
	return page, err
}
