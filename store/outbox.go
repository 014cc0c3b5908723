package store

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meridian-catalog/meridian"
)

// Consumer receives the change events of the outbox, in order, at least once. Handle
// runs outside any write transaction: a writer never waits for a consumer. A consumer
// whose effects live in the store opens its own transaction on the driver. After a
// crash, or when a later event fails, events already handled may be delivered again
// (at most one batch of them), so Handle must be idempotent. The events are shared
// with the other consumers: Handle must not modify them or their documents.
type Consumer interface {
	// Name identifies the consumer; its position is kept under this name.
	Name() string
	// Handle processes one event. An error stops delivery to this consumer, and only
	// to it; the same event is delivered again after a pause.
	Handle(ctx context.Context, e meridian.ChangeEvent) error
}

// BatchConsumer is a Consumer that handles the events of a batch together (the vectors
// indexer writes them in one transaction). An error stops delivery as Handle's does;
// the whole batch is delivered again after a pause.
type BatchConsumer interface {
	Consumer
	HandleBatch(ctx context.Context, events []meridian.ChangeEvent) error
}

// EntityBlind is a Consumer that never reads an event's Entity (the knowledge graph
// projects each entity from the catalog's current state instead; the audit log takes
// the event's own columns). Its events are read without the entity document, which is
// then neither read nor decoded for it, and not shared with the other consumers.
type EntityBlind interface {
	Consumer
	IgnoresEventEntities()
}

// EntityChooser is a Consumer, not a BatchConsumer, that needs the events' entities
// only at times (event subscriptions: only while one exists). Before each read, and
// after each event it handled without its entity, the dispatcher asks
// WantsEventEntities. While it answers false, its events are read as an EntityBlind
// consumer's are, with a nil Entity. Once it answers true, the events after the one just
// handled are read again, with their entities. So WantsEventEntities must answer true
// as soon as Handle has seen the event that makes the consumer need them (a
// subscription created). An error stops delivery to the consumer as Handle's does.
type EntityChooser interface {
	Consumer
	WantsEventEntities(ctx context.Context) (bool, error)
}

// positionKey is the settings key of a consumer's position.
func positionKey(name string) string { return "outbox.position." + name }

// DefaultEventRetention is how long delivered change events are kept by default.
const DefaultEventRetention = 30 * 24 * time.Hour

// Dispatcher delivers outbox events to consumers. Each consumer has its own goroutine
// and its own position, committed after the events it has handled, so a slow or failing
// consumer holds back neither the writers nor the other consumers. It also prunes the
// events every consumer has passed once they are older than Retention.
//
// On a driver with a single writer (a GroupCommitter: SQLite), the consumers yield to
// entity writes: while writes keep arriving and the writer is busy at least half the
// time, a consumer waits (at most Yield) before it handles what accumulated, so a burst
// of writes is not slowed by the consumers' reads, work and writes on the same CPUs and
// the same writer. A write at an ordinary pace reaches the consumers at once.
type Dispatcher struct {
	// Retention is how long change events are kept: an older event is pruned once every
	// consumer has passed it. 0 keeps every event. Set it before Run.
	Retention time.Duration
	// Yield is how long, at most, a consumer waits while entity writes stream into a
	// saturated single writer; 0 never waits. It applies only to a GroupCommitter
	// driver. Set it before Run.
	Yield time.Duration

	db         Driver
	lanes      []*lane
	log        *slog.Logger
	batch      int           // events read and handled between two position commits
	poll       time.Duration // how often to look for events written by another process
	maxBackoff time.Duration // longest pause after a consumer fails
	pruneEvery time.Duration
	now        func() time.Time
	reads      eventReads   // the lanes' recent reads, shared (outbox_reads.go)
	sharers    int          // the lanes that share their reads (not EntityBlind)
	writes     atomic.Int64 // Notify calls: the entity writes committed
	saturated  atomic.Bool  // entity writes stream into a saturated writer (outbox_yield.go)
}

