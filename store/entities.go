package store

import (
	"context"
	"reflect"
	"strings"
	"time"

	"github.com/meridian-catalog/meridian"
)

// Entities is the entity engine. It is safe for concurrent use.
type Entities struct {
	db     Driver
	reg    *meridian.Registry
	valid  Validator
	policy Policy
	sealer Sealer
	now    func() time.Time
	notify func()
	jobs   Jobs
	// secrets are each kind's secret rules, from the schema (SecretSchema).
	secrets map[string]*secretRules
	cache   readCache   // encoded GET answers (cache.go)
	recent  *recentRows // rows prepared creates found lately (recentrows.go)
	parents parentDocs  // parents' documents creates decoded lately (parentdocs.go)
	// tagNodes are the tag rules' facts of the tags found lately (tagnodes.go).
	tagNodes tagNodes
	// prepTurn is held by the one bulk chunk being prepared, on a driver with a single
	// writer in this process (precreateAll); nil elsewhere.
	prepTurn chan struct{}
}

// Config wires an engine. Policy and Sealer may be nil in tests: a nil Policy allows
// everything, a nil Sealer stores secrets in clear text. The kinds' secrets come from
// the Validator when it implements SecretSchema (schema.Validator does).
type Config struct {
	Driver    Driver
	Registry  *meridian.Registry
	Validator Validator
	Policy    Policy
	Sealer    Sealer
	// Now is the clock (time.Now when nil); it is called concurrently.
	Now func() time.Time
	// Notify, when set, is called after every committed write (Dispatcher.Notify).
	Notify func()
	// Jobs runs asynchronous deletes; without it DeleteAsync is EInternal.
	Jobs Jobs
}

// New returns an engine.
func New(c Config) *Entities {
	now := c.Now
	if now == nil {
		now = time.Now
	}
	s := &Entities{db: c.Driver, reg: c.Registry, valid: c.Validator, policy: c.Policy, sealer: c.Sealer, now: now,
		notify: c.Notify, jobs: c.Jobs, secrets: map[string]*secretRules{}, recent: newRecentRows(now)}
	if _, ok := c.Driver.(GroupCommitter); ok {
		s.prepTurn = make(chan struct{}, 1)
	}
	if ss, ok := c.Validator.(SecretSchema); ok && c.Registry != nil {
		for _, k := range c.Registry.Kinds() {
			if r := newSecretRules(ss.Secrets(k.Name)); r != nil {
				s.secrets[k.Name] = r
			}
		}
	}
	return s
}

// Registry returns the kind registry the engine serves.
func (s *Entities) Registry() *meridian.Registry { return s.reg }

// Driver returns the driver, for services that keep their own tables.
func (s *Entities) Driver() Driver { return s.db }

// Create adds a new entity from a create body. Errors: EInvalid (schema, names,
// parent missing from the body), ENotFound (parent or reference missing), EConflict
// (FQN taken), EForbidden.
func (s *Entities) Create(ctx context.Context, p *meridian.Principal, kind string, body meridian.Entity) (Result, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Result{}, err
	}
	if err := s.authorize(p, OpCreate, k, body, nil); err != nil {
		return Result{}, err
	}
	return s.create(ctx, p, k, body, false, func(tx Tx) (Result, error) {
		d, err := s.draft(ctx, tx, p, k, body)
		if err != nil {
			return Result{}, err
		}
		return s.createDraft(ctx, tx, p, k, d)
	})
}

// createDraft checks a new entity with beforeWrite, inserts it and answers it.
func (s *Entities) createDraft(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, d draft) (Result, error) {
	if err := s.beforeWrite(ctx, tx, k, &meridian.Write{Principal: p, New: d.entity, Parent: d.parentDoc}); err != nil {
		return Result{}, err
	}
	if err := s.insert(ctx, tx, p, k, d); err != nil {
		return Result{}, err
	}
	return Result{Entity: s.shape(p, k, d.entity, nil), Change: meridian.EventEntityCreated, Created: true}, nil
}

