package postgres

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// feedWait bounds how long the tests wait for the change feed: its own bound
// (feedStale) plus room for a loaded machine.
const feedWait = 5 * time.Second

// versionOf reads db's DataVersion.
func versionOf(t *testing.T, db *DB) string {
	t.Helper()
	v, err := db.DataVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// awaitVersion waits until db's DataVersion satisfies ok and answers it.
func awaitVersion(t *testing.T, db *DB, what string, ok func(string) bool) string {
	t.Helper()
	for end := time.Now().Add(feedWait); ; time.Sleep(time.Millisecond) {
		v := versionOf(t, db)
		if ok(v) {
			return v
		}
		if time.Now().After(end) {
			t.Fatalf("%s: still %q after %v", what, v, feedWait)
		}
	}
}

func fromFeed(v string) bool { return strings.HasPrefix(v, "feed ") }

// twoNodes opens two DBs on one throwaway database, as two servers sharing it.
func twoNodes(t *testing.T) (a, b *DB) {
	t.Helper()
	a, url := openTemp(t)
	b, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

// putSetting commits a setting through db.
func putSetting(t *testing.T, db *DB, v string) {
	t.Helper()
	tx, err := db.Begin(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.PutSetting(context.Background(), "k", v); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestDataVersionChangesWithEveryCommitOfAnyNode checks the read cache's signal on
// PostgreSQL, served by the change feed: a commit through another pool on the same
// database (another node) changes DataVersion, including the commit of a transaction
// that was already writing when the version was read, a transaction rolled back does
// not, and a commit through the same DB does at once. (Whether a read leaves the
// snapshot alone is not checked here: other tests write to other databases of the
// same server at the same time.)
func TestDataVersionChangesWithEveryCommitOfAnyNode(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	changed := func(from string) func(string) bool {
		return func(v string) bool { return v != from && fromFeed(v) }
	}

	v0 := awaitVersion(t, a, "the change feed never became ready", fromFeed)
	putSetting(t, b, "1")
	v1 := awaitVersion(t, a, "another node's commit left the data version", changed(v0))

	// A transaction that has written before the version is read, and commits after.
	tx, err := b.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.PutSetting(ctx, "k", "2"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if during := versionOf(t, a); during != v1 {
		t.Fatalf("a transaction not yet committed moved the data version from %s to %s", v1, during)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	v2 := awaitVersion(t, a, "the commit of a transaction in progress left the data version", changed(v1))

	// Rolled back: nothing to see.
	tx, err = b.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.PutSetting(ctx, "k", "3"); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	time.Sleep(50 * time.Millisecond)
	if after := versionOf(t, a); after != v2 {
		t.Fatalf("a rolled-back transaction moved the data version from %s to %s", v2, after)
	}

	// A commit through the same DB (another engine or a module of this process) is
	// seen at once, before its notification comes back.
	putSetting(t, a, "4")
	if after := versionOf(t, a); after == v2 {
		t.Fatalf("a commit through this DB left the data version at %s", v2)
	}
}

// TestDataVersionSeesCommitsWhileTheFeedIsDown kills the listeners' sessions: DataVersion
// falls back to the snapshot, which a commit changes at once, and the feed comes back.
func TestDataVersionSeesCommitsWhileTheFeedIsDown(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	awaitVersion(t, b, "b's change feed never became ready", fromFeed)
	v0 := awaitVersion(t, a, "the change feed never became ready", fromFeed)

	var killed int
	err := b.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`,
		feedApplication).Scan(&killed)
	if err != nil || killed != 2 { // a's and b's
		t.Fatalf("terminated %d listeners (%v), want 2", killed, err)
	}
	down := awaitVersion(t, a, "the feed's version was still used after its session was killed",
		func(v string) bool { return !fromFeed(v) })
	putSetting(t, b, "1")
	if v := versionOf(t, a); v == down || v == v0 {
		t.Fatalf("a commit while the feed was down left the data version at %s", v)
	}
	awaitVersion(t, a, "the change feed did not come back", fromFeed)
}

// TestChangeFeedIsTrustedOnlyWhileProved checks the feed's bound on a connection that
// died without a sign: its counter is used only for feedStale after the last proof.
func TestChangeFeedIsTrustedOnlyWhileProved(t *testing.T) {
	f := &changeFeed{epoch: time.Now().Add(-time.Hour)}
	tests := []struct {
		name   string
		proved time.Duration // since epoch; 0: never
		want   bool
	}{
		{"never proved", 0, false},
		{"proved just now", time.Hour, true},
		{"proved within the bound", time.Hour - feedStale/2, true},
		{"proof older than the bound", time.Hour - 2*feedStale, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.proved.Store(int64(tt.proved))
			if _, ok := f.version(); ok != tt.want {
				t.Errorf("trusted = %v, want %v", ok, tt.want)
			}
		})
	}
}

// freezer forwards TCP connections to a server and, once frozen, stops passing the
// server's bytes on without closing anything: a connection that died without a sign.
type freezer struct {
	ln     net.Listener
	target string
	frozen atomic.Bool
}

func newFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go io.Copy(s, c)
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := s.Read(buf)
					if err != nil {
						return
					}
					if !f.frozen.Load() {
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return f
}

// TestChangeFeedStopsTrustingAConnectionThatWentSilent freezes the listener's
// connection: its probes go unheard, so within feedStale the feed is no longer trusted
// (long before the listener gives the connection up), and DataVersion asks the server
// instead.
func TestChangeFeedStopsTrustingAConnectionThatWentSilent(t *testing.T) {
	_, url := openTemp(t)
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	fz := newFreezer(t, net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))))
	host, port, _ := net.SplitHostPort(fz.ln.Addr().String())
	cc.Host = host
	p, _ := strconv.Atoi(port)
	cc.Port = uint16(p)
	f := startChangeFeed(cc, queueFull)
	defer f.close()

	trusted := func() bool { _, ok := f.version(); return ok }
	for end := time.Now().Add(feedWait); !trusted(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the feed never became trusted")
		}
	}
	fz.frozen.Store(true)
	froze := time.Now()
	for trusted() {
		if time.Since(froze) > feedWait {
			t.Fatalf("the feed is still trusted %v after its connection went silent", feedWait)
		}
		time.Sleep(time.Millisecond)
	}
	if d := time.Since(froze); d > feedStale+300*time.Millisecond {
		t.Errorf("the feed was trusted %v after its connection went silent, want at most %v", d, feedStale)
	}
}

// TestChangeFeedsEndEachOthersSessionsWhenTheQueueFills checks the guard against a
// listener that stops reading (a paused server) filling PostgreSQL's notification
// queue: past the usage threshold (0 for the second feed here, so at once) a feed ends
// the other feeds' sessions, and they come back.
func TestChangeFeedsEndEachOthersSessionsWhenTheQueueFills(t *testing.T) {
	db, url := openTemp(t)
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	feeds := func() []int {
		t.Helper()
		rows, err := db.pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1`, feedApplication)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	awaitVersion(t, db, "the change feed never became ready", fromFeed)
	before := feeds()
	if len(before) != 1 {
		t.Fatalf("feed sessions %v, want the DB's alone", before)
	}
	other := startChangeFeed(cc, 0)
	defer other.close() // also when the test fails: it would go on ending the DB's feed
	for end := time.Now().Add(feedWait); slices.Contains(feeds(), before[0]); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the DB's feed session %d was not ended within %v", before[0], feedWait)
		}
	}
	other.close() // before the DB's feed can stay back
	awaitVersion(t, db, "the DB's feed did not come back", fromFeed)
}
