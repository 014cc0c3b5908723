package meridian

import "context"

// Roles.
const (
	RoleAdmin         = "Admin"
	RoleDataSteward   = "DataSteward"
	RoleDataConsumer  = "DataConsumer"
	TokenTypeBot      = "BOT"
	TokenTypePersonal = "PERSONAL_ACCESS"
	ScopeRead         = "metadata:read"
	ScopeWrite        = "metadata:write"
)

// Principal is the authenticated caller.
type Principal struct {
	ID        string   // the user or bot entity id
	Name      string   // the user or bot name (JWT sub)
	Email     string   // e-mail claim
	Roles     []string // Admin, DataSteward, DataConsumer
	IsBot     bool     // bot tokens
	TokenType string   // BOT or PERSONAL_ACCESS
	Scopes    []string // empty means every scope
	Teams     []string // ids of the teams the user is a direct member of
}

// InTeam reports whether the principal is a direct member of the team with that id.
func (p *Principal) InTeam(id string) bool {
	if p == nil || id == "" {
		return false
	}
	for _, t := range p.Teams {
		if t == id {
			return true
		}
	}
	return false
}

// System is the engine's own principal: it seeds built-in data (the system test
// definitions) and makes the binary's bootstrap writes.
var System = &Principal{Name: "system", Roles: []string{RoleAdmin}}

// IsSystem reports whether p is the engine's own principal: named "system" and bound to
// no user entity (a user named "system" has an id). A nil principal is an internal call.
func (p *Principal) IsSystem() bool {
	return p == nil || (p.Name == System.Name && p.ID == "")
}

// HasRole reports whether the principal holds the role.
func (p *Principal) HasRole(role string) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// IsAdmin reports whether the principal is an admin.
func (p *Principal) IsAdmin() bool { return p.HasRole(RoleAdmin) }

// ReadOnly reports whether the token is scoped to metadata:read only.
func (p *Principal) ReadOnly() bool {
	if p == nil || len(p.Scopes) == 0 {
		return false
	}
	for _, s := range p.Scopes {
		if s == ScopeWrite || s == "write" {
			return false
		}
	}
	return true
}

type principalKey struct{}

// WithPrincipal returns a context carrying the principal.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in the context, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