// CreateOrUpdate creates the entity named by the body, or updates it with
// OpenMetadata's PUT merge rules (tags merge, an empty owners list keeps owners, a
// column missing from the body is deleted, fields missing from the body keep their
// value). A soft-deleted entity is restored, with its children. Result.Created tells
// which. Errors as Create, plus EPreconditionFailed.
func (s *Entities) CreateOrUpdate(ctx context.Context, p *meridian.Principal, kind string, body meridian.Entity) (Result, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Result{}, err
	}
	return s.create(ctx, p, k, body, true, func(tx Tx) (Result, error) {
		d, err := s.draft(ctx, tx, p, k, body)
		if err != nil {
			return Result{}, err
		}
		row, err := tx.GetByFQN(ctx, k.Name, d.entity.FQN())
		if meridian.ErrorCode(err) == meridian.ENotFound {
			if err := s.authorize(p, OpCreate, k, body, nil); err != nil {
				return Result{}, err
			}
			return s.createDraft(ctx, tx, p, k, d)
		}
		if err != nil {
			return Result{}, err
		}
		old, err := s.full(ctx, tx, k, row, nil)
		if err != nil {
			return Result{}, err
		}
		if err := s.authorizeOwned(ctx, tx, p, OpEdit, k, old); err != nil {
			return Result{}, err
		}
		merged := mergePut(k, p, old, d.entity)
		for _, f := range k.Inherit {
			// What an entity inherits is its parent's to change, not the body's.
			if v, ok := old[f]; ok {
				merged[f] = v
			}
		}
		s.restoreMasked(k, old, merged)
		change := meridian.EventEntityUpdated
		if row.Deleted {
			merged["deleted"] = false
			change = meridian.EventEntityRestored
			if err := s.setTreeDeleted(ctx, tx, p, row.ID, false); err != nil {
				return Result{}, err
			}
		}
		e, change, err := s.update(ctx, tx, p, k, row, old, merged, writeOpts{change: change, emit: true, parent: d.parentDoc})
		if err != nil {
			return Result{}, err
		}
		return Result{Entity: s.shape(p, k, e, nil), Change: change}, nil
	})
}

// Get reads an entity; the answer is the caller's own copy. Errors: EInvalid (bad fields or
// FQN), EForbidden (the caller may not view it), ENotFound.
func (s *Entities) Get(ctx context.Context, p *meridian.Principal, kind string, key Key, o GetOptions) (meridian.Entity, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return nil, err
	}
	fields, err := k.ParseFields(o.Fields)
	if err != nil {
		return nil, err
	}
	include, err := checkInclude(o.Include)
	if err != nil {
		return nil, err
	}
	var out meridian.Entity
	err = s.inReadTx(ctx, func(tx Tx) error {
		row, err := getRow(ctx, tx, k, key, include)
		if err != nil {
			return err
		}
		e, err := s.full(ctx, tx, k, row, fields)
		if err != nil {
			return err
		}
		if err := s.decorate(ctx, tx, k, e, fields); err != nil {
			return err
		}
		if err := s.authorize(p, OpView, k, e, ownersOf(e)); err != nil {
			return err
		}
		out = s.shapeRead(p, k, e, fields)
		return nil
	})
	return out, err
}

// MaxListLimit is the largest page a list accepts.
const MaxListLimit = 1000000

// DefaultListLimit is the page size when none is given.
const DefaultListLimit = 10

// List reads one page, ordered by name then id. Errors: EInvalid (bad fields, cursor,
// filter, include or limit).
func (s *Entities) List(ctx context.Context, p *meridian.Principal, kind string, o ListOptions) (Page, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Page{}, err
	}
	if err := s.authorize(p, OpView, k, nil, nil); err != nil {
		return Page{}, err
	}
	fields, err := k.ParseFields(o.Fields)
	if err != nil {
		return Page{}, err
	}
	q := ListQuery{Kind: k.Name, Limit: o.Limit}
	if q.Include, err = checkInclude(o.Include); err != nil {
		return Page{}, err
	}
	if o.Limit < 0 || o.Limit > MaxListLimit {
		return Page{}, meridian.Errorf(meridian.EInvalid, "[query param limit must be between 0 and %d]", MaxListLimit)
	}
	if o.Before != "" && o.After != "" {
		return Page{}, meridian.Errorf(meridian.EInvalid, "Only one of before or after query parameter allowed")
	}
	if q.After, err = decodeCursor(o.After); err != nil {
		return Page{}, err
	}
	if q.Before, err = decodeCursor(o.Before); err != nil {
		return Page{}, err
	}
	if q.Conditions, err = conditions(k, o.Filters, o.AnyOf); err != nil {
		return Page{}, err
	}
	if o.Limit > 0 {
		q.Limit = o.Limit + 1 // one more, to know whether another page follows
	}
	var page Page
	err = s.inReadTx(ctx, func(tx Tx) error {
		rows, total, err := tx.List(ctx, q)
		if err != nil {
			return err
		}
		page.Total = total
		more := o.Limit > 0 && len(rows) > o.Limit
		if more {
			if q.Before != nil {
				rows = rows[1:]
			} else {
				rows = rows[:o.Limit]
			}
		}
		if len(rows) > 0 {
			first, last := rows[0], rows[len(rows)-1]
			if q.Before != nil {
				page.After = encodeCursor(last)
				if more {
					page.Before = encodeCursor(first)
				}
			} else {
				if more {
					page.After = encodeCursor(last)
				}
				if q.After != nil {
					page.Before = encodeCursor(first)
				}
			}
		}
		page.Data = make([]meridian.Entity, 0, len(rows))
		for _, r := range rows {
			e, err := s.full(ctx, tx, k, r, fields)
			if err != nil {
				return err
			}
			if err := s.decorate(ctx, tx, k, e, fields); err != nil {
				return err
			}
			page.Data = append(page.Data, s.shapeRead(p, k, e, fields))
		}
		return nil
	})
	return page, err
}

