package store

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
)

// countingLoad is an outbox read that counts its calls and answers events, or fails.
type countingLoad struct {
	mu     sync.Mutex
	calls  int
	events []meridian.ChangeEvent
	err    error
	gate   chan struct{} // when set, a load waits for it
}

func (l *countingLoad) load() ([]meridian.ChangeEvent, error) {
	l.mu.Lock()
	l.calls++
	l.mu.Unlock()
	if l.gate != nil {
		<-l.gate
	}
	return l.events, l.err
}

func (l *countingLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

func TestLanesAtOnePositionShareOneRead(t *testing.T) {
	ctx := context.Background()
	var r eventReads
	l := &countingLoad{events: []meridian.ChangeEvent{{Seq: 8}, {Seq: 9}}, gate: make(chan struct{})}
	const lanes = 3
	got := make([][]meridian.ChangeEvent, lanes)
	var wg sync.WaitGroup
	for i := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events, err := r.read(ctx, 7, lanes, l.load)
			if err != nil {
				t.Error(err)
			}
			got[i] = events
		}()
	}
	for { // every lane has joined the read under way: the last to join drops it
		r.mu.Lock()
		joined := l.count() == 1 && len(r.reads) == 0
		r.mu.Unlock()
		if joined {
			break
		}
		runtime.Gosched()
	}
	close(l.gate)
	wg.Wait()
	if n := l.count(); n != 1 {
		t.Fatalf("%d lanes at one position read %d times, want once", lanes, n)
	}
	for i, events := range got {
		if len(events) != 2 || events[0].Seq != 8 {
			t.Errorf("lane %d got %v, want the events 8 and 9", i, events)
		}
	}
	// Every lane took it: the next read at that position reads again.
	if _, err := r.read(ctx, 7, lanes, l.load); err != nil || l.count() != 2 {
		t.Errorf("a read taken by every lane was kept (%d loads, %v)", l.count(), err)
	}
}

func TestFailedEmptyAndOtherPositionsReadsAreNotShared(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		load   *countingLoad
		second int64 // the second lane's position
		want   int   // loads for two lanes of three
	}{
		{"a failed read", &countingLoad{err: errors.New("disk on fire")}, 7, 2},
		{"an empty read", &countingLoad{}, 7, 2},
		{"another position", &countingLoad{events: []meridian.ChangeEvent{{Seq: 8}}}, 8, 2},
		{"the same position", &countingLoad{events: []meridian.ChangeEvent{{Seq: 8}}}, 7, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r eventReads
			_, _ = r.read(ctx, 7, 3, c.load.load)
			_, _ = r.read(ctx, c.second, 3, c.load.load)
			if n := c.load.count(); n != c.want {
				t.Errorf("%d loads, want %d", n, c.want)
			}
		})
	}
}

func TestSharedReadsAreBounded(t *testing.T) {
	ctx := context.Background()
	var r eventReads
	l := &countingLoad{events: []meridian.ChangeEvent{{Seq: 1}}}
	for pos := range int64(3 * sharedReads) {
		if _, err := r.read(ctx, pos, 5, l.load); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.reads); n != sharedReads {
		t.Errorf("%d reads kept, want at most %d", n, sharedReads)
	}
	if _, _ = r.read(ctx, 0, 5, l.load); l.count() != 3*sharedReads+1 {
		t.Errorf("the oldest read was still shared")
	}
}
