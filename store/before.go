package store

import (
	"context"
	"reflect"

	"github.com/meridian-catalog/meridian"
)

// beforeWrite is the one sequence that every verb creating or changing an entity runs
// on the document it is about to write: POST, PUT that creates, PUT that updates,
// PATCH, Edit, and so every MCP write tool. w.Old is nil on create. In order:
//
//  0. the document's limits (meridian.CheckDocument);
//  1. fields answered as references but stored as names (Kind.NamedRefs) are turned
//     back into names; immutable fields keep their value, and privileged fields change
//     only for a caller allowed OpEditPrivileged;
//  2. computed read fields are dropped, the schema's defaults fill in what a new
//     entity lacks, and the kind's Prepare runs;
//  3. the JSON Schema;
//  4. the kind's own rules (Validate);
//  5. governance (owners, reviewers, domains and data products, tags).
//
// An update runs it in two halves, prepare (0–2) and check (3–5), and stops between
// them when the document did not change: a write that changes nothing is no write.
// Errors: EInvalid, ENotFound (a referenced entity), EForbidden.
func (s *Entities) beforeWrite(ctx context.Context, tx Tx, k *meridian.Kind, w *meridian.Write) error {
	if err := s.prepare(ctx, tx, k, w); err != nil {
		return err
	}
	return s.check(ctx, tx, k, w)
}

// prepare is steps 0 to 2 of beforeWrite.
func (s *Entities) prepare(ctx context.Context, tx Tx, k *meridian.Kind, w *meridian.Write) error {
	if err := meridian.CheckDocument(w.New); err != nil {
		return err
	}
	k.StoreNames(w.New)
	if err := s.checkFields(k, w); err != nil {
		return err
	}
	for _, f := range k.Computed {
		delete(w.New, f)
	}
	if w.Old == nil {
		if v, ok := s.valid.(interface{ Defaults(string, meridian.Entity) }); ok {
			v.Defaults(k.Name, w.New)
		}
	}
	if k.Prepare != nil {
		return k.Prepare(ctx, txCatalog{tx}, w)
	}
	return nil
}

// check is steps 3 to 5 of beforeWrite.
func (s *Entities) check(ctx context.Context, tx Tx, k *meridian.Kind, w *meridian.Write) error {
	if s.valid != nil {
		if err := s.valid.Validate(k.Name, w.New); err != nil {
			return err
		}
	}
	if k.Validate != nil {
		if err := k.Validate(ctx, txCatalog{tx}, w); err != nil {
			return err
		}
	}
	return s.checkGovernance(ctx, tx, k, w.Old, w.New)
}

// checkFields refuses a change of an immutable field (EInvalid, with PATCH's message
// for every verb) and asks the policy for OpEditPrivileged when a privileged field is
// set on create or changed on update.
func (s *Entities) checkFields(k *meridian.Kind, w *meridian.Write) error {
	if w.Old != nil {
		if err := checkImmutable(k, w.Old, w.New, sameValue); err != nil {
			return err
		}
	}
	for _, f := range k.Privileged {
		var changed bool
		if w.Old == nil {
			changed = !isEmpty(w.New[f])
		} else {
			changed = !reflect.DeepEqual(w.Old[f], w.New[f]) && !(isEmpty(w.Old[f]) && isEmpty(w.New[f]))
		}
		if changed {
			owners := ownersOf(w.New)
			if w.Old != nil {
				owners = ownersOf(w.Old)
			}
			return s.authorize(w.Principal, OpEditPrivileged, k, w.New, owners)
		}
	}
	return nil
}

// checkImmutable refuses, with EInvalid, a document whose immutable fields differ from
// old's by eq.
func checkImmutable(k *meridian.Kind, old, next meridian.Entity, eq func(a, b any) bool) error {
	for _, f := range immutableFields(k) {
		if !eq(old[f], next[f]) {
			return meridian.Errorf(meridian.EInvalid, "%s attribute %s can't be modified", k.Name, f)
		}
	}
	return nil
}

// sameValue compares two field values; two entity references are the same when they
// name the same entity, whatever else they carry (a parent's display name may have
// changed since the reference was stored).
func sameValue(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		aid, _ := am["id"].(string)
		bid, _ := bm["id"].(string)
		if aid != "" || bid != "" {
			return aid == bid
		}
	}
	return reflect.DeepEqual(a, b)
}

// immutableFields are the fields no verb may change once an entity exists: its
// identity, its deleted flag (changed only by delete and restore), its parent and what
// it inherits from it, and the kind's Immutable fields.
func immutableFields(k *meridian.Kind) []string {
	f := []string{"id", "name", "fullyQualifiedName", "deleted"}
	f = append(f, k.Immutable...)
	for _, p := range k.Parents {
		f = append(f, p.Field)
	}
	return append(f, k.Inherit...)
}

// txCatalog is the read access kind hooks get: the write's own transaction.
type txCatalog struct{ tx Tx }

func (c txCatalog) Get(ctx context.Context, kind, id string) (meridian.Entity, error) {
	row, err := c.tx.Get(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	return decode(row.Doc)
}

func (c txCatalog) GetByFQN(ctx context.Context, kind, fqn string) (meridian.Entity, error) {
	row, err := c.tx.GetByFQN(ctx, kind, fqn)
	if err != nil {
		return nil, err
	}
	return decode(row.Doc)
}