// Patch applies an RFC 6902 JSON Patch. ifMatch, when set, must equal the entity's
// current ETag (or version). The patch is bounded as a whole (ParsePatch, ApplyPatch)
// and stops when ctx is done. Errors: EInvalid (bad patch, a patch limit, a document
// limit, immutable field, schema), ENotFound, EPreconditionFailed (stale If-Match),
// EConflict (a concurrent change), EForbidden.
func (s *Entities) Patch(ctx context.Context, p *meridian.Principal, kind string, key Key, patch []byte, ifMatch string) (Result, error) {
	ops, err := ParsePatch(patch)
	if err != nil {
		return Result{}, err
	}
	return s.Edit(ctx, p, kind, key, ifMatch, func(e meridian.Entity) (meridian.Entity, error) {
		return ApplyPatch(ctx, e, ops)
	})
}

// Edit reads an entity and writes what change makes of it, in one transaction, so
// that no concurrent write is lost between the read and the write. change receives
// the full stored document (relationship fields included) and returns the document to
// write, which may be the same map changed in place; its secrets are masked unless the
// caller may see them. System fields it changes are ignored; masked secrets keep their
// stored value; everything else goes through the same checks as PATCH. ifMatch, when set, must equal the entity's current ETag (or
// version). Errors: those of change, EInvalid (immutable field, schema, rules),
// ENotFound, EPreconditionFailed (stale If-Match), EConflict (a concurrent change),
// EForbidden.
func (s *Entities) Edit(ctx context.Context, p *meridian.Principal, kind string, key Key, ifMatch string, change func(meridian.Entity) (meridian.Entity, error)) (Result, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = s.inTx(ctx, func(tx Tx) error {
		row, old, err := s.loadFor(ctx, tx, p, OpEdit, k, key, IncludeNonDeleted)
		if err != nil {
			return err
		}
		if ifMatch != "" && !etagMatches(ifMatch, old) {
			return meridian.Errorf(meridian.EPreconditionFailed, "The entity has been modified by another user. Please refresh and retry.")
		}
		// change sees secrets as the caller may (a JSON Patch copy or test of a secret
		// works on the mask); the masked values it keeps are restored below.
		next, err := change(s.secretView(p, k, old, old.Clone()))
		if err != nil {
			return err
		}
		if next == nil {
			return meridian.Errorf(meridian.EInvalid, "Invalid request format: the result must be a JSON object")
		}
		// What the caller sent is compared as sent, before references are resolved.
		if err := checkImmutable(k, old, next, reflect.DeepEqual); err != nil {
			return err
		}
		for _, f := range k.Computed {
			if _, ok := next[f]; ok {
				return meridian.Errorf(meridian.EInvalid, "%s is computed when a %s is read and can't be written", f, k.Name)
			}
		}
		for _, f := range meridian.SystemFields {
			if f == "id" || f == "fullyQualifiedName" || f == "deleted" {
				continue // immutable: beforeWrite refuses a change
			}
			if v, ok := old[f]; ok {
				next[f] = v
			} else {
				delete(next, f)
			}
		}
		s.restoreMasked(k, old, next)
		if err := s.resolveFields(ctx, tx, k, next); err != nil {
			return err
		}
		if err := s.checkTags(ctx, tx, old, next); err != nil {
			return err
		}
		e, change, err := s.update(ctx, tx, p, k, row, old, next, writeOpts{change: meridian.EventEntityUpdated, emit: true})
		if err != nil {
			return err
		}
		res = Result{Entity: s.shape(p, k, e, nil), Change: change}
		return nil
	})
	return res, err
}

