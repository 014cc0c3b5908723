package postgres

import (
	"context"
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
// within a millisecond of the commit, and a GET answered from the cache costs no
// round trip (measured on 2 cores: one round trip took about as long as the static
// HTTP floor's whole request).
//
// A commit made through the DB moves the counter on itself, before Commit returns, so
// every engine and module of one process sees it at once.
//
// A connection can die without a sign: the listener proves its connection every
// feedPing with a query, and the counter is trusted only for feedStale after the last
// proof was sent. PostgreSQL sends a listening session the notifications committed
// before a query ahead of that query's answer, so once a proof returns, every commit
// acknowledged before it was sent has been counted. While the feed is down or its
// proof is too old, DataVersion falls back to the server's current snapshot (one round
// trip), which reflects every commit at once.
const (
	changesChannel = "meridian_changes"
	feedPing       = 250 * time.Millisecond
	feedStale      = time.Second
	feedRetry      = time.Second // wait before reconnecting a listener that failed
)

// feedApplication names the listener's session in pg_stat_activity.
const feedApplication = "meridian change feed"

// changeFeed follows changesChannel for one DB.
type changeFeed struct {
	epoch  time.Time     // monotonic base of proved
	gen    atomic.Uint64 // moves on with every notification and every (re)connection
	proved atomic.Int64  // since epoch, when the last proof that came back was sent; 0: none
	stop   context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startChangeFeed starts listening, on a connection made from cc, in the background.
func startChangeFeed(cc *pgx.ConnConfig) *changeFeed {
	ctx, stop := context.WithCancel(context.Background())
	f := &changeFeed{epoch: time.Now(), stop: stop, done: make(chan struct{})}
	cc = cc.Copy()
	cc.RuntimeParams["application_name"] = feedApplication
	cc.OnNotification = func(*pgconn.PgConn, *pgconn.Notification) { f.gen.Add(1) }
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

// version answers the feed's data version, and false when the feed cannot be trusted
// (not connected, or its last proof is older than feedStale).
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

// listen connects, listens and proves the connection every feedPing until the
// connection fails or ctx is done.
func (f *changeFeed) listen(ctx context.Context, cc *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	f.gen.Add(1) // whatever was committed while nobody listened
	for {
		sent := time.Since(f.epoch)
		pctx, cancel := context.WithTimeout(ctx, feedStale)
		_, err := conn.Exec(pctx, "SELECT 1")
		cancel()
		if err != nil {
			return err
		}
		f.proved.Store(int64(max(sent, 1)))
		// Wait for notifications until the next proof is due; OnNotification counts
		// them. A timeout leaves the connection usable (pgconn's default deadline
		// handler).
		wctx, cancel := context.WithTimeout(ctx, feedPing)
		for err == nil {
			err = conn.PgConn().WaitForNotification(wctx)
		}
		cancel()
		if ctx.Err() != nil || !pgconn.Timeout(err) {
			return err
		}
	}
}

// close stops the feed and waits for it.
func (f *changeFeed) close() {
	f.once.Do(func() {
		f.stop()
		<-f.done
	})
}
