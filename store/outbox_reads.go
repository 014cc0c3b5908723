package store

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/meridian-catalog/meridian"
)

// sharedReads is how many recent outbox reads eventReads keeps for other lanes.
const sharedReads = 4

// eventReads shares the outbox reads of the lanes. One commit wakes every lane at
// once, and each would read and decode the same events (an entity document each). A
// lane at a position that a recent read covers (it read from that position or an
// earlier one, and returned events after it) takes that read's events after its
// position instead of reading: they are what a read from its position would have
// answered then, or the first of them. A lane at the position of a read under way
// waits for it. The last sharedReads reads are kept; a failed or empty read is not
// (new events may follow). The lanes share the events: consumers must not modify them.
type eventReads struct {
	mu    sync.Mutex
	reads []*eventRead // oldest first
}

// eventRead is one read of the events after a position, done or under way.
type eventRead struct {
	after  int64
	done   chan struct{} // closed when events and err are set
	events []meridian.ChangeEvent
	err    error
}

// covers reports whether a finished read holds events after the position.
func (e *eventRead) covers(after int64) bool {
	select {
	case <-e.done:
	default:
		return false
	}
	n := len(e.events)
	return e.err == nil && e.after <= after && n > 0 && e.events[n-1].Seq > after
}

// read returns the events after the position: from a recent read of another lane that
// covers it, else from load. shared says whether other lanes may take the read.
// Errors: load's, or ctx's while it waits for another lane's read.
func (r *eventReads) read(ctx context.Context, after int64, shared bool, load func() ([]meridian.ChangeEvent, error)) ([]meridian.ChangeEvent, error) {
	r.mu.Lock()
	for i := len(r.reads) - 1; i >= 0; i-- {
		e := r.reads[i]
		if e.covers(after) {
			r.mu.Unlock()
			from, _ := slices.BinarySearchFunc(e.events, after+1, func(ev meridian.ChangeEvent, seq int64) int {
				return cmp.Compare(ev.Seq, seq)
			})
			return e.events[from:], nil
		}
		if e.after != after {
			continue
		}
		select {
		case <-e.done: // an empty or failed read, about to be dropped
			continue
		default:
		}
		r.mu.Unlock()
		select {
		case <-e.done:
			return e.events, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &eventRead{after: after, done: make(chan struct{})}
	if shared {
		if len(r.reads) == sharedReads {
			r.reads = r.reads[1:]
		}
		r.reads = append(r.reads, e)
	}
	r.mu.Unlock()

	e.events, e.err = load()
	if e.err != nil || len(e.events) == 0 {
		r.mu.Lock()
		r.reads = slices.DeleteFunc(r.reads, func(x *eventRead) bool { return x == e })
		r.mu.Unlock()
	}
	close(e.done)
	return e.events, e.err
}
