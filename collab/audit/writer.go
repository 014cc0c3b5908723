package audit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// WriterConfig tunes a Writer. Zero values take the defaults.
type WriterConfig struct {
	// Queue is how many entries may wait to be written (default 10,000). When it is
	// full, Record waits for room: an entry is never dropped while the Writer runs.
	Queue int
	// Batch is the most entries written in one transaction (default 500).
	Batch int
	// Interval is the longest an entry waits before its batch is written (default
	// 200 ms).
	Interval time.Duration
	// Logger receives write failures; nil discards them.
	Logger *slog.Logger
	// Now is the clock of the entries' timestamps (default time.Now).
	Now func() time.Time
}

// Writer records the edges' entries in the background, in batches: Record only queues
// the entry. It is safe for concurrent use.
type Writer struct {
	c  WriterConfig
	db interface {
		insertBatch(context.Context, []Entry) error
		ping(context.Context) error
	}
	queue chan Entry
	log   *slog.Logger

	mu      sync.RWMutex // guards stopped against Record's send
	stopped bool
	done    chan struct{}
	flushes chan chan struct{}
}

// NewWriter returns a writer over the service's store. Call Run to start writing.
func NewWriter(s *Service, c WriterConfig) *Writer {
	if c.Queue <= 0 {
		c.Queue = 10_000
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Interval <= 0 {
		c.Interval = 200 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Writer{c: c, db: s, queue: make(chan Entry, c.Queue), log: c.Logger, done: make(chan struct{}),
		flushes: make(chan chan struct{})}
}

// Record queues an entry, stamping its time when it has none. A nil Writer records
// nothing. After Run has stopped, the entry is logged instead.
func (w *Writer) Record(e Entry) {
	if w == nil {
		return
	}
	if e.Timestamp == 0 {
		e.Timestamp = w.c.Now().UnixMilli()
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.stopped {
		w.log.Warn("audit entry after shutdown, not recorded", "kind", e.Kind, "user", e.UserName, "path", e.Path, "status", e.Status)
		return
	}
	w.queue <- e
}

// Run writes queued entries until ctx ends, then writes what is still queued and
// returns. A batch that fails is retried until it is written or ctx ends.
func (w *Writer) Run(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(w.c.Interval)
	defer t.Stop()
	batch := make([]Entry, 0, w.c.Batch)
	flush := func(ctx context.Context) {
		for len(batch) > 0 {
			err := w.db.insertBatch(ctx, batch)
			if err == nil {
				batch = batch[:0]
				return
			}
			// One entry the database refuses must not hold back the others: write them
			// one by one, and drop (and log) only an entry refused while the database
			// answers. When it does not answer, keep everything and retry.
			kept := batch[:0]
			for _, e := range batch {
				if err := w.db.insertBatch(ctx, []Entry{e}); err != nil {
					if w.db.ping(ctx) == nil {
						w.log.Error("the audit log refused an entry; it is dropped", "kind", e.Kind, "user", e.UserName,
							"path", e.Path, "status", e.Status, "err", err)
						continue
					}
					kept = append(kept, e)
				}
			}
			batch = kept
			if len(batch) == 0 {
				return
			}
			w.log.Error("writing the audit log failed; will retry", "entries", len(batch), "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
	// drain writes everything queued now.
	drain := func(ctx context.Context) {
		for {
			select {
			case e := <-w.queue:
				batch = append(batch, e)
				if len(batch) >= w.c.Batch {
					flush(ctx)
				}
				continue
			default:
			}
			flush(ctx)
			return
		}
	}
	for {
		select {
		case e := <-w.queue:
			batch = append(batch, e)
			if len(batch) >= w.c.Batch {
				flush(ctx)
			}
		case <-t.C:
			flush(ctx)
		case ack := <-w.flushes:
			drain(ctx)
			close(ack)
		case <-ctx.Done():
			w.mu.Lock()
			w.stopped = true
			w.mu.Unlock()
			// The queue is closed to Record now: write what is left, on a fresh
			// context bounded in time.
			final, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			drain(final)
			return
		}
	}
}

// Flush waits until every entry queued before the call has been written, or ctx ends.
// Tests and graceful shutdown use it.
func (w *Writer) Flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case w.flushes <- ack:
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
