package store

import (
	"context"
	"time"
)

// DefaultYield is how long, at most, the outbox consumers wait by default while entity
// writes stream into a saturated single writer (Dispatcher.Yield).
const DefaultYield = 30 * time.Second

// yieldWindow is how often the dispatcher reads the single writer's load, and the
// shortest span it judges that load over.
const yieldWindow = 100 * time.Millisecond

// yieldSpan is the longest span the dispatcher judges the writer's load over: a burst
// of large writes (bulk requests, each prepared outside the writer before it commits)
// leaves the writer idle for a window now and then, and consumers that ran in each
// such window would take the CPU the burst's next writes need.
const yieldSpan = time.Second

// yieldBusy is the share of a span the single writer must have been busy, while entity
// writes kept arriving, for the consumers to yield.
const yieldBusy = 0.5

// loadSample is one reading of the single writer's load.
type loadSample struct {
	at     time.Time
	busy   time.Duration // GroupStats.Busy
	writes int64         // the entity writes notified so far
}

// saturated reports whether, between the samples a and b, entity writes arrived and the
// single writer was busy at least yieldBusy of the time: the writes are queueing for
// it, and a consumer's work would only slow them down.
func saturated(a, b loadSample) bool {
	span := b.at.Sub(a.at)
	return span > 0 && b.writes > a.writes && float64(b.busy-a.busy) >= yieldBusy*float64(span)
}

// loadHistory holds the samples of the last yieldSpan, oldest first.
type loadHistory []loadSample

// add records cur and reports whether the writer is saturated: over the last window,
// or over the whole span, so that one quiet window inside a burst does not end it.
func (h *loadHistory) add(cur loadSample) bool {
	s := *h
	sat := len(s) > 0 && (saturated(s[len(s)-1], cur) || saturated(s[0], cur))
	s = append(s, cur)
	for len(s) > 1 && cur.at.Sub(s[1].at) >= yieldSpan {
		s = s[1:]
	}
	*h = s
	return sat
}

// watchLoad reads the single writer's load every yieldWindow until ctx ends and keeps
// d.saturated up to date.
func (d *Dispatcher) watchLoad(ctx context.Context, g GroupCommitter) {
	t := time.NewTicker(yieldWindow)
	defer t.Stop()
	sample := func() loadSample {
		return loadSample{at: time.Now(), busy: g.GroupStats().Busy, writes: d.writes.Load()}
	}
	var hist loadHistory
	hist.add(sample())
	for {
		select {
		case <-ctx.Done():
			d.saturated.Store(false)
			return
		case <-t.C:
		}
		d.saturated.Store(hist.add(sample()))
	}
}

// yield holds a lane back while entity writes stream into a saturated single writer,
// until d.Yield after the lane was last caught up: the CPU and the writer serve the
// writes first, and the lane then handles what accumulated, in full batches and without
// yielding again until it has caught up, so no event waits much longer than Yield. It
// returns at once when the writer is not saturated, so a write at an ordinary pace
// reaches the consumers without delay. The lane's mu is held.
func (d *Dispatcher) yield(ctx context.Context, l *lane) {
	if !d.saturated.Load() {
		return
	}
	wait := time.Until(l.caughtUp.Add(d.Yield))
	if wait <= 0 {
		return
	}
	l.yielding.Store(true)
	defer l.yielding.Store(false)
	limit := time.NewTimer(wait)
	defer limit.Stop()
	t := time.NewTicker(yieldWindow)
	defer t.Stop()
	for d.saturated.Load() {
		select {
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		case <-t.C:
		}
	}
}
