package store

import (
	"context"

	"github.com/meridian-catalog/meridian"
)

func (s *Entities) authorize(p *meridian.Principal, op Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if s.policy == nil {
		return nil
	}
	if k != nil {
		op = Operation(k.Operation(string(op))) // a task's Create is CreateTask
	}
	return s.policy.Authorize(p, op, k, e, owners)
}

// authorizeOwned checks op on a stored entity e, whose owners are those of its full
// document. A member of an owning team counts as an owner: when e has a team owner and
// the policy refuses, the team owners are expanded to their member users (relation
// "teams" from user to team) and the policy asked again. Without a team owner, or when
// the policy allows at once, it costs no lookup.
func (s *Entities) authorizeOwned(ctx context.Context, tx Tx, p *meridian.Principal, op Operation, k *meridian.Kind, e meridian.Entity) error {
	owners := ownersOf(e)
	err := s.authorize(p, op, k, e, owners)
	if err == nil || p == nil || meridian.ErrorCode(err) != meridian.EForbidden || !hasTeam(owners) {
		return err
	}
	members, merr := teamMembers(ctx, tx, owners)
	if merr != nil {
		return merr
	}
	if len(members) == 0 {
		return err
	}
	expanded := append(append([]meridian.EntityRef{}, owners...), members...)
	if s.authorize(p, op, k, e, expanded) == nil {
		return nil
	}
	return err
}

func hasTeam(refs []meridian.EntityRef) bool {
	for _, r := range refs {
		if r.Type == meridian.KindTeam {
			return true
		}
	}
	return false
}

// teamMembers returns, as user references (by id), the members of the active teams
// among owners.
func teamMembers(ctx context.Context, tx Tx, owners []meridian.EntityRef) ([]meridian.EntityRef, error) {
	var out []meridian.EntityRef
	seen := map[string]bool{}
	for _, o := range owners {
		if o.Type != meridian.KindTeam || o.ID == "" || o.Deleted {
			continue
		}
		rels, err := tx.Relations(ctx, RelationQuery{ToID: o.ID, Type: relationTypeTeams})
		if err != nil {
			return nil, err
		}
		for _, rel := range rels {
			if rel.FromKind != meridian.KindUser || seen[rel.FromID] {
				continue
			}
			seen[rel.FromID] = true
			out = append(out, meridian.EntityRef{ID: rel.FromID, Type: meridian.KindUser})
		}
	}
	return out, nil
}

// relationTypeTeams links a user to each team it is a member of.
const relationTypeTeams = "teams"

// ownersOf reads the owners of a full document.
func ownersOf(e meridian.Entity) []meridian.EntityRef {
	var refs []meridian.EntityRef
	for _, item := range asList(e["owners"]) {
		m, _ := item.(map[string]any)
		id, _ := m["id"].(string)
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		deleted, _ := m["deleted"].(bool)
		refs = append(refs, meridian.EntityRef{ID: id, Type: typ, Name: name, Deleted: deleted})
	}
	return refs
}