// lane is one consumer and what its goroutine needs.
type lane struct {
	c    Consumer
	wake chan struct{}
	mu   sync.Mutex // one delivery pass at a time (Run's goroutine or Drain)
	// blind is set for an EntityBlind consumer: its reads leave out the entity
	// document and are not shared.
	blind bool
	// chooser is set for an EntityChooser: its reads are blind while it wants no
	// entities.
	chooser EntityChooser
	// yielding is set while the lane waits for a saturated writer (Status).
	yielding atomic.Bool
	// caughtUp is when the lane last found no event after its position; it yields no
	// longer than Yield after that (mu guards it).
	caughtUp time.Time
}

// NewDispatcher returns a dispatcher for the consumers, keeping events for
// DefaultEventRetention and yielding to a saturated writer for up to DefaultYield. Call
// Run to deliver in the background, Notify after writes, or Drain to deliver everything
// pending now (Drain never yields).
func NewDispatcher(db Driver, log *slog.Logger, consumers ...Consumer) *Dispatcher {
	if log == nil {
		log = slog.Default()
	}
	d := &Dispatcher{Retention: DefaultEventRetention, Yield: DefaultYield, db: db, log: log, batch: 100, poll: time.Second,
		maxBackoff: time.Minute, pruneEvery: time.Hour, now: time.Now}
	for _, c := range consumers {
		_, blind := c.(EntityBlind)
		chooser, _ := c.(EntityChooser)
		if _, batch := c.(BatchConsumer); batch {
			chooser = nil // it could not turn to entities within a batch
		}
		d.lanes = append(d.lanes, &lane{c: c, wake: make(chan struct{}, 1), blind: blind, chooser: chooser})
		if !blind {
			d.sharers++
		}
	}
	return d
}

// Notify wakes every consumer; the engine calls it after each committed write. It
// never blocks.
func (d *Dispatcher) Notify() {
	d.writes.Add(1)
	for _, l := range d.lanes {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// Run delivers events until ctx ends, one goroutine per consumer: at once when
// notified (after yielding to a saturated single writer), and every poll interval in
// case another process (a replica) wrote. A failing consumer is retried after a pause
// that doubles up to a minute. Run also prunes old delivered events at start and every
// hour. It returns when ctx ends and every goroutine has stopped.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if g, ok := d.db.(GroupCommitter); ok && d.Yield > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.watchLoad(ctx, g)
		}()
	}
	for _, l := range d.lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.runLane(ctx, l)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.runPrune(ctx)
	}()
	wg.Wait()
}

