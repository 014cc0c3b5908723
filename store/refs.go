package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/meridian-catalog/meridian"
)

// resolveRef finds the entity a reference names, as OpenMetadata's create requests
// name them: v may be an id string (CreateTeam's users), a name or FQN string, or an
// object with id or fullyQualifiedName (or name) and optionally type. A string that is
// a UUID is an id when an entity of an allowed kind has it, and a name otherwise.
// kinds lists the entity types the field may point at; empty means any, and then an
// object needs its type.
func resolveRef(ctx context.Context, tx Tx, field string, v any, kinds []string) (Row, error) {
	var id, fqn, typ string
	switch t := v.(type) {
	case string:
		if _, err := uuid.Parse(t); err == nil {
			r, err := tx.Get(ctx, "", t)
			if err == nil && !r.Deleted && (len(kinds) == 0 || contains(kinds, r.Kind)) {
				return r, nil
			}
			if err != nil && meridian.ErrorCode(err) != meridian.ENotFound {
				return Row{}, err
			}
			if len(kinds) == 0 {
				return Row{}, meridian.NotFound("entity", t)
			}
		}
		fqn = t
	case map[string]any:
		id, _ = t["id"].(string)
		typ, _ = t["type"].(string)
		fqn, _ = t["fullyQualifiedName"].(string)
		if fqn == "" {
			fqn, _ = t["name"].(string)
		}
	default:
		return Row{}, meridian.Errorf(meridian.EInvalid, "%s must be a fully qualified name or an entity reference", field)
	}
	if typ != "" {
		if len(kinds) > 0 && !contains(kinds, typ) {
			return Row{}, meridian.Errorf(meridian.EInvalid, "%s: an entity of type %s is not allowed here (allowed: %v)", field, typ, kinds)
		}
		kinds = []string{typ}
	}
	switch {
	case id != "":
		if _, err := uuid.Parse(id); err != nil {
			return Row{}, meridian.Errorf(meridian.EInvalid, "%s: invalid id %q", field, id)
		}
		r, err := tx.Get(ctx, "", id)
		if meridian.ErrorCode(err) == meridian.ENotFound || (err == nil && len(kinds) > 0 && !contains(kinds, r.Kind)) {
			return Row{}, meridian.NotFound(kindLabel(kinds), id)
		}
		if err != nil {
			return Row{}, err
		}
		if r.Deleted {
			return Row{}, meridian.NotFound(r.Kind, id)
		}
		return r, nil
	case fqn != "":
		if len(kinds) == 0 {
			return Row{}, meridian.Errorf(meridian.EInvalid, "%s: a reference by name needs its type", field)
		}
		norm, err := meridian.NormalizeFQN(fqn)
		if err != nil {
			return Row{}, meridian.Errorf(meridian.EInvalid, "%s: %s", field, meridian.ErrorMessage(err))
		}
		for _, kind := range kinds {
			r, err := tx.GetByFQN(ctx, kind, norm)
			if meridian.ErrorCode(err) == meridian.ENotFound || (err == nil && r.Deleted) {
				continue
			}
			if err != nil {
				return Row{}, err
			}
			return r, nil
		}
		return Row{}, meridian.NotFound(kindLabel(kinds), fqn)
	}
	return Row{}, meridian.Errorf(meridian.EInvalid, "%s must name an entity by id or fullyQualifiedName", field)
}

// resolveRefList resolves a list of references, dropping duplicates.
func resolveRefList(ctx context.Context, tx Tx, field string, v any, kinds []string) ([]Row, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, meridian.Errorf(meridian.EInvalid, "%s must be an array of entity references", field)
	}
	var rows []Row
	seen := map[string]bool{}
	for i, item := range items {
		r, err := resolveRef(ctx, tx, fmt.Sprintf("%s[%d]", field, i), item, kinds)
		if err != nil {
			return nil, err
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			rows = append(rows, r)
		}
	}
	return rows, nil
}

func kindLabel(kinds []string) string {
	if len(kinds) == 1 {
		return kinds[0]
	}
	return "entity"
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