// Delete soft- or hard-deletes an entity, with its children when Recursive. One change
// event is recorded, for the root, with its recursive flag. Errors: EInvalid
// ("<kind> is not empty"), ENotFound, EForbidden.
func (s *Entities) Delete(ctx context.Context, p *meridian.Principal, kind string, key Key, o DeleteOptions) (Result, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = s.inTx(ctx, func(tx Tx) error {
		row, old, hard, err := s.checkDelete(ctx, tx, p, k, key, o)
		if err != nil {
			return err
		}
		if hard {
			if err := s.removeTree(ctx, tx, row.ID); err != nil {
				return err
			}
			ev := s.event(p, meridian.EventEntityDeleted, k, old, nil)
			ev.Recursive = o.Recursive
			if err := tx.AppendEvent(ctx, ev); err != nil {
				return err
			}
			res = Result{Entity: s.shape(p, k, old, nil), Change: meridian.EventEntityDeleted}
			return nil
		}
		if o.Recursive {
			if err := s.setTreeDeleted(ctx, tx, p, row.ID, true); err != nil {
				return err
			}
		}
		next := old.Clone()
		next["deleted"] = true
		e, _, err := s.update(ctx, tx, p, k, row, old, next, writeOpts{change: meridian.EventEntitySoftDeleted, emit: true, recursive: o.Recursive, lifecycle: true})
		if err != nil {
			return err
		}
		res = Result{Entity: s.shape(p, k, e, nil), Change: meridian.EventEntitySoftDeleted}
		return nil
	})
	return res, err
}

// checkDelete loads the entity to delete and checks the caller may delete it and that
// it has no children unless the delete is recursive. hard tells whether the delete
// removes the entity.
func (s *Entities) checkDelete(ctx context.Context, tx Tx, p *meridian.Principal, k *meridian.Kind, key Key, o DeleteOptions) (Row, meridian.Entity, bool, error) {
	hard := o.Hard || !k.SoftDelete
	include := IncludeNonDeleted
	if hard {
		include = IncludeAll
	}
	op := OpDelete
	if hard {
		op = OpHardDelete
	}
	row, old, err := s.loadFor(ctx, tx, p, op, k, key, include)
	if err != nil {
		return Row{}, nil, false, err
	}
	if k.Deletable != nil {
		if err := k.Deletable(p, old); err != nil {
			return Row{}, nil, false, err
		}
	}
	if !o.Recursive {
		children, err := tx.Relations(ctx, RelationQuery{FromID: row.ID, Type: relationTypeContains})
		if err != nil {
			return Row{}, nil, false, err
		}
		for _, c := range children {
			child, err := tx.Get(ctx, c.ToKind, c.ToID)
			if err != nil {
				return Row{}, nil, false, err
			}
			if hard || !child.Deleted {
				return Row{}, nil, false, meridian.Errorf(meridian.EInvalid, "%s is not empty", k.Name)
			}
		}
	}
	return row, old, hard, nil
}

// DeleteAsync checks that the delete may start, then runs it as a durable job
// (JobTypeDelete) that records its outcome: the deleted entity, or the error. The
// answer carries the job's id. Errors: as Delete, plus ETooManyRequests (too many jobs
// wait) and EInternal (no Jobs configured).
func (s *Entities) DeleteAsync(ctx context.Context, p *meridian.Principal, kind string, key Key, o DeleteOptions) (DeleteJob, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return DeleteJob{}, err
	}
	var (
		row  Row
		hard bool
	)
	err = s.inReadTx(ctx, func(tx Tx) error {
		row, _, hard, err = s.checkDelete(ctx, tx, p, k, key, o)
		return err
	})
	if err != nil {
		return DeleteJob{}, err
	}
	if s.jobs == nil {
		return DeleteJob{}, meridian.Errorf(meridian.EInternal, "asynchronous jobs are not configured")
	}
	outcome := DeleteOutcome{EntityType: k.Name, EntityID: row.ID, EntityName: row.Name, HardDelete: hard, Recursive: o.Recursive}
	id, err := s.jobs.Start(ctx, p, JobTypeDelete, outcome, func(ctx context.Context, _ JobProgress) (any, error) {
		if _, err := s.Delete(ctx, p, k.Name, ByID(row.ID), o); err != nil {
			return nil, err
		}
		return outcome, nil
	})
	if err != nil {
		return DeleteJob{}, err
	}
	return DeleteJob{JobID: id, Message: "Delete operation initiated for " + row.Name,
		EntityName: row.Name, HardDelete: o.Hard, Recursive: o.Recursive}, nil
}