func (d *Dispatcher) runLane(ctx context.Context, l *lane) {
	backoff := d.poll
	for {
		wait, wake := d.poll, l.wake
		if err := d.drainLane(ctx, l, true); err != nil {
			if ctx.Err() != nil {
				return
			}
			d.log.Warn("outbox consumer failed; will retry", "consumer", l.c.Name(), "retryIn", backoff, "err", err)
			// A failing consumer waits out its pause, whatever is written meanwhile.
			wait, wake = backoff, nil
			backoff = min(2*backoff, d.maxBackoff)
		} else {
			backoff = d.poll
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (d *Dispatcher) runPrune(ctx context.Context) {
	if d.Retention <= 0 {
		return
	}
	t := time.NewTicker(d.pruneEvery)
	defer t.Stop()
	for {
		if n, err := d.Prune(ctx, d.now().Add(-d.Retention)); err != nil && ctx.Err() == nil {
			d.log.Warn("pruning old change events failed; will retry", "err", err)
		} else if n > 0 {
			d.log.Info("pruned old change events", "events", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Drain delivers every pending event to every consumer, each in its own goroutine, and
// returns the first error once all have stopped.
func (d *Dispatcher) Drain(ctx context.Context) error {
	errs := make([]error, len(d.lanes))
	var wg sync.WaitGroup
	for i, l := range d.lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.drainLane(ctx, l, false)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// drainLane hands a consumer every event after its position, a batch at a time, and
// commits its position after each batch and before reporting a failure. With yield,
// each batch first yields to a saturated single writer (outbox_yield.go).
func (d *Dispatcher) drainLane(ctx context.Context, l *lane, yield bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	name := l.c.Name()
	for {
		if yield {
			d.yield(ctx, l)
		}
		pos, err := d.Position(ctx, name)
		if err != nil {
			return err
		}
		blind, err := l.readsBlind(ctx)
		if err != nil {
			return err
		}
		load := func() (events []meridian.ChangeEvent, err error) {
			err = inRead(ctx, d.db, func(tx Tx) error {
				events, err = tx.Events(ctx, EventQuery{After: pos, Limit: d.batch, WithoutEntity: blind})
				return err
			})
			return events, err
		}
		var events []meridian.ChangeEvent
		if blind {
			events, err = load()
		} else {
			events, err = d.reads.read(ctx, pos, d.sharers > 1, load)
		}
		if err != nil {
			return err
		}
		if len(events) == 0 {
			l.caughtUp = time.Now()
			return nil
		}
		if b, ok := l.c.(BatchConsumer); ok {
			if err := b.HandleBatch(ctx, events); err != nil {
				return err
			}
			if err := d.commitPosition(ctx, name, events[len(events)-1].Seq); err != nil {
				return err
			}
			continue
		}
		handled := pos
		for _, e := range events {
			err := l.c.Handle(ctx, e)
			if err == nil {
				handled = e.Seq
				if blind && l.chooser != nil {
					var wants bool
					if wants, err = l.chooser.WantsEventEntities(ctx); err == nil && wants {
						break // read the events after it again, with their entities
					}
				}
			}
			if err != nil {
				if handled > pos {
					if perr := d.commitPosition(ctx, name, handled); perr != nil {
						d.log.Warn("outbox position not saved", "consumer", name, "err", perr)
					}
				}
				return err
			}
		}
		if err := d.commitPosition(ctx, name, handled); err != nil {
			return err
		}
	}
}

// readsBlind reports whether the lane's next read leaves out the entity documents: an
// EntityBlind consumer's always, an EntityChooser's while it wants none.
func (l *lane) readsBlind(ctx context.Context) (bool, error) {
	if l.blind || l.chooser == nil {
		return l.blind, nil
	}
	wants, err := l.chooser.WantsEventEntities(ctx)
	return !wants, err
}

// advancePosition stores a consumer's position unless the stored one is already
// further (another replica delivered the same events).
const advancePosition = `INSERT INTO settings (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = excluded.value
WHERE CAST(settings.value AS BIGINT) < CAST(excluded.value AS BIGINT)`

// commitPosition stores a consumer's position. On a GroupCommitter it joins the
// engine's group commits instead of taking the single writer (and an fsync) for itself
// between two groups.
func (d *Dispatcher) commitPosition(ctx context.Context, name string, seq int64) error {
	write := func(tx Tx) error {
		_, err := tx.SQL().Exec(ctx, advancePosition, positionKey(name), strconv.FormatInt(seq, 10))
		return err
	}
	if g, ok := d.db.(GroupCommitter); ok {
		return g.Group(ctx, write)
	}
	tx, err := d.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := write(tx); err != nil {
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
	Pending  int64  `json:"pending"`
	// Yielding says the consumer is waiting for a burst of writes to a saturated single
	// writer to pass (Dispatcher.Yield) before it handles its pending events.
	Yielding bool `json:"yielding"`
}

// Status reports every consumer's position and backlog. The backlogs are counted by the
// database, all in one pass over the events after the earliest position; no event is
// read.
func (d *Dispatcher) Status(ctx context.Context) ([]ConsumerStatus, error) {
	out := []ConsumerStatus{}
	if len(d.lanes) == 0 {
		return out, nil
	}
	err := inRead(ctx, d.db, func(tx Tx) error {
		positions := make([]int64, len(d.lanes))
		args := make([]any, 0, len(d.lanes)+1)
		earliest := int64(math.MaxInt64)
		for i, l := range d.lanes {
			pos, err := position(ctx, tx, l.c.Name())
			if err != nil {
				return err
			}
			positions[i] = pos
			args = append(args, pos)
			earliest = min(earliest, pos)
		}
		pending := make([]int64, len(d.lanes))
		dest := make([]any, len(pending))
		for i := range pending {
			dest[i] = &pending[i]
		}
		if err := tx.SQL().QueryRow(ctx, pendingQuery(len(d.lanes)), append(args, earliest)...).Scan(dest...); err != nil {
			return err
		}
		for i, l := range d.lanes {
			out = append(out, ConsumerStatus{Name: l.c.Name(), Position: positions[i], Pending: pending[i], Yielding: l.yielding.Load()})
		}
		return nil
	})
	return out, err
}

// pendingQuery counts, in one pass, the events after each of n positions ($1 to $n),
// over the events after the earliest of them ($n+1).
func pendingQuery(n int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString("COUNT(CASE WHEN seq > $" + strconv.Itoa(i) + " THEN 1 END)")
	}
	b.WriteString(" FROM change_events WHERE seq > $" + strconv.Itoa(n+1))
	return b.String()
}

// pruneBatch is how many events one pruning transaction removes at most.
const pruneBatch = 1000

// Prune removes the change events recorded before the given time that every consumer
// has handled, a bounded batch per transaction, and returns how many it removed. An
// event a consumer has not handled yet is never removed. Without consumers, every event
// older than before goes.
func (d *Dispatcher) Prune(ctx context.Context, before time.Time) (int64, error) {
	floor := int64(math.MaxInt64)
	err := inRead(ctx, d.db, func(tx Tx) error {
		for _, l := range d.lanes {
			pos, err := position(ctx, tx, l.c.Name())
			if err != nil {
				return err
			}
			floor = min(floor, pos)
		}
		return nil
	})
	if err != nil || floor == 0 {
		return 0, err
	}
	var total int64
	for {
		n, err := d.pruneOnce(ctx, floor, before.UnixMilli())
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}

// pruneOnce removes one batch of old events and records the highest sequence number it
// removed under prunedKey, in the same transaction.
func (d *Dispatcher) pruneOnce(ctx context.Context, floor, before int64) (int64, error) {
	tx, err := d.db.Begin(ctx, true)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var last *int64
	if err := tx.SQL().QueryRow(ctx, `SELECT MAX(seq) FROM (
    SELECT seq FROM change_events WHERE seq <= $1 AND ts < $2 ORDER BY seq LIMIT $3) AS batch`,
		floor, before, pruneBatch).Scan(&last); err != nil {
		return 0, err
	}
	if last == nil {
		return 0, nil
	}
	n, err := tx.SQL().Exec(ctx, `DELETE FROM change_events WHERE seq IN (
    SELECT seq FROM change_events WHERE seq <= $1 AND ts < $2 ORDER BY seq LIMIT $3)`, floor, before, pruneBatch)
	if err != nil {
		return 0, err
	}
	if _, err := tx.SQL().Exec(ctx, advancePosition, prunedKey, strconv.FormatInt(*last, 10)); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// prunedKey is the settings key of the highest sequence number pruning has removed.
const prunedKey = "outbox.pruned"

// OutboxMark is where the outbox stands: Head is the sequence number of the latest
// event ever recorded (0 before the first), Pruned the highest one retention removed
// (0 when none was), so every event after Pruned is still in the outbox.
type OutboxMark struct {
	Head, Pruned int64
	// HeadID is the id of the event at Head, empty when it was pruned.
	HeadID string
}

// ReadOutboxMark reads where the outbox stands in tx.
func ReadOutboxMark(ctx context.Context, tx Tx) (OutboxMark, error) {
	var m OutboxMark
	v, err := tx.Setting(ctx, prunedKey)
	switch {
	case err == nil:
		if m.Pruned, err = strconv.ParseInt(v, 10, 64); err != nil {
			return m, err
		}
	case meridian.ErrorCode(err) != meridian.ENotFound:
		return m, err
	}
	var head *int64
	if err := tx.SQL().QueryRow(ctx, "SELECT MAX(seq) FROM change_events").Scan(&head); err != nil {
		return m, err
	}
	m.Head = m.Pruned
	if head != nil && *head > m.Head {
		m.Head = *head
		events, err := tx.Events(ctx, EventQuery{After: m.Head - 1, Limit: 1})
		if err != nil {
			return m, err
		}
		if len(events) == 1 && events[0].Seq == m.Head {
			m.HeadID = events[0].ID
		}
	}
	return m, nil
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
// most 1000). Events older than the dispatcher's retention may have been pruned.
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
