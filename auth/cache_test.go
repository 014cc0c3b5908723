package auth

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/drivertest"
)

// countingDriver counts the transactions begun on a driver, short reads included.
type countingDriver struct {
	store.Driver
	begins atomic.Int64
}

func (d *countingDriver) Begin(ctx context.Context, writable bool) (store.Tx, error) {
	d.begins.Add(1)
	return d.Driver.Begin(ctx, writable)
}

func (d *countingDriver) BeginShort(ctx context.Context) (store.Tx, error) {
	d.begins.Add(1)
	return store.BeginShort(ctx, d.Driver)
}

// cachedAuthority returns an Authority with a cache over db, counting its transactions.
func cachedAuthority(t *testing.T, db store.Driver, cfg CacheConfig) (*Authority, *countingDriver) {
	t.Helper()
	cd := &countingDriver{Driver: db}
	a, err := New(context.Background(), cd, testIssuer)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.UseCache(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return a, cd
}

// changeUser replaces a user's document and appends its change event in one
// transaction, as the engine does.
func changeUser(t *testing.T, db store.Driver, id, name, doc string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	row, err := tx.Get(ctx, userKind, id)
	if err != nil {
		t.Fatal(err)
	}
	next := row
	next.Version, next.Doc = row.Version+1, []byte(doc)
	if err := tx.Update(ctx, next, row.Version); err != nil {
		t.Fatal(err)
	}
	if err := tx.AppendEvent(ctx, meridian.ChangeEvent{ID: "e-" + id, EventType: meridian.EventEntityUpdated,
		EntityType: userKind, EntityID: id, EntityFQN: name, UserName: "test", Timestamp: time.Now().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestCachedPrincipalCostsNoReadUntilItsUserOrTokenChanges(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	// A long poll: only the local hooks (Changed, Revoke) can invalidate here.
	a, cd := cachedAuthority(t, db, CacheConfig{Poll: time.Hour})
	raw, tok, err := a.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, raw); err != nil {
		t.Fatal(err)
	}
	before := cd.begins.Load()
	for range 10 {
		p, err := a.Verify(ctx, raw)
		if err != nil || !p.HasRole(meridian.RoleDataSteward) {
			t.Fatalf("cached Verify = %+v, %v", p, err)
		}
		p.Roles[0] = "tampered" // a caller's change must not reach the cache
	}
	if n := cd.begins.Load() - before; n != 0 {
		t.Fatalf("10 cached verifications began %d transactions, want 0", n)
	}

	changeUser(t, db, aliceID, "alice", `{"name":"alice","roles":["DataConsumer"]}`)
	a.Changed()
	if p, err := a.Verify(ctx, raw); err != nil || p.HasRole(meridian.RoleDataSteward) || !p.HasRole(meridian.RoleDataConsumer) {
		t.Fatalf("after a role change Verify = %+v, %v; want DataConsumer only", p, err)
	}

	if err := a.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, raw); meridian.ErrorMessage(err) != "Token has been revoked" {
		t.Fatalf("after Revoke Verify = %v", err)
	}
}

func TestCacheFollowsAnotherAuthorityOnTheSameDatabase(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		ctx := context.Background()
		db := open(t, Module())
		addUser(t, db, aliceID, "alice", `{"name":"alice","roles":["DataSteward"]}`)
		cfg := CacheConfig{Poll: 50 * time.Millisecond}
		here, _ := cachedAuthority(t, db, cfg)
		there, _ := cachedAuthority(t, db, cfg)
		raw, tok, err := here.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := there.Verify(ctx, raw); err != nil {
			t.Fatal(err)
		}
		if err := here.Revoke(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		// Without Changed: the other Authority learns it from the database, after Poll.
		time.Sleep(cfg.Poll)
		if _, err := there.Verify(ctx, raw); meridian.ErrorMessage(err) != "Token has been revoked" {
			t.Fatalf("Verify on the other Authority after Poll = %v", err)
		}
	})
}

// TestVerifyDoesNotQueueBehindLongReads: with every connection of the main reader pool
// held (by long searches, say), a token that is not cached still verifies, on the
// driver's short-read pool.
func TestVerifyDoesNotQueueBehindLongReads(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, open drivertest.Open) {
		ctx := context.Background()
		db := open(t, Module())
		addUser(t, db, aliceID, "alice", `{"name":"alice","roles":["DataSteward"]}`)
		a, err := New(ctx, db, testIssuer)
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := a.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "")
		if err != nil {
			t.Fatal(err)
		}
		for range 4 { // SQLite's reader pool
			tx, err := db.Begin(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
		}
		vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := a.Verify(vctx, raw); err != nil {
			t.Fatalf("Verify with the reader pool held: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Verify took %s with the reader pool held", d)
		}
	})
}
