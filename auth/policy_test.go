package auth

import (
	"strings"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

var allOps = []store.Operation{store.OpView, store.OpFollow, store.OpCreate, store.OpEdit, store.OpDelete, store.OpHardDelete, store.OpSeeSecrets}

// opSet lists the operations a case allows; every other operation must be refused.
type opSet []store.Operation

func (s opSet) has(op store.Operation) bool {
	for _, o := range s {
		if o == op {
			return true
		}
	}
	return false
}

func TestPolicyMatrix(t *testing.T) {
	const bobID = "0d6e6b8a-8d1f-4b7e-9e53-3c1f0a2b4c01"
	bob := func(roles ...string) *meridian.Principal {
		return &meridian.Principal{ID: bobID, Name: "bob", Roles: roles, TokenType: meridian.TokenTypePersonal}
	}
	readOnly := func(p *meridian.Principal) *meridian.Principal { p.Scopes = []string{meridian.ScopeRead}; return p }
	bot := &meridian.Principal{ID: "b0", Name: "ingestion-bot", IsBot: true, TokenType: meridian.TokenTypeBot}

	table := meridian.Entity{"id": "t1", "name": "orders"}
	ownedByID := []meridian.EntityRef{{ID: bobID, Type: "user"}}
	ownedByName := []meridian.EntityRef{{ID: "other-id", Type: "user", Name: "bob"}}
	ownedByOther := []meridian.EntityRef{{ID: "x", Type: "user", Name: "carol"}}
	ownedByTeamNamedBob := []meridian.EntityRef{{ID: bobID, Type: "team", Name: "bob"}}
	// The engine passes a team owner's members after the team (store.Entities expands them).
	ownedByTeamWithBob := []meridian.EntityRef{{ID: "team-id", Type: "team", Name: "analysts"}, {ID: bobID, Type: "user"}}
	bobUser := meridian.Entity{"id": bobID, "name": "bob"}
	carolUser := meridian.Entity{"id": "c1", "name": "carol"}

	everything := opSet(allOps[:len(allOps)-1]) // all but SeeSecrets
	readFollow := opSet{store.OpView, store.OpFollow}
	ownerOps := opSet{store.OpView, store.OpFollow, store.OpEdit, store.OpDelete}
	stewardOps := opSet{store.OpView, store.OpFollow, store.OpCreate, store.OpEdit, store.OpDelete}

	tests := []struct {
		name   string
		p      *meridian.Principal
		kind   string
		e      meridian.Entity
		owners []meridian.EntityRef
		allow  opSet
	}{
		{"admin may do everything", bob(meridian.RoleAdmin), "table", table, nil, everything},
		{"admin may manage users", bob(meridian.RoleAdmin), "user", carolUser, nil, everything},
		{"admin with a read-only token may only read", readOnly(bob(meridian.RoleAdmin)), "table", table, nil, opSet{store.OpView}},
		{"steward may create, edit and soft delete", bob(meridian.RoleDataSteward), "table", table, ownedByOther, stewardOps},
		{"steward owning an entity still may not hard delete", bob(meridian.RoleDataSteward), "table", table, ownedByID, stewardOps},
		{"steward with a read-only token may only view", readOnly(bob(meridian.RoleDataSteward)), "table", table, ownedByID, opSet{store.OpView}},
		{"consumer may view and follow", bob(meridian.RoleDataConsumer), "table", table, nil, readFollow},
		{"consumer may not edit another's entity", bob(meridian.RoleDataConsumer), "table", table, ownedByOther, readFollow},
		{"consumer owner by id may edit and soft delete", bob(meridian.RoleDataConsumer), "table", table, ownedByID, ownerOps},
		{"consumer owner by name may edit and soft delete", bob(meridian.RoleDataConsumer), "table", table, ownedByName, ownerOps},
		{"team ownership is not user ownership", bob(meridian.RoleDataConsumer), "table", table, ownedByTeamNamedBob, readFollow},
		{"member of an owning team, expanded by the engine, may edit and soft delete", bob(meridian.RoleDataConsumer), "table", table, ownedByTeamWithBob, ownerOps},
		{"member of a team owning a team may edit it", bob(meridian.RoleDataConsumer), "team", meridian.Entity{"id": "t"}, ownedByTeamWithBob, opSet{store.OpView, store.OpFollow, store.OpEdit}},
		{"consumer owner with a read-only token may only view", readOnly(bob(meridian.RoleDataConsumer)), "table", table, ownedByID, opSet{store.OpView}},
		{"principal without roles is a consumer", bob(), "table", table, ownedByID, ownerOps},
		{"unknown role is a consumer", bob("Auditor"), "table", table, nil, readFollow},
		{"bot without the grant sees the mask", bot, "table", table, nil, readFollow},
		{"admin bot without the grant sees the mask", &meridian.Principal{Name: "b", IsBot: true, Roles: []string{meridian.RoleAdmin}}, "table", table, nil, everything},
		{"bot granted secrets access sees secrets", &meridian.Principal{Name: "b", IsBot: true, Roles: []string{RoleSecretsReader}}, "table", table, nil, opSet{store.OpView, store.OpFollow, store.OpSeeSecrets}},
		{"read-only bot granted secrets access may view and see secrets", readOnly(&meridian.Principal{Name: "b", IsBot: true, Roles: []string{RoleSecretsReader}}), "table", table, nil, opSet{store.OpView, store.OpSeeSecrets}},
		{"human user with the role sees the mask", bob(meridian.RoleAdmin, RoleSecretsReader), "table", table, nil, everything},
		{"steward may not manage other users", bob(meridian.RoleDataSteward), "user", carolUser, nil, readFollow},
		{"steward may not create teams", bob(meridian.RoleDataSteward), "team", meridian.Entity{"id": "t"}, nil, readFollow},
		{"steward may not delete bots", bob(meridian.RoleDataSteward), "bot", meridian.Entity{"id": "b"}, nil, readFollow},
		{"user may edit own user entity", bob(meridian.RoleDataConsumer), "user", bobUser, nil, opSet{store.OpView, store.OpFollow, store.OpEdit}},
		{"user may not delete own user entity", bob(), "user", bobUser, nil, opSet{store.OpView, store.OpFollow, store.OpEdit}},
		{"team owner may edit but not delete the team", bob(), "team", meridian.Entity{"id": "t"}, ownedByID, opSet{store.OpView, store.OpFollow, store.OpEdit}},
		{"read-only user may not edit own user entity", readOnly(bob()), "user", bobUser, nil, opSet{store.OpView}},
		{"principal without id does not own an entity without id", &meridian.Principal{Name: "anon"}, "user", meridian.Entity{}, nil, readFollow},
		{"consumer may not create with a nil entity", bob(), "table", nil, nil, readFollow},
		{"steward may only read and follow an admin-only kind", bob(meridian.RoleDataSteward), meridian.KindEventSubscription, meridian.Entity{"id": "s"}, nil, readFollow},
		{"owner may only read and follow an admin-only kind", bob(meridian.RoleDataConsumer), meridian.KindEventSubscription, meridian.Entity{"id": "s"}, ownedByID, readFollow},
		{"admin manages an admin-only kind", bob(meridian.RoleAdmin), meridian.KindEventSubscription, meridian.Entity{"id": "s"}, nil, everything},
	}
	var pol store.Policy = Policy{}
	for _, tt := range tests {
		for _, op := range allOps {
			t.Run(tt.name+"/"+string(op), func(t *testing.T) {
				err := pol.Authorize(tt.p, op, kind(t, tt.kind), tt.e, tt.owners)
				if tt.allow.has(op) {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				if meridian.ErrorCode(err) != meridian.EForbidden {
					t.Fatalf("err = %v, want %s", err, meridian.EForbidden)
				}
				want := "Principal: CatalogPrincipal{name='" + tt.p.Name + "'} operations [" + string(op) + "] not allowed"
				if tt.p.ReadOnly() && op != store.OpView && op != store.OpSeeSecrets {
					want = "Token scope metadata:read does not allow " + string(op)
				}
				if err.Error() != want {
					t.Errorf("message = %q, want %q", err.Error(), want)
				}
			})
		}
	}
}

func TestPolicyRefusesMissingPrincipal(t *testing.T) {
	for _, op := range allOps {
		err := Policy{}.Authorize(nil, op, kind(t, "table"), meridian.Entity{"id": "t"}, nil)
		if meridian.ErrorCode(err) != meridian.EUnauthorized || err.Error() != "Missing token" {
			t.Errorf("%s: err = %v, want unauthorized Missing token", op, err)
		}
	}
}

func TestPolicyWriteScopeIsNotReadOnly(t *testing.T) {
	p := &meridian.Principal{Name: "bob", Roles: []string{meridian.RoleDataSteward}, Scopes: []string{meridian.ScopeRead, meridian.ScopeWrite}}
	if err := (Policy{}).Authorize(p, store.OpEdit, kind(t, "table"), meridian.Entity{"id": "t"}, nil); err != nil {
		t.Fatalf("a read+write token was refused an edit: %v", err)
	}
	err := (Policy{}).Authorize(p, store.OpHardDelete, kind(t, "table"), meridian.Entity{"id": "t"}, nil)
	if err == nil || !strings.Contains(err.Error(), "operations [HardDelete] not allowed") {
		t.Fatalf("err = %v", err)
	}
}

// kind returns the registered kind with this name.
func kind(t *testing.T, name string) *meridian.Kind {
	t.Helper()
	k, ok := meridian.DefaultRegistry().Kind(name)
	if !ok {
		t.Fatalf("no kind %s", name)
	}
	return k
}