// Restore reactivates a soft-deleted entity and its soft-deleted children, each with a
// new version. Restoring an active entity changes nothing. Errors: ENotFound,
// EForbidden.
func (s *Entities) Restore(ctx context.Context, p *meridian.Principal, kind, id string) (Result, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Result{}, err
	}
	if err := checkID(id); err != nil {
		return Result{}, err
	}
	var res Result
	err = s.inTx(ctx, func(tx Tx) error {
		row, old, err := s.loadFor(ctx, tx, p, OpDelete, k, ByID(id), IncludeAll)
		if err != nil {
			return err
		}
		if !row.Deleted {
			res = Result{Entity: s.shape(p, k, old, nil), Change: meridian.EventEntityNoChange}
			return nil
		}
		if err := s.setTreeDeleted(ctx, tx, p, row.ID, false); err != nil {
			return err
		}
		next := old.Clone()
		next["deleted"] = false
		e, _, err := s.update(ctx, tx, p, k, row, old, next, writeOpts{change: meridian.EventEntityRestored, emit: true, lifecycle: true})
		if err != nil {
			return err
		}
		res = Result{Entity: s.shape(p, k, e, nil), Change: meridian.EventEntityRestored}
		return nil
	})
	return res, err
}

// Versions lists every version of an entity as serialized JSON, newest first.
// Errors: EInvalid (bad id), ENotFound.
func (s *Entities) Versions(ctx context.Context, p *meridian.Principal, kind, id string) ([]string, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return nil, err
	}
	if err := checkID(id); err != nil {
		return nil, err
	}
	var out []string
	err = s.inReadTx(ctx, func(tx Tx) error {
		if _, err := getRow(ctx, tx, k, ByID(id), IncludeAll); err != nil {
			return err
		}
		docs, err := tx.Versions(ctx, id)
		if err != nil {
			return err
		}
		out = make([]string, 0, len(docs))
		for _, d := range docs {
			e, err := s.snapshot(p, k, d)
			if err != nil {
				return err
			}
			out = append(out, string(encode(e)))
		}
		return nil
	})
	return out, err
}

// Version reads one version. Errors: EInvalid (bad id or version), ENotFound.
func (s *Entities) Version(ctx context.Context, p *meridian.Principal, kind, id, version string) (meridian.Entity, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return nil, err
	}
	if err := checkID(id); err != nil {
		return nil, err
	}
	v, err := meridian.ParseVersion(version)
	if err != nil {
		return nil, err
	}
	var out meridian.Entity
	err = s.inReadTx(ctx, func(tx Tx) error {
		if _, err := getRow(ctx, tx, k, ByID(id), IncludeAll); err != nil {
			return err
		}
		d, err := tx.Version(ctx, id, v)
		if meridian.ErrorCode(err) == meridian.ENotFound {
			return meridian.Errorf(meridian.ENotFound, "%s instance for %s and version %s not found", k.Name, id, version)
		}
		if err != nil {
			return err
		}
		out, err = s.snapshot(p, k, d)
		return err
	})
	return out, err
}

// snapshot decodes a stored version for a caller.
func (s *Entities) snapshot(p *meridian.Principal, k *meridian.Kind, d []byte) (meridian.Entity, error) {
	e, err := decode(d)
	if err != nil {
		return nil, err
	}
	s.secrets[k.Name].open(s.sealer, k.Name, e)
	return s.shape(p, k, e, nil), nil
}

// AddFollower makes a user follow an entity; an empty userID means the caller. Only
// admins may add someone else. It makes no new version. Errors: EInvalid, ENotFound,
// EForbidden.
func (s *Entities) AddFollower(ctx context.Context, p *meridian.Principal, kind, id, userID string) (Result, error) {
	return s.follow(ctx, p, kind, id, userID, true)
}

// RemoveFollower stops a user following an entity.
func (s *Entities) RemoveFollower(ctx context.Context, p *meridian.Principal, kind, id, userID string) (Result, error) {
	return s.follow(ctx, p, kind, id, userID, false)
}

