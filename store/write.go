package store

import (
	"context"
	"maps"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
)

// insert writes a new entity: its row, its parent and relationship links, its first
// version snapshot and its change event.
func (s *Entities) insert(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, d draft) error {
	st, err := s.stage(p, k, d)
	if err != nil {
		return err
	}
	return s.put(ctx, tx, k, d, st)
}

// staged is a new entity encoded for storage: the pure CPU part of an insert, which
// needs no transaction.
type staged struct {
	row    Row
	w      written // w.eventDoc is event.Entity encoded
	search search.Doc
	event  meridian.ChangeEvent
}

// stage encodes a checked draft for insert, and computes its search terms (a create is
// staged before it waits for the writer: optimistic.go).
func (s *Entities) stage(p *meridian.Principal, k *meridian.Kind, d draft) (staged, error) {
	e := d.entity
	w, err := s.write(k, e)
	if err != nil {
		return staged{}, err
	}
	row := Row{ID: e.ID(), Kind: k.Name, Name: e.Name(), FQN: e.FQN(), Version: meridian.InitialVersion,
		UpdatedAt: int64(e["updatedAt"].(float64)), UpdatedBy: e.String("updatedBy"), Doc: w.row, Snapshot: w.rowIsVersion()}
	doc := w.indexed(k)
	doc.Created = true // its id is new (draft)
	return staged{row: row, w: w, search: doc.WithTerms(),
		event: s.event(p, meridian.EventEntityCreated, k, w.event, nil)}, nil
}

// put writes a staged entity in tx: its row, then putLinks.
func (s *Entities) put(ctx context.Context, tx Tx, k *meridian.Kind, d draft, st staged) error {
	if err := tx.Insert(ctx, st.row); err != nil {
		return err
	}
	return s.putLinks(ctx, tx, k, d, st)
}

// putLinks writes what a staged entity adds beside its row, which is written: its parent
// and relationship links, its version snapshot, its search document and its change
// event.
func (s *Entities) putLinks(ctx context.Context, tx Tx, k *meridian.Kind, d draft, st staged) error {
	row := st.row
	if d.parent != nil {
		if err := tx.Relate(ctx, Relation{FromID: d.parent.ID, FromKind: d.parent.Kind, ToID: row.ID, ToKind: k.Name, Type: relationTypeContains}); err != nil {
			return err
		}
	}
	if err := syncRelations(ctx, tx, k, row.ID, nil, d.entity); err != nil {
		return err
	}
	if !row.Snapshot {
		if err := tx.PutVersion(ctx, row.ID, row.Version, st.w.version); err != nil {
			return err
		}
	}
	if err := tx.Index(ctx, st.search); err != nil {
		return err
	}
	return appendEncodedEvent(ctx, tx, st.event, st.w)
}

// appendEncodedEvent appends e, whose entity is w's, through the driver's
// EncodedEventAppender when it has one, so the entity is not encoded again, nor stored
// again when it is the snapshot w stores.
func appendEncodedEvent(ctx context.Context, tx Tx, e meridian.ChangeEvent, w written) error {
	if a, ok := tx.(EncodedEventAppender); ok {
		return a.AppendEncodedEvent(ctx, e, w.eventDoc, w.snapshotEvent)
	}
	return tx.AppendEvent(ctx, e)
}

// writeOpts says how update records a change.
type writeOpts struct {
	change    string // the change type of the answer and of the event
	emit      bool   // record a change event
	recursive bool   // the event's recursive flag
	// lifecycle marks a change of the deleted flag alone (delete, restore, their
	// cascades), which the engine makes: it skips beforeWrite.
	lifecycle bool
	// parent is the parent document a PUT resolved, for the kind's hooks.
	parent meridian.Entity
}

// update writes a new version of an entity when next differs from old, after
// beforeWrite (unless the change is a lifecycle one): the version goes up by 0.1, or by
// 1.0 for a breaking change, changeDescription records the difference, and the row,
// relationships, snapshot and event are written. When nothing changed it returns old
// and entityNoChange.
func (s *Entities) update(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, row Row, old, next meridian.Entity, o writeOpts) (meridian.Entity, string, error) {
	var bw *meridian.Write
	if !o.lifecycle {
		before := old
		if old.Deleted() && !next.Deleted() {
			// A PUT that restores: the deleted flag is the engine's to change.
			before = maps.Clone(old)
			before["deleted"] = false
		}
		bw = &meridian.Write{Principal: p, Old: before, New: next, Parent: o.parent}
		if err := s.prepare(ctx, tx, k, bw); err != nil {
			return nil, "", err
		}
	}
	cd, major := Diff(old, next)
	if cd.Empty() {
		return old, meridian.EventEntityNoChange, nil
	}
	if bw != nil {
		if err := s.check(ctx, tx, k, bw); err != nil {
			return nil, "", err
		}
	}
	s.secrets[k.Name].redact(&cd)
	version := row.Version.Minor()
	if major {
		version = row.Version.Major()
	}
	now := s.now().UnixMilli()
	if src, ok := meridian.ChangeSourceFrom(ctx); ok {
		cd.Summarize(src, principalName(p), now) // an accepted suggestion names its task
	}
	next["version"] = version.Float()
	next["updatedAt"] = float64(now)
	next["updatedBy"] = principalName(p)
	next["changeDescription"] = cd.Map()
	w, err := s.write(k, next)
	if err != nil {
		return nil, "", err
	}
	updated := Row{ID: row.ID, Kind: k.Name, Name: row.Name, FQN: row.FQN, Version: version, UpdatedAt: now,
		UpdatedBy: principalName(p), Deleted: next.Deleted(), Doc: w.row, Snapshot: w.rowIsVersion()}
	if err := tx.Update(ctx, updated, row.Version); err != nil {
		if meridian.ErrorCode(err) == meridian.EPreconditionFailed {
			// The caller's If-Match was checked against what this write read; a version
			// that moved since is another client's concurrent change: 409, not 412.
			return nil, "", meridian.Errorf(meridian.EConflict, "The entity was modified concurrently by another request. Please refresh and retry.")
		}
		return nil, "", err
	}
	if err := syncRelations(ctx, tx, k, row.ID, old, next); err != nil {
		return nil, "", err
	}
	if !updated.Snapshot {
		if err := tx.PutVersion(ctx, row.ID, version, w.version); err != nil {
			return nil, "", err
		}
	}
	if err := tx.Index(ctx, w.indexed(k)); err != nil {
		return nil, "", err
	}
	if o.emit {
		ev := s.event(p, o.change, k, w.event, &cd)
		ev.Recursive = o.recursive
		if err := appendEncodedEvent(ctx, tx, ev, w); err != nil {
			return nil, "", err
		}
	}
	return next, o.change, nil
}

