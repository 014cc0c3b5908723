package postgres

import (
	"context"
	"crypto/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The change feed: the read cache's data version without a round trip. Every writable
// transaction sends a notification on changesChannel (NOTIFY is delivered when, and
// only if, it commits), and each DB listens on that channel on a connection of its
// own, outside the pool. The version is a counter that every notification received,
// and every (re)connection of the listener, moves on. So a commit by any node
// sharing the database changes it as soon as the notification arrives, typically
// within a few milliseconds of the commit, and a GET answered from the cache costs no
// round trip (measured on 2 cores: one round trip took about as long as the static
// HTTP floor's whole request).
//
// A commit made through the DB moves the counter on itself, before Commit returns, so
// every engine and module of one process sees it at once.
//
// The counter is trusted only while the feed proves it hears every notification: every
// feedPing the listener notifies a channel of its own (its probe) and waits to hear it
// back. PostgreSQL delivers notifications in commit order, so hearing the probe means
// every commit acknowledged before the probe was sent has been counted. A connection
// that died without a sign, or a connection pooler that does not carry notifications
// (PgBouncer in transaction mode), hears no probe. The counter is trusted for
// feedStale after the last probe heard was sent; otherwise DataVersion falls back to
// the server's current snapshot (one round trip), which reflects every commit at once.
//
// Each probe also reads how full PostgreSQL's notification queue is; past queueFull a
// feed ends the other feeds' sessions (queueFull says why).
const (
	changesChannel = "meridian_changes"
	feedPing       = 250 * time.Millisecond
	feedStale      = time.Second
	feedRetry      = time.Second // wait before reconnecting a listener that failed
)

// queueFull is the share of PostgreSQL's notification queue (8 GB by default) in use
// at which a feed ends the other feeds' sessions. The queue keeps every notification
// until each listening session has read it, so a server that hangs with its
// connection open (paused, not dead) would fill it, and once it is full every
// writable transaction fails at commit.
const queueFull = 0.5

// feedApplication names the listener's session in pg_stat_activity.
const feedApplication = "meridian change feed"

// changeFeed follows changesChannel for one DB.
type changeFeed struct {
	epoch  time.Time     // monotonic base of proved
	probe  string        // this feed's probe channel
	full   float64       // queueFull, or what a test sets
	gen    atomic.Uint64 // moves on with every notification and every (re)connection
	sent   atomic.Uint64 // the last probe sent
	heard  atomic.Uint64 // the last probe heard
	proved atomic.Int64  // since epoch, when the last probe heard was sent; 0: none
	stop   context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startChangeFeed starts listening, on a connection made from cc, in the background;
// full is the notification queue's usage at which it ends the other feeds' sessions
// (queueFull).
func startChangeFeed(cc *pgx.ConnConfig, full float64) *changeFeed {
	ctx, stop := context.WithCancel(context.Background())
	f := &changeFeed{epoch: time.Now(), probe: changesChannel + "_probe_" + rand.Text(), full: full, stop: stop,
		done: make(chan struct{})}
	cc = cc.Copy()
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["application_name"] = feedApplication
	cc.OnNotification = f.notified
	go func() {
		defer close(f.done)
		for {
			_ = f.listen(ctx, cc)
			f.proved.Store(0)
			select {
			case <-ctx.Done():
				return
			case <-time.After(feedRetry):
			}
		}
	}()
	return f
}

// notified counts a notification, or records the probe it is.
func (f *changeFeed) notified(_ *pgconn.PgConn, n *pgconn.Notification) {
	if n.Channel != f.probe {
		f.gen.Add(1)
		return
	}
	if p, err := strconv.ParseUint(n.Payload, 10, 64); err == nil {
		f.heard.Store(p)
	}
}

// version answers the feed's data version, and false when the feed cannot be trusted
// (not connected, or the last probe heard was sent more than feedStale ago).
func (f *changeFeed) version() (string, bool) {
	p := f.proved.Load()
	if p == 0 || time.Since(f.epoch)-time.Duration(p) > feedStale {
		return "", false
	}
	return "feed " + strconv.FormatUint(f.gen.Load(), 10), true
}

// committed moves the version on for a commit made through this DB, which its reads
// must see before the commit's notification comes back.
func (f *changeFeed) committed() { f.gen.Add(1) }

// listen connects, listens, and probes every feedPing until the connection fails, a
// probe goes unheard (prove), or ctx is done.
func (f *changeFeed) listen(ctx context.Context, cc *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	for _, ch := range []string{changesChannel, f.probe} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	f.gen.Add(1) // whatever was committed while nobody listened
	for {
		if err := f.prove(ctx, conn); err != nil {
			return err
		}
		// Count notifications until the next probe is due.
		wctx, cancel := context.WithTimeout(ctx, feedPing)
		err := hear(wctx, conn, func() bool { return false })
		cancel()
		if !pgconn.Timeout(err) || ctx.Err() != nil {
			return err
		}
	}
}

// prove sends a probe and waits to hear it back. Trust lapses feedStale after the last
// probe heard was sent (version); the connection is given up when a probe is not
// answered or heard within twice that.
func (f *changeFeed) prove(ctx context.Context, conn *pgx.Conn) error {
	sent := time.Since(f.epoch)
	probe := f.sent.Add(1)
	pctx, cancel := context.WithTimeout(ctx, 2*feedStale)
	defer cancel()
	var usage float64
	if err := conn.QueryRow(pctx, "SELECT pg_notification_queue_usage() FROM pg_notify($1, $2)", f.probe,
		strconv.FormatUint(probe, 10)).Scan(&usage); err != nil {
		return err
	}
	if usage >= f.full {
		// Some listener is not reading: end the other feeds' sessions of this role
		// (those alive reconnect within feedRetry), so a stuck one frees the queue. A
		// failure leaves the connection usable and is tried again at the next probe.
		_, _ = conn.Exec(pctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND usename = current_user AND application_name = $1 AND pid <> pg_backend_pid()`,
			feedApplication)
	}
	if err := hear(pctx, conn, func() bool { return f.heard.Load() >= probe }); err != nil {
		return err
	}
	f.proved.Store(int64(max(sent, 1)))
	return nil
}

// hear reads notifications (notified counts them) until done reports true, or ctx
// ends. A timeout leaves the connection usable (pgconn's default deadline handler).
func hear(ctx context.Context, conn *pgx.Conn, done func() bool) error {
	for !done() {
		if err := conn.PgConn().WaitForNotification(ctx); err != nil {
			return err
		}
	}
	return nil
}

// close stops the feed and waits for it.
func (f *changeFeed) close() {
	f.once.Do(func() {
		f.stop()
		<-f.done
	})
}