func (s *Entities) follow(ctx context.Context, p *meridian.Principal, kind, id, userID string, add bool) (Result, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Result{}, err
	}
	if !k.HasField("followers") {
		return Result{}, meridian.Errorf(meridian.EInvalid, "%s entities have no followers", k.Name)
	}
	if userID == "" && p != nil {
		userID = p.ID
	}
	if err := checkID(id); err != nil {
		return Result{}, err
	}
	if err := checkID(userID); err != nil {
		return Result{}, err
	}
	if p != nil && userID != p.ID && !p.IsAdmin() {
		return Result{}, meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [EditFollowers] not allowed", p.Name)
	}
	var res Result
	err = s.inTx(ctx, func(tx Tx) error {
		row, err := getRow(ctx, tx, k, ByID(id), IncludeNonDeleted)
		if err != nil {
			return err
		}
		e, err := s.full(ctx, tx, k, row, map[string]bool{"owners": true})
		if err != nil {
			return err
		}
		if err := s.authorize(p, OpFollow, k, e, ownersOf(e)); err != nil {
			return err
		}
		user, err := tx.Get(ctx, meridian.KindUser, userID)
		if meridian.ErrorCode(err) == meridian.ENotFound || (err == nil && user.Deleted) {
			return meridian.NotFound(meridian.KindUser, userID)
		}
		if err != nil {
			return err
		}
		rel := Relation{FromID: row.ID, FromKind: k.Name, ToID: user.ID, ToKind: meridian.KindUser, Type: "followers"}
		existing, err := tx.Relations(ctx, RelationQuery{FromID: row.ID, ToID: user.ID, Type: "followers"})
		if err != nil {
			return err
		}
		cd := meridian.ChangeDescription{FieldsAdded: []meridian.FieldChange{}, FieldsUpdated: []meridian.FieldChange{},
			FieldsDeleted: []meridian.FieldChange{}, PreviousVersion: row.Version.Float()}
		refJSON := encodeChange([]any{refOf(user).Map()})
		switch {
		case add && len(existing) == 0:
			err = tx.Relate(ctx, rel)
			cd.FieldsAdded = append(cd.FieldsAdded, meridian.FieldChange{Name: "followers", NewValue: refJSON})
		case !add && len(existing) > 0:
			err = tx.Unrelate(ctx, rel)
			cd.FieldsDeleted = append(cd.FieldsDeleted, meridian.FieldChange{Name: "followers", OldValue: refJSON})
		case !add:
			return meridian.Errorf(meridian.ENotFound, "user %s does not follow %s %s", userID, k.Name, id)
		default:
			res = Result{Entity: s.shape(p, k, e, nil), Change: meridian.EventEntityNoChange}
			return nil
		}
		if err != nil {
			return err
		}
		ev := s.event(p, meridian.EventEntityFieldsChanged, k, e, &cd)
		if err := tx.AppendEvent(ctx, ev); err != nil {
			return err
		}
		ev.Entity = nil
		res = Result{Entity: s.shape(p, k, e, nil), Change: meridian.EventEntityFieldsChanged, Event: &ev}
		return nil
	})
	return res, err
}

// loadFor reads an entity's row and full document and checks that the caller may
// perform op on it.
func (s *Entities) loadFor(ctx context.Context, tx Tx, p *meridian.Principal, op Operation, k *meridian.Kind, key Key, include Include) (Row, meridian.Entity, error) {
	row, err := getRow(ctx, tx, k, key, include)
	if err != nil {
		return Row{}, nil, err
	}
	e, err := s.full(ctx, tx, k, row, nil)
	if err != nil {
		return Row{}, nil, err
	}
	if err := s.authorizeOwned(ctx, tx, p, op, k, e); err != nil {
		return Row{}, nil, err
	}
	return row, e, nil
}

// ETag returns the ETag of an entity document, for the ETag and If-Match headers.
func ETag(e meridian.Entity) string {
	return `"` + e.ID() + ":" + e.Version().String() + `"`
}

// etagMatches accepts the ETag (strong or weak) or the bare version.
func etagMatches(ifMatch string, e meridian.Entity) bool {
	v := strings.TrimSpace(ifMatch)
	if v == "*" {
		return true
	}
	v = strings.TrimPrefix(v, "W/")
	v = strings.Trim(v, `"`)
	return v == strings.Trim(ETag(e), `"`) || v == e.Version().String()
}
