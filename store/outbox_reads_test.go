package store

import (
	"context"
	"errors"
	"runtime"
	"slices"
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

// seqs lists the sequence numbers of events.
func seqs(events []meridian.ChangeEvent) []int64 {
	out := []int64{}
	for _, e := range events {
		out = append(out, e.Seq)
	}
	return out
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
			events, err := r.read(ctx, 7, true, l.load)
			if err != nil {
				t.Error(err)
			}
			got[i] = events
		}()
	}
	for l.count() == 0 { // the first lane's read is under way; the others join it
		runtime.Gosched()
	}
	close(l.gate)
	wg.Wait()
	if n := l.count(); n != 1 {
		t.Fatalf("%d lanes at one position read %d times, want once", lanes, n)
	}
	for i, events := range got {
		if len(events) != 2 || events[0].Seq != 8 {
			t.Errorf("lane %d got %v, want the events 8 and 9", i, seqs(events))
		}
	}
}

func TestALaneTakesTheEventsAfterItsPositionFromARecentRead(t *testing.T) {
	ctx := context.Background()
	events := []meridian.ChangeEvent{{Seq: 8}, {Seq: 9}, {Seq: 11}, {Seq: 12}}
	cases := []struct {
		name  string
		load  *countingLoad
		at    int64 // the second lane's position; the first read from 7
		loads int
		want  []int64
	}{
		{"the same position", &countingLoad{events: events}, 7, 1, []int64{8, 9, 11, 12}},
		{"a position the read covers", &countingLoad{events: events}, 9, 1, []int64{11, 12}},
		{"a position in a gap of the read", &countingLoad{events: events}, 10, 1, []int64{11, 12}},
		{"the read's last event", &countingLoad{events: events}, 12, 2, []int64{8, 9, 11, 12}},
		{"before the read", &countingLoad{events: events}, 6, 2, []int64{8, 9, 11, 12}},
		{"after a failed read", &countingLoad{err: errors.New("disk on fire")}, 7, 2, []int64{}},
		{"after an empty read", &countingLoad{}, 7, 2, []int64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r eventReads
			_, _ = r.read(ctx, 7, true, c.load.load)
			got, _ := r.read(ctx, c.at, true, c.load.load)
			if n := c.load.count(); n != c.loads {
				t.Errorf("%d loads, want %d", n, c.loads)
			}
			if s := seqs(got); !slices.Equal(s, c.want) {
				t.Errorf("the lane at %d got %v, want %v", c.at, s, c.want)
			}
		})
	}
}

func TestSharedReadsAreBoundedAndALoneLaneKeepsNone(t *testing.T) {
	ctx := context.Background()
	var r eventReads
	for pos := range int64(3 * sharedReads) {
		l := &countingLoad{events: []meridian.ChangeEvent{{Seq: pos + 1}}}
		if _, err := r.read(ctx, pos, true, l.load); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.reads); n != sharedReads {
		t.Errorf("%d reads kept, want at most %d", n, sharedReads)
	}
	var alone eventReads
	if _, err := alone.read(ctx, 0, false, (&countingLoad{events: []meridian.ChangeEvent{{Seq: 1}}}).load); err != nil {
		t.Fatal(err)
	}
	if n := len(alone.reads); n != 0 {
		t.Errorf("a dispatcher of one lane kept %d reads", n)
	}
}
