package graph

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Outbox is the change-event log a projection restored from a snapshot catches up
// from; CatalogSource implements it.
type Outbox interface {
	// Mark reports where the outbox stands: its head and what retention has pruned.
	Mark(ctx context.Context) (store.OutboxMark, error)
	// EventsAfter returns at most limit events after the sequence number, oldest first.
	EventsAfter(ctx context.Context, after int64, limit int) ([]meridian.ChangeEvent, error)
}

// catchUpPage is how many events one read of a catch-up lists.
const catchUpPage = 1000

// SnapshotStats describe one snapshot written or loaded.
type SnapshotStats struct {
	// Seq is the outbox sequence number the snapshot reflects the catalog up to.
	Seq int64
	// Bytes is the file's size (0 when loading).
	Bytes int64
	// Replayed is how many entities a restore re-projected to catch up.
	Replayed int
	// Took is how long writing, or loading and catching up, took.
	Took time.Duration
}

// advance records that the projection reflects the catalog up to the event seq (whose
// id is id), and that it changed since the last snapshot. The lock is held.
func (s *Sync) advance(seq int64, id string) {
	if seq >= s.applied {
		s.applied, s.appliedID = seq, id
	}
	s.gen++
}

// SaveSnapshot writes the embedded store to path (Store.WriteSnapshot) with the outbox
// sequence number it reflects, when the projection is ready and has changed since the
// last snapshot (always when force). It holds the synchroniser's lock only while the
// store's tables are copied, so the consumer waits for that copy, not for the file.
// It reports false when nothing was written. Errors: the file system's.
func (s *Sync) SaveSnapshot(path string, force bool) (SnapshotStats, bool, error) {
	e, ok := s.backend.(*Embedded)
	if !ok || path == "" || !s.Ready() {
		return SnapshotStats{}, false, nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	start := time.Now()
	s.mu.Lock()
	if s.gen == s.savedGen && !force {
		s.mu.Unlock()
		return SnapshotStats{}, false, nil
	}
	img := e.Store().image()
	meta := SnapshotMeta{Seq: s.applied, EventID: s.appliedID, Ontology: s.onto.Fingerprint(), Version: ProjectionVersion}
	gen := s.gen
	s.mu.Unlock()
	n, err := writeSnapshot(path, img, meta)
	if err != nil {
		return SnapshotStats{}, false, err
	}
	s.mu.Lock()
	s.savedGen = max(s.savedGen, gen)
	s.mu.Unlock()
	st := SnapshotStats{Seq: meta.Seq, Bytes: n, Took: time.Since(start)}
	s.log.Info("graph snapshot written", "path", path, "seq", st.Seq, "bytes", st.Bytes, "took", st.Took.Round(time.Millisecond))
	return st, true, nil
}

// RunSnapshots writes a snapshot to path every interval when the projection changed
// meanwhile, and sooner once enough events have been applied since the last one
// (snapshotDue), until ctx ends. A failed write is logged and tried again at the next
// check.
func (s *Sync) RunSnapshots(ctx context.Context, path string, interval time.Duration, changes uint64) {
	if _, ok := s.backend.(*Embedded); !ok || path == "" || interval <= 0 {
		return
	}
	check := min(interval, 10*time.Second)
	t := time.NewTicker(check)
	defer t.Stop()
	last := time.Now()
	s.mu.Lock()
	lastSeq := s.applied
	s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		pending := s.gen - s.savedGen
		s.mu.Unlock()
		if !snapshotDue(pending, lastSeq, changes, time.Since(last), interval) {
			continue
		}
		st, _, err := s.SaveSnapshot(path, false)
		if err != nil {
			s.log.Warn("graph snapshot not written; will retry", "path", path, "err", err)
			continue
		}
		last, lastSeq = time.Now(), max(lastSeq, st.Seq)
	}
}

// maxSnapshotChanges bounds how many events snapshotDue lets pass between two
// snapshots of a large catalog, and so the events a restart replays.
const maxSnapshotChanges = 50_000

// snapshotDue reports whether a snapshot is due: the projection changed (pending
// events since the last one) and interval has passed since it, or more events than
// changes and than half the outbox position the last one reflected (lastSeq, at most
// maxSnapshotChanges). A snapshot's cost grows with the catalog, so a fixed count
// wrote one every 10,000 events of a 100,000-table load, each larger than the last:
// nine, 67 s of work beside the load. Scaled, each is at least half again as large as
// the one before, and their sum stays within three times the last.
func snapshotDue(pending uint64, lastSeq int64, changes uint64, since, interval time.Duration) bool {
	if pending == 0 {
		return false
	}
	enough := max(changes, min(uint64(max(lastSeq, 0))/2, maxSnapshotChanges))
	return pending >= enough || since >= interval
}

