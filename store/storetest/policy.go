package storetest

import (
	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// ownerPolicy is the suite's stand-in for a role policy, so that the engine's suite
// depends on no capability (auth.Policy has its own tests). Admins may do everything;
// anyone may View and Follow; Edit and soft Delete need to own the entity (a user
// owner that is the principal; the engine adds the members of owning teams), and Edit
// is also allowed on the principal's own entity; Create, HardDelete, SeeSecrets and
// privileged edits are the admins'.
type ownerPolicy struct{}

func (ownerPolicy) Authorize(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if p.IsAdmin() || op == store.OpView || op == store.OpFollow {
		return nil
	}
	owns := false
	for _, o := range owners {
		owns = owns || (o.Type == "user" && (o.ID == p.ID || o.Name == p.Name))
	}
	switch {
	case op == store.OpEdit && (owns || (p.ID != "" && e.ID() == p.ID)):
		return nil
	case op == store.OpDelete && owns:
		return nil
	}
	return meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [%s] not allowed", p.Name, op)
}
