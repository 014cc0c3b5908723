// Package auth issues and verifies Meridian's API tokens, decides what a principal may
// do, and encrypts secrets at rest.
//
// # Tokens
//
// Authority signs HS256 JWTs with a 32-byte key kept in the store's settings table
// (auth.jwt.key), so replicas on one database share it. Tokens are kept in auth's own
// table, tokens, which auth declares as a store module (Module: migrations numbered
// alike on SQLite and PostgreSQL) and reaches through the transaction's SQL seam; open
// the store with Module before New. Claims are sub (user or bot
// name), iss, roles, email, isBot, tokenType (BOT or PERSONAL_ACCESS), iat, exp (absent
// for a token that never expires), jti (the token id), uid (the user or bot entity id)
// and scope (space separated, only when the token is scoped). Only the SHA-256 of a raw
// token is stored; a token is accepted only while its hash is stored, not revoked and
// not expired, and while its user exists and is not deleted, so a revocation or a
// deleted user takes effect at once. The principal's id and roles are read from the
// user entity at each request: the roles claim records what the user had when the
// token was issued, and a role change applies to every token at once. Only HS256 is accepted: "none"
// and RS/ES/PS tokens are refused.
//
// # Authorization
//
// Policy implements store.Policy with these rules, checked in order:
//
//  1. No principal: EUnauthorized "Missing token".
//  2. SeeSecrets (plaintext secrets in answers): only a bot principal that holds the
//     role SecretsReader, which an admin grants per bot (PUT or DELETE
//     /api/v1/bots/{id}/secretsAccess). Human users, admins included, and every other
//     bot see the mask. A token scoped to metadata:read keeps the grant.
//  3. A token scoped to metadata:read only (Principal.ReadOnly) may View; every other
//     operation, Follow included, is EForbidden "Token scope metadata:read does not
//     allow <op>".
//  4. Admin may do everything else.
//  5. Account kinds (Kind.Account: user, team and bot): only admins may Create, Delete or HardDelete them.
//     Anyone may View and Follow them. Edit is allowed to admins, to a user on their
//     own user entity (entity id == principal id), and to the entity's owners (a team's
//     owners may edit the team). Fields a kind marks Privileged (a user's roles and
//     isAdmin) need EditPrivileged, which only admins have.
//  6. AdminOnly kinds (Kind.AdminOnly: event subscriptions): anyone may View and Follow
//     them; only admins may do anything else.
//  7. DataSteward: View, Follow, Create, Edit and Delete (soft) on every other kind;
//     never HardDelete.
//  8. DataConsumer, and any principal with no known role: View and Follow; Edit and
//     Delete (soft) only on entities they own; no Create; no HardDelete.
//  8. A kind with its own operations (Kind.Operations and Kind.Allow: a task's
//     CreateTask, EditTask, ResolveTask, CloseTask, ReassignTask) decides every
//     operation but View and Follow for a non-admin itself; rules 5 to 7 do not apply
//     to it (see meridian.TaskAllows for the task rules).
//
// A principal owns an entity when one of its owners is an EntityRef of type "user"
// whose id is the principal's id or whose name is the principal's name. A team
// reference in owners is never matched against the principal itself (a team named like
// the principal is not the principal). Team ownership counts through membership
// instead: when an entity has a team owner and the policy refuses, the engine
// (store.Entities) expands the team to its member users (the "teams" relation from user
// to team) and asks again, so a member of an owning team is an owner for rules 5 to 7.
// Refusals use OpenMetadata's wording:
// "Principal: CatalogPrincipal{name='bob'} operations [Edit] not allowed".
//
// # Secrets
//
// Sealer encrypts secrets with AES-256-GCM as "enc:v1:" + base64(nonce||ciphertext).
// Its key comes from MERIDIAN_SECRET_KEY or from <dataDir>/secret.key (see LoadSealer).
// Which values are secrets is the kind schemas' to say (format password; see
// store.SecretSchema); the engine seals every one of them on write.
package auth

import (
	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Policy is Meridian's role-based store.Policy; the package comment lists its rules.
// The zero value is ready to use.
type Policy struct{}

var _ store.Policy = Policy{}

// RoleSecretsReader is the role that lets a bot receive secrets in plaintext. Only
// admins change roles; the role gives a human user nothing.
const RoleSecretsReader = "SecretsReader"

// Authorize reports whether p may perform op on entity e of kind k, whose current owners
// are owners (empty on create). Errors: EUnauthorized for a nil principal, EForbidden
// for a refusal.
func (Policy) Authorize(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) error {
	if p == nil {
		return meridian.Errorf(meridian.EUnauthorized, "Missing token")
	}
	if op == store.OpSeeSecrets {
		if p.IsBot && p.HasRole(RoleSecretsReader) {
			return nil
		}
		return denied(p, op)
	}
	if p.ReadOnly() && op != store.OpView {
		return meridian.Errorf(meridian.EForbidden, "Token scope %s does not allow %s", meridian.ScopeRead, op)
	}
	if p.IsAdmin() {
		return nil
	}
	if allowed(p, op, k, e, owners) {
		return nil
	}
	return denied(p, op)
}

func allowed(p *meridian.Principal, op store.Operation, k *meridian.Kind, e meridian.Entity, owners []meridian.EntityRef) bool {
	switch op {
	case store.OpView, store.OpFollow:
		return true
	}
	if k != nil && k.Allow != nil {
		return k.Allow(p, string(op), e) // the kind's own operations (a task's CreateTask, ResolveTask, …)
	}
	if op == store.OpHardDelete {
		return false
	}
	if k.AdminOnly {
		return false
	}
	if k.Account {
		if op != store.OpEdit {
			return false
		}
		if p.ID != "" && e.ID() == p.ID {
			return true // a user's own entity: ids are unique across kinds
		}
		return owns(p, owners)
	}
	switch op {
	case store.OpCreate:
		return p.HasRole(meridian.RoleDataSteward)
	case store.OpEdit, store.OpDelete:
		return p.HasRole(meridian.RoleDataSteward) || owns(p, owners)
	}
	return false
}

// owns reports whether one of owners is the principal's user.
func owns(p *meridian.Principal, owners []meridian.EntityRef) bool {
	for _, o := range owners {
		if o.Type != meridian.KindUser {
			continue
		}
		if (p.ID != "" && o.ID == p.ID) || (p.Name != "" && o.Name == p.Name) {
			return true
		}
	}
	return false
}

func denied(p *meridian.Principal, op store.Operation) error {
	return meridian.Errorf(meridian.EForbidden, "Principal: CatalogPrincipal{name='%s'} operations [%s] not allowed", p.Name, op)
}