// Restore loads the snapshot at path into the embedded store and catches it up with the
// outbox: the entities of every event after the snapshot's sequence number are
// re-projected from the catalog (each once, as the consumer would), then the
// projection is ready. It reports false, having changed nothing, when there is no
// usable snapshot: none, damaged or foreign (logged), written under another projection
// version or ontology, of another database, or older than what retention has pruned
// from the outbox; the caller rebuilds then. Errors: the catalog's while catching up
// (the store is then emptied again).
func (s *Sync) Restore(ctx context.Context, path string, out Outbox) (SnapshotStats, bool, error) {
	e, ok := s.backend.(*Embedded)
	if !ok || path == "" {
		return SnapshotStats{}, false, nil
	}
	start := time.Now()
	removeStaleTemps(path, s.log)
	st, meta, err := ReadSnapshot(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.log.Info("no graph snapshot; the projection is rebuilt", "path", path)
		return SnapshotStats{}, false, nil
	case err != nil:
		s.log.Warn("the graph snapshot is ignored; the projection is rebuilt", "path", path, "err", err)
		return SnapshotStats{}, false, nil
	}
	why := ""
	switch {
	case meta.Version != ProjectionVersion:
		why = "it was written under another projection version"
	case meta.Ontology != s.onto.Fingerprint():
		why = "it was written under another ontology"
	case meta.Seq <= 0 || meta.EventID == "":
		why = "it names no outbox event"
	}
	if why != "" {
		s.log.Info("the graph snapshot is ignored; the projection is rebuilt", "path", path, "reason", why)
		return SnapshotStats{}, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mark, err := out.Mark(ctx)
	if err != nil {
		return SnapshotStats{}, false, err
	}
	switch {
	case meta.Seq > mark.Head:
		why = "it is ahead of the outbox (another database, or one restored from a backup)"
	case mark.Pruned > meta.Seq:
		why = "events after it were pruned from the outbox"
	default:
		evs, err := out.EventsAfter(ctx, meta.Seq-1, 1)
		if err != nil {
			return SnapshotStats{}, false, err
		}
		if len(evs) == 0 || evs[0].Seq != meta.Seq || evs[0].ID != meta.EventID {
			why = "its outbox event is not this database's"
		}
	}
	if why != "" {
		s.log.Info("the graph snapshot is ignored; the projection is rebuilt", "path", path, "reason", why,
			"snapshotSeq", meta.Seq, "outboxHead", mark.Head, "outboxPruned", mark.Pruned)
		return SnapshotStats{}, false, nil
	}
	e.install(st)
	n, err := s.catchUp(ctx, out, meta.Seq, mark.Head)
	if err == nil {
		// Retention may have pruned events while they were read: then some may be missed.
		var after store.OutboxMark
		if after, err = out.Mark(ctx); err == nil && after.Pruned > meta.Seq {
			err = errors.New("events after the snapshot were pruned while it was caught up")
		}
	}
	if err != nil {
		e.install(NewStore())
		return SnapshotStats{}, false, err
	}
	s.applied, s.appliedID = meta.Seq, meta.EventID
	s.advance(mark.Head, mark.HeadID)
	if n == 0 && mark.Head == meta.Seq {
		s.savedGen = s.gen // the file already holds this state
	}
	stats := SnapshotStats{Seq: meta.Seq, Replayed: n, Took: time.Since(start)}
	s.log.Info("graph projection restored from its snapshot", "path", path, "snapshotSeq", meta.Seq,
		"outboxHead", mark.Head, "replayed", n, "triples", st.Len(), "took", stats.Took.Round(time.Millisecond))
	s.MarkReady()
	return stats, true, nil
}

// catchUp re-projects the entities of the events in (after, head], each entity once
// (its last event, which re-projects it from the catalog's current state; a recursive
// change or a restore, which also re-projects the entities below it, is kept apart),
// and returns how many events it handled. The lock is held.
func (s *Sync) catchUp(ctx context.Context, out Outbox, after, head int64) (int, error) {
	type key struct {
		kind, id string
		subtree  bool
	}
	last := map[key]int{}
	var todo []meridian.ChangeEvent
read:
	for after < head {
		page, err := out.EventsAfter(ctx, after, catchUpPage)
		if err != nil {
			return 0, err
		}
		if len(page) == 0 {
			break
		}
		for _, ev := range page {
			if ev.Seq > head {
				break read
			}
			after = ev.Seq
			if !projected(ev) {
				continue
			}
			k := key{ev.EntityType, ev.EntityID, ev.Recursive || ev.EventType == meridian.EventEntityRestored}
			if i, ok := last[k]; ok {
				todo[i] = meridian.ChangeEvent{}
			}
			last[k] = len(todo)
			todo = append(todo, meridian.ChangeEvent{Seq: ev.Seq, EventType: ev.EventType, EntityType: ev.EntityType,
				EntityID: ev.EntityID, EntityFQN: ev.EntityFQN, Recursive: ev.Recursive})
		}
		if len(page) < catchUpPage {
			break
		}
	}
	n := 0
	for _, ev := range todo {
		if ev.EntityID == "" {
			continue
		}
		if err := s.handle(ctx, ev); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// removeStaleTemps removes the temporary files a process killed while writing a
// snapshot to path left beside it.
func removeStaleTemps(path string, log *slog.Logger) {
	stale, _ := filepath.Glob(path + ".tmp-*")
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			log.Warn("a stale graph snapshot file was not removed", "path", f, "err", err)
		}
	}
}