// syncRelations makes the relationship store hold the references of next's
// relationship fields.
func syncRelations(ctx context.Context, tx Tx, k *meridian.Kind, id string, old, next meridian.Entity) error {
	for field := range meridian.RelationFields {
		if field == "followers" || !k.HasField(field) {
			continue
		}
		before := refIDs(old[field])
		after := refIDs(next[field])
		for to, kind := range after {
			if _, ok := before[to]; !ok {
				if err := tx.Relate(ctx, Relation{FromID: id, FromKind: k.Name, ToID: to, ToKind: kind, Type: field}); err != nil {
					return err
				}
			}
		}
		for to, kind := range before {
			if _, ok := after[to]; !ok {
				if err := tx.Unrelate(ctx, Relation{FromID: id, FromKind: k.Name, ToID: to, ToKind: kind, Type: field}); err != nil {
					return err
				}
			}
		}
	}
	for field, inv := range k.Inverse {
		if !k.HasField(field) {
			continue
		}
		before := refIDs(old[field])
		after := refIDs(next[field])
		for from, kind := range after {
			if _, ok := before[from]; !ok {
				if err := tx.Relate(ctx, Relation{FromID: from, FromKind: kind, ToID: id, ToKind: k.Name, Type: inv.Type}); err != nil {
					return err
				}
			}
		}
		for from, kind := range before {
			if _, ok := after[from]; !ok {
				if err := tx.Unrelate(ctx, Relation{FromID: from, FromKind: kind, ToID: id, ToKind: k.Name, Type: inv.Type}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func refIDs(v any) map[string]string {
	m := map[string]string{}
	for _, item := range asList(v) {
		ref, _ := item.(map[string]any)
		id, _ := ref["id"].(string)
		typ, _ := ref["type"].(string)
		if id != "" {
			m[id] = typ
		}
	}
	return m
}

// setTreeDeleted soft-deletes (or restores) every descendant of id whose deleted flag
// differs, each with a new version and no change event of its own.
func (s *Entities) setTreeDeleted(ctx context.Context, tx Tx, p *meridian.Principal, id string, deleted bool) error {
	children, err := tx.Relations(ctx, RelationQuery{FromID: id, Type: relationTypeContains})
	if err != nil {
		return err
	}
	for _, c := range children {
		row, err := tx.Get(ctx, c.ToKind, c.ToID)
		if err != nil {
			return err
		}
		if err := s.setTreeDeleted(ctx, tx, p, row.ID, deleted); err != nil {
			return err
		}
		if row.Deleted == deleted {
			continue
		}
		k, ok := s.reg.Kind(row.Kind)
		if !ok {
			continue
		}
		old, err := s.full(ctx, tx, k, row, nil)
		if err != nil {
			return err
		}
		next := old.Clone()
		next["deleted"] = deleted
		if _, _, err := s.update(ctx, tx, p, k, row, old, next, writeOpts{lifecycle: true}); err != nil {
			return err
		}
	}
	return nil
}

// removeTree removes an entity and all its descendants.
func (s *Entities) removeTree(ctx context.Context, tx Tx, id string) error {
	children, err := tx.Relations(ctx, RelationQuery{FromID: id, Type: relationTypeContains})
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := s.removeTree(ctx, tx, c.ToID); err != nil {
			return err
		}
	}
	return tx.Remove(ctx, id)
}

// event builds a change event for an entity.
func (s *Entities) event(p *meridian.Principal, typ string, k *meridian.Kind, e meridian.Entity, cd *meridian.ChangeDescription) meridian.ChangeEvent {
	ev := meridian.ChangeEvent{ID: meridian.NewID(), EventType: k.EventType(typ), EntityType: k.Name, EntityID: e.ID(),
		EntityFQN: e.FQN(), UserName: principalName(p), Timestamp: s.now().UnixMilli(),
		CurrentVersion: e.Version().Float(), ChangeDescription: cd, Entity: e}
	if cd != nil {
		ev.PreviousVersion = cd.PreviousVersion
	} else {
		ev.PreviousVersion = ev.CurrentVersion
	}
	return ev
}

func principalName(p *meridian.Principal) string {
	if p == nil || p.Name == "" {
		return "system"
	}
	return p.Name
}
