package storetest

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian/store"
)

// testConsumersYieldToABurst runs a dispatcher with a short Yield and checks how a
// consumer meets a burst of writes. On a driver with a single writer (a GroupCommitter):
// a write at an ordinary pace reaches it at once; during a burst that saturates the
// writer it waits (and says so in Status); it waits no longer than Yield while the burst
// goes on; it catches up once the burst ends. On any other driver it never waits.
func testConsumersYieldToABurst(t *testing.T, f *Fixture) {
	_, single := f.Driver.(store.GroupCommitter)
	rec := &recorder{name: "views", db: f.Driver}
	d := store.NewDispatcher(f.Driver, nil, rec)
	d.Yield = 1500 * time.Millisecond
	defer runDispatcher(f, d)()
	status := func() store.ConsumerStatus {
		t.Helper()
		s, err := d.Status(f.Ctx)
		if err != nil || len(s) != 1 {
			t.Fatalf("status = %+v, %v", s, err)
		}
		return s[0]
	}
	waitFor := func(what string, limit time.Duration, ok func(store.ConsumerStatus) bool) store.ConsumerStatus {
		t.Helper()
		deadline := time.Now().Add(limit)
		for {
			s := status()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s; status %+v", what, limit, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// An ordinary write is delivered at once, not after a yield.
	f.createGlossaries(0, 1)
	d.Notify()
	waitFor("a single write delivered", 2*time.Second, func(s store.ConsumerStatus) bool { return s.Pending == 0 && !s.Yielding })

	// A burst: writers that create back to back until stopped.
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		created atomic.Int64
		errs    = make(chan error, 4)
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				name := "burst" + strconv.Itoa(w) + "_" + strconv.Itoa(i)
				if _, err := f.E.Create(f.Ctx, f.Admin, "glossary", f.Doc(`{"name":"`+name+`","description":"d"}`)); err != nil {
					errs <- err
					return
				}
				created.Add(1)
				d.Notify()
			}
		}()
	}
	endBurst := func() {
		stop.Store(true)
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatalf("a write of the burst failed: %v", err)
		default:
		}
	}
	defer endBurst()

	if !single {
		// No single writer to give way to: the consumer never waits.
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			if s := status(); s.Yielding {
				t.Fatalf("the consumer yielded on a driver without a single writer: %+v", s)
			}
			time.Sleep(20 * time.Millisecond)
		}
		endBurst()
		waitFor("caught up after the burst", 10*time.Second, func(s store.ConsumerStatus) bool { return s.Pending == 0 })
		return
	}

	waitFor("the consumer yields to the burst", 5*time.Second, func(s store.ConsumerStatus) bool { return s.Yielding })
	before := len(f.seen("views"))
	// The burst goes on past Yield: the consumer handles what accumulated meanwhile.
	deadline := time.Now().Add(d.Yield + 3*time.Second)
	for len(f.seen("views")) == before {
		if time.Now().After(deadline) {
			t.Fatalf("the consumer handled nothing for %s of a burst: it must wait at most Yield (%s); status %+v",
				d.Yield+3*time.Second, d.Yield, status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	endBurst()
	if created.Load() == 0 {
		t.Fatal("the burst wrote nothing")
	}
	waitFor("caught up after the burst", 10*time.Second, func(s store.ConsumerStatus) bool { return s.Pending == 0 && !s.Yielding })
}
