package store

import (
	"context"
	"slices"
	"sync"

	"github.com/meridian-catalog/meridian"
)

// sharedReads is how many recent outbox reads eventReads keeps for lanes still to come.
const sharedReads = 4

// eventReads shares the outbox reads of lanes at one position. One commit wakes every
// lane at once, and each would read and decode the same events (an entity document
// each); the first lane reads them and the others at the same position wait for it and
// take its events. A read is kept until every lane has taken it, or until sharedReads
// newer ones push it out; a failed or empty read is not kept (new events may follow).
// The lanes share the events: consumers must not modify them.
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
	taken  int // lanes that took it, the reader included
}

// read returns the events after the position, from a read of another lane at the same
// position when there is one, else from load. lanes is how many lanes may take a read.
// Errors: load's, or ctx's while it waits for another lane's read.
func (r *eventReads) read(ctx context.Context, after int64, lanes int, load func() ([]meridian.ChangeEvent, error)) ([]meridian.ChangeEvent, error) {
	r.mu.Lock()
	for _, e := range r.reads {
		if e.after != after {
			continue
		}
		if e.taken++; e.taken >= lanes {
			r.drop(e)
		}
		r.mu.Unlock()
		select {
		case <-e.done:
			return e.events, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &eventRead{after: after, done: make(chan struct{}), taken: 1}
	if lanes > 1 {
		if len(r.reads) == sharedReads {
			r.reads = r.reads[1:]
		}
		r.reads = append(r.reads, e)
	}
	r.mu.Unlock()

	e.events, e.err = load()
	if e.err != nil || len(e.events) == 0 {
		r.mu.Lock()
		r.drop(e)
		r.mu.Unlock()
	}
	close(e.done)
	return e.events, e.err
}

// drop forgets a read; r.mu is held.
func (r *eventReads) drop(e *eventRead) {
	r.reads = slices.DeleteFunc(r.reads, func(x *eventRead) bool { return x == e })
}
