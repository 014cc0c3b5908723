package graph

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// ConsumerName is the projection's name among the outbox consumers.
const ConsumerName = "graph"

// JobTypeRebuild is the type of the durable job that rebuilds the projection.
const JobTypeRebuild = "graph.rebuild"

// rebuildBatch is how many descriptions one Load call carries; rebuildWorkers project
// them in parallel (each reads the catalog in its own transactions).
const (
	rebuildBatch   = 500
	rebuildWorkers = 4
)

// Sync keeps a Backend in step with the catalog: it is an outbox consumer that
// re-projects the entity of each change event (idempotently, from the catalog's current
// state), and it rebuilds the whole projection on demand. Handle and Rebuild exclude
// each other, so events that arrive during a rebuild wait for it.
type Sync struct {
	proj    *Projector
	backend Backend
	onto    *Ontology
	log     *slog.Logger

	mu sync.Mutex
	// applied is the outbox sequence number up to which the projection reflects the
	// catalog (appliedID its event's id); gen counts the changes applied, savedGen the
	// count the last snapshot holds. Under mu.
	applied       int64
	appliedID     string
	gen, savedGen uint64
	saveMu        sync.Mutex // one snapshot written at a time
	ready         atomic.Bool
	built         chan struct{} // closed once the projection is first ready
	builtOnce     sync.Once
}

var _ store.Consumer = (*Sync)(nil)

// NewSync returns the synchroniser of backend from the catalog src describes.
func NewSync(reg *meridian.Registry, src Source, backend Backend, log *slog.Logger) *Sync {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sync{proj: NewProjector(reg, src), backend: backend, onto: NewOntology(reg), log: log, built: make(chan struct{})}
}

// Name returns ConsumerName.
func (s *Sync) Name() string { return ConsumerName }

// IgnoresEventEntities marks the projection as a store.EntityBlind consumer: it
// re-projects each entity from the catalog's current state, never from the event's
// copy, so the dispatcher reads its events without that copy.
func (s *Sync) IgnoresEventEntities() {}

var _ store.EntityBlind = (*Sync)(nil)

// Ready reports whether the projection has been built (Rebuild finished once, or
// MarkReady was called for a store that keeps its data).
func (s *Sync) Ready() bool { return s.ready.Load() }

// MarkReady declares the projection built (a remote store that keeps its data).
func (s *Sync) MarkReady() {
	s.ready.Store(true)
	s.builtOnce.Do(func() { close(s.built) })
}

// Built is closed once the projection is first ready.
func (s *Sync) Built() <-chan struct{} { return s.built }

// Ontology returns the ontology the projection uses.
func (s *Sync) Ontology() *Ontology { return s.onto }

// Handle re-projects the entity of one change event: a hard delete removes its
// description and re-projects the entities whose descriptions point at it; any other
// entity change replaces its description. Errors: the catalog's and the backend's; the
// dispatcher delivers the event again later.
func (s *Sync) Handle(ctx context.Context, ev meridian.ChangeEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if projected(ev) {
		if err := s.handle(ctx, ev); err != nil {
			return err
		}
	}
	s.advance(ev.Seq, ev.ID)
	return nil
}

var _ store.BatchConsumer = (*Sync)(nil)

// HandleBatch handles the events of a batch as Handle would one by one, but
// re-projects the entities changed between two events that need more (a hard delete,
// a recursive delete, a restore) together, each once and refreshBatch to an Apply, so
// a remote store gets one request for them instead of one each. Each entity is
// projected from the catalog's current state, as Handle does. Errors: as Handle; the
// dispatcher delivers the whole batch again.
func (s *Sync) HandleBatch(ctx context.Context, events []meridian.ChangeEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pending []string // entity IRIs, in order, each once
	seen := map[string]bool{}
	flush := func() error {
		err := s.refreshAll(ctx, pending)
		pending, seen = nil, map[string]bool{}
		return err
	}
	for _, ev := range events {
		switch {
		case !projected(ev):
		case ev.EventType == meridian.EventEntityDeleted || reachesSubtree(ev):
			if err := flush(); err != nil {
				return err
			}
			if err := s.handle(ctx, ev); err != nil {
				return err
			}
		default:
			if iri := EntityIRI(ev.EntityType, ev.EntityID); !seen[iri] {
				seen[iri] = true
				pending = append(pending, iri)
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for _, ev := range events {
		s.advance(ev.Seq, ev.ID)
	}
	return nil
}

// reachesSubtree reports whether the event changes the entities below its entity too:
// a recursive delete and a restore record one event for the root of the tree.
func reachesSubtree(ev meridian.ChangeEvent) bool {
	return ev.EntityFQN != "" && (ev.Recursive || ev.EventType == meridian.EventEntityRestored)
}

// projected reports whether an event changes the projection: an entity change.
func projected(ev meridian.ChangeEvent) bool {
	switch ev.EventType {
	case meridian.EventEntityCreated, meridian.EventEntityUpdated, meridian.EventEntitySoftDeleted,
		meridian.EventEntityRestored, meridian.EventEntityFieldsChanged, meridian.EventEntityLineageAdded,
		meridian.EventEntityLineageDeleted, meridian.EventEntityLineageUpdated, meridian.EventEntityDeleted:
		return ev.EntityType != "" && ev.EntityID != ""
	}
	return false
}

// handle re-projects the entity of a projected event. The lock is held.
func (s *Sync) handle(ctx context.Context, ev meridian.ChangeEvent) error {
	// A recursive delete (and a restore) records one event for the root of the tree:
	// the entities below it, by FQN, are re-projected too.
	var below []string
	if reachesSubtree(ev) {
		var err error
		if below, err = s.subtree(ctx, ev.EntityFQN); err != nil {
			return err
		}
	}
	var err error
	if ev.EventType == meridian.EventEntityDeleted {
		err = s.removeEntity(ctx, ev.EntityType, ev.EntityID)
	} else {
		err = s.refresh(ctx, ev.EntityType, ev.EntityID)
	}
	if err != nil {
		return err
	}
	return s.refreshAll(ctx, below)
}

// subtree lists the entities whose FQN is below fqn, deleted ones included (at most
// MaxRows of them: a rebuild catches up a larger tree).
func (s *Sync) subtree(ctx context.Context, fqn string) ([]string, error) {
	q := "SELECT ?e WHERE { ?e <" + merEntityType + "> ?t ; <" + dctIdentifier + "> ?f FILTER(STRSTARTS(?f, " +
		literalQuoted(fqn+".") + ")) }"
	res, err := s.backend.Query(ctx, q, Limits{Rows: MaxRows, IncludeDeleted: true, Work: 100 * DefaultWork, Timeout: MaxTimeout})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res.Rows))
	for _, row := range res.Rows {
		if len(row) > 0 && row[0].Kind == KindIRI {
			out = append(out, row[0].Value)
		}
	}
	return out, nil
}

// refresh replaces (or removes) one entity's description.
func (s *Sync) refresh(ctx context.Context, kind, id string) error {
	d, found, err := s.proj.Project(ctx, kind, id)
	if err != nil {
		return err
	}
	if !found {
		return s.removeEntity(ctx, kind, id)
	}
	return s.backend.Apply(ctx, Delta{Put: []Description{d}})
}

// refreshBatch is how many descriptions refreshAll replaces in one Apply.
const refreshBatch = 200

// refreshAll replaces the descriptions of the entities (IRIs), refreshBatch in one
// Apply, so a remote store gets one request for them instead of one each; an entity
// no longer in the catalog is removed as removeEntity does.
func (s *Sync) refreshAll(ctx context.Context, iris []string) error {
	var batch []Description
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.backend.Apply(ctx, Delta{Put: batch})
		batch = nil
		return err
	}
	// The entities of one call often share tags (a batch of tables from one source):
	// each tag's id is read once for all of them.
	proj := NewProjector(s.proj.reg, newResolveCache(s.proj.src))
	for _, iri := range iris {
		kind, id, ok := ParseEntityIRI(iri)
		if !ok {
			continue
		}
		d, found, err := proj.Project(ctx, kind, id)
		if err != nil {
			return err
		}
		if !found {
			if err := s.removeEntity(ctx, kind, id); err != nil {
				return err
			}
			continue
		}
		if batch = append(batch, d); len(batch) >= refreshBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// referrers is the most descriptions re-projected after one hard delete.
const referrers = 5000

// removeEntity removes a description and re-projects those that point at the entity
// or its columns (lineage into it, tags of it), so no edge dangles.
func (s *Sync) removeEntity(ctx context.Context, kind, id string) error {
	iri := EntityIRI(kind, id)
	q := "SELECT DISTINCT ?s WHERE { { ?s ?p <" + iri + "> } UNION { <" + iri + "> <" + merColumnProp + "> ?c . ?s ?q ?c } } LIMIT " +
		strconv.Itoa(referrers)
	res, err := s.backend.Query(ctx, q, Limits{Rows: referrers, IncludeDeleted: true, Work: 10 * DefaultWork})
	if err != nil {
		return err
	}
	if err := s.backend.Apply(ctx, Delta{Remove: []string{iri}}); err != nil {
		return err
	}
	seen := map[string]bool{iri: true}
	var owners []string
	for _, row := range res.Rows {
		if len(row) == 0 || row[0].Kind != KindIRI {
			continue
		}
		owner, _, _ := strings.Cut(row[0].Value, "/columns/")
		if !seen[owner] {
			seen[owner] = true
			owners = append(owners, owner)
		}
	}
	return s.refreshAll(ctx, owners)
}

// EntityLister is implemented by a Source that lists whole entities (with the fields
// the projection maps, soft-deleted ones included, secrets masked) a page at a time,
// which a rebuild reads instead of each entity alone.
type EntityLister interface {
	EachEntity(ctx context.Context, f func(kind string, e meridian.Entity) error) error
}

// UpstreamBatcher is implemented by a Source that reads the upstream edges of many
// entities at once (in one read transaction), by entity id, which a rebuild uses for
// the entities an EntityLister read.
type UpstreamBatcher interface {
	UpstreamOfMany(ctx context.Context, ids []string) (map[string][]Upstream, error)
}

// RebuildResult is the result of a rebuild.
type RebuildResult struct {
	Entities int `json:"entities"`
}

// Rebuild empties the backend and projects every entity again, reporting the number
// done to progress (nil for none). Errors: the catalog's and the backend's.
func (s *Sync) Rebuild(ctx context.Context, src Source, progress func(done int) error) (RebuildResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res RebuildResult
	// Every event up to the outbox's head is reflected by a catalog read after it.
	var mark store.OutboxMark
	if out, ok := src.(Outbox); ok {
		var err error
		if mark, err = out.Mark(ctx); err != nil {
			return res, err
		}
	}
	aside, ok := s.backend.(Rebuilder)
	begin := s.backend.Reset
	if ok {
		begin = aside.BeginRebuild
	}
	if err := begin(ctx); err != nil {
		return res, err
	}
	if err := s.backend.Load(ctx, []Description{s.onto.Description()}); err != nil {
		return res, err
	}
	// The tags and links of many entities name the same few entities: a rebuild
	// resolves each once.
	proj := NewProjector(s.proj.reg, newResolveCache(s.proj.src))
	batcher, _ := s.proj.src.(UpstreamBatcher)
	// ref is an entity to project: by kind and id, or read already (e) by a lister.
	type ref struct {
		kind, id string
		e        meridian.Entity
	}
	var pending []ref
	flush := func() error {
		descs := make([]Description, len(pending))
		found := make([]bool, len(pending))
		errs := make([]error, rebuildWorkers)
		var wg sync.WaitGroup
		for w := 0; w < rebuildWorkers; w++ {
			wg.Go(func() {
				// The upstream edges of the entities a lister read are read together.
				var listed []int
				var ids []string
				for i := w; i < len(pending); i += rebuildWorkers {
					if pending[i].e == nil {
						d, ok, err := proj.Project(ctx, pending[i].kind, pending[i].id)
						if err != nil {
							errs[w] = err
							return
						}
						descs[i], found[i] = d, ok
						continue
					}
					if k, known := s.proj.reg.Kind(pending[i].kind); known {
						listed = append(listed, i)
						if !k.NoLineage {
							ids = append(ids, pending[i].e.ID())
						}
					}
				}
				var ups map[string][]Upstream
				if batcher != nil && len(ids) > 0 {
					if ups, errs[w] = batcher.UpstreamOfMany(ctx, ids); errs[w] != nil {
						return
					}
				}
				for _, i := range listed {
					k, _ := s.proj.reg.Kind(pending[i].kind)
					var d Description
					var err error
					if batcher != nil {
						d, err = proj.Describe(ctx, k, pending[i].e, ups[pending[i].e.ID()])
					} else {
						d, err = proj.projectEntity(ctx, k, pending[i].e)
					}
					if err != nil {
						errs[w] = err
						return
					}
					descs[i], found[i] = d, true
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		batch := descs[:0]
		for i, d := range descs {
			if found[i] {
				batch = append(batch, d)
			}
		}
		pending = pending[:0]
		res.Entities += len(batch)
		if err := s.backend.Load(ctx, batch); err != nil {
			return err
		}
		if progress != nil {
			return progress(res.Entities)
		}
		return nil
	}
	// The source is read in its own goroutine, a batch ahead of the projection.
	batches := make(chan []ref, 1)
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var readErr error
	go func() {
		defer close(batches)
		var b []ref
		emit := func() error {
			select {
			case batches <- b:
				b = nil
				return nil
			case <-readCtx.Done():
				return readCtx.Err()
			}
		}
		add := func(r ref) error {
			if b = append(b, r); len(b) >= rebuildBatch {
				return emit()
			}
			return nil
		}
		if lister, ok := src.(EntityLister); ok {
			readErr = lister.EachEntity(readCtx, func(kind string, e meridian.Entity) error { return add(ref{kind: kind, e: e}) })
		} else {
			readErr = src.Each(readCtx, func(kind, id string) error { return add(ref{kind: kind, id: id}) })
		}
		if readErr == nil && len(b) > 0 {
			readErr = emit()
		}
	}()
	var err error
	for b := range batches {
		if err == nil {
			pending = b
			if err = flush(); err != nil {
				cancel()
			}
		}
	}
	if err == nil {
		err = readErr
	}
	if err != nil {
		return res, err
	}
	if aside != nil {
		if err := aside.Commit(ctx); err != nil {
			return res, err
		}
	}
	s.applied, s.appliedID = 0, ""
	s.advance(mark.Head, mark.HeadID)
	s.log.Info("graph projection rebuilt", "entities", res.Entities, "outboxHead", mark.Head)
	s.MarkReady()
	return res, nil
}
