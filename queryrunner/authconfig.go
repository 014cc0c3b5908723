package queryrunner

import (
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// Auth types of an authConfig or userAuthConfig, as its authType member spells them.
const (
	AuthBasic = "Basic"
	AuthOAuth = "OAuth"
)

// Configurable fields: what an admin may let users (and teams) set for themselves.
const (
	FieldRole      = "role"
	FieldDatabase  = "database"
	FieldSchema    = "schema"
	FieldWarehouse = "warehouse"
	FieldDataset   = "dataset"
)

// ConfigurableFields are the values userConfigurableFields may hold.
var ConfigurableFields = []string{FieldRole, FieldDatabase, FieldSchema, FieldWarehouse, FieldDataset}

// Bounds of a config's values.
const (
	maxNameLen   = 256  // usernames, roles, databases, client ids, …
	maxSecretLen = 8192 // passwords and tokens (a JWT access token can be a few KiB)
	maxURLLen    = 2048
	maxScopes    = 32
	maxOptions   = 32
)

// owner says whose credentials an authConfig holds: the admin's, or a user's or
// team's. The admin's OAuth config holds the OAuth client (clientId, clientSecret,
// tokenUrl, scopes); a user's or team's only its own tokens, so that no user makes the
// server call a URL of their choosing.
type owner int

const (
	ownerAdmin owner = iota
	ownerUser        // a user's or a team's
)

// member describes one member an authConfig may hold.
type member struct {
	secret bool
	auth   []string // the auth types that have it; nil: every type
	admin  bool     // only in the admin's config
	list   bool     // a list of strings (scopes), else a string
}

// members of an authConfig or userAuthConfig, besides authType. tokenExpiresAt is
// the server's own, answered and never taken from a body.
var members = map[string]member{
	"username":       {},
	"password":       {secret: true, auth: []string{AuthBasic}},
	FieldRole:        {},
	FieldDatabase:    {},
	FieldSchema:      {},
	FieldWarehouse:   {},
	FieldDataset:     {},
	"clientId":       {auth: []string{AuthOAuth}, admin: true},
	"clientSecret":   {secret: true, auth: []string{AuthOAuth}, admin: true},
	"tokenUrl":       {auth: []string{AuthOAuth}, admin: true},
	"scopes":         {auth: []string{AuthOAuth}, admin: true, list: true},
	"refreshToken":   {secret: true, auth: []string{AuthOAuth}},
	"accessToken":    {secret: true, auth: []string{AuthOAuth}},
	"tokenExpiresAt": {auth: []string{AuthOAuth}},
}

// authConfig is a parsed authConfig or userAuthConfig: its auth type, its plain
// members and its secrets.
type authConfig struct {
	Type    string
	Plain   map[string]any    // strings, and scopes as []string
	Secrets map[string]string // password, clientSecret, refreshToken, accessToken
}

// str returns a plain string member.
func (a authConfig) str(name string) string {
	s, _ := a.Plain[name].(string)
	return s
}

// scopes returns the OAuth scopes.
func (a authConfig) scopes() []string {
	s, _ := a.Plain["scopes"].([]string)
	return s
}

// view is the authConfig as answered: secrets masked.
func (a authConfig) view() map[string]any {
	out := map[string]any{"authType": a.Type}
	for k, v := range a.Plain {
		out[k] = v
	}
	for k := range a.Secrets {
		out[k] = store.Mask
	}
	return out
}

// plainJSON is what the doc column stores of the authConfig: no secret.
func (a authConfig) plainJSON() map[string]any {
	out := map[string]any{"authType": a.Type}
	for k, v := range a.Plain {
		out[k] = v
	}
	return out
}

// parseAuthConfig reads an authConfig (field names the body member in messages) for
// an owner. prev, when not nil, is the stored config the body replaces: a secret sent
// back masked (store.Mask) keeps prev's value. tokenExpiresAt is kept from prev and
// never read from the body. Errors: EInvalid naming the member.
func parseAuthConfig(field string, v any, who owner, prev *authConfig) (authConfig, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s must be an object", field)
	}
	a := authConfig{Plain: map[string]any{}, Secrets: map[string]string{}}
	t, _ := m["authType"].(string)
	switch strings.ToLower(strings.TrimSpace(t)) {
	case "", "basic":
		a.Type = AuthBasic
	case "oauth", "oauth2":
		a.Type = AuthOAuth
	default:
		return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.authType must be %s or %s", field, AuthBasic, AuthOAuth)
	}
	if raw, present := m["authType"]; present && raw != nil {
		if _, isStr := raw.(string); !isStr {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.authType must be a string", field)
		}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "authType" || k == "tokenExpiresAt" {
			continue
		}
		val := m[k]
		mem, known := members[k]
		if !known {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s is not a member of an authConfig (allowed: %s)", field, clip(k), strings.Join(memberNames(a.Type, who), ", "))
		}
		if mem.auth != nil && !slices.Contains(mem.auth, a.Type) {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s is not used by %s authentication", field, k, a.Type)
		}
		if mem.admin && who != ownerAdmin {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s is set by the admin config only", field, k)
		}
		if val == nil {
			continue
		}
		if mem.list {
			list, err := stringList(field+"."+k, val)
			if err != nil {
				return authConfig{}, err
			}
			if len(list) > 0 {
				a.Plain[k] = list
			}
			continue
		}
		s, isStr := val.(string)
		if !isStr {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s must be a string", field, k)
		}
		if mem.secret {
			if s == store.Mask {
				if prev == nil || prev.Secrets[k] == "" {
					return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s is the mask %s but no secret is stored to restore", field, k, store.Mask)
				}
				s = prev.Secrets[k]
			}
			if len(s) > maxSecretLen {
				return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s is longer than %d bytes", field, k, maxSecretLen)
			}
			if s != "" {
				a.Secrets[k] = s
			}
			continue
		}
		s = strings.TrimSpace(s)
		limit := maxNameLen
		if k == "tokenUrl" {
			limit = maxURLLen
		}
		if len(s) > limit {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s is longer than %d bytes", field, k, limit)
		}
		if strings.ContainsFunc(s, unicode.IsControl) || !utf8.ValidString(s) {
			return authConfig{}, meridian.Errorf(meridian.EInvalid, "%s.%s must not hold control characters", field, k)
		}
		if s != "" {
			a.Plain[k] = s
		}
	}
	if prev != nil && prev.Type == a.Type {
		if exp, ok := prev.Plain["tokenExpiresAt"]; ok && a.Secrets["accessToken"] == prev.Secrets["accessToken"] {
			a.Plain["tokenExpiresAt"] = exp
		}
	}
	return a, a.check(field, who)
}

// check says what a complete config of the owner needs.
func (a authConfig) check(field string, who owner) error {
	switch a.Type {
	case AuthBasic:
		if a.str("username") == "" {
			return meridian.Errorf(meridian.EInvalid, "%s.username is required for %s authentication", field, AuthBasic)
		}
	case AuthOAuth:
		if who == ownerAdmin {
			for _, k := range []string{"clientId", "tokenUrl"} {
				if a.str(k) == "" {
					return meridian.Errorf(meridian.EInvalid, "%s.%s is required for %s authentication", field, k, AuthOAuth)
				}
			}
			u, err := url.Parse(a.str("tokenUrl"))
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
				return meridian.Errorf(meridian.EInvalid, "%s.tokenUrl must be an http or https URL without credentials", field)
			}
		} else if a.Secrets["refreshToken"] == "" && a.Secrets["accessToken"] == "" {
			return meridian.Errorf(meridian.EInvalid, "%s needs a refreshToken or an accessToken for %s authentication", field, AuthOAuth)
		}
	}
	return nil
}

// stringList reads scopes: a list of strings, or one space-separated string.
func stringList(field string, v any) ([]string, error) {
	var out []string
	switch t := v.(type) {
	case string:
		out = strings.Fields(t)
	case []any:
		for _, item := range t {
			s, ok := item.(string)
			if !ok {
				return nil, meridian.Errorf(meridian.EInvalid, "%s must be a list of strings", field)
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	default:
		return nil, meridian.Errorf(meridian.EInvalid, "%s must be a list of strings", field)
	}
	if len(out) > maxScopes {
		return nil, meridian.Errorf(meridian.EInvalid, "%s holds more than %d items", field, maxScopes)
	}
	for _, s := range out {
		if len(s) > maxNameLen {
			return nil, meridian.Errorf(meridian.EInvalid, "%s has an item longer than %d bytes", field, maxNameLen)
		}
	}
	return out, nil
}

// memberNames lists the members an owner's config of an auth type may hold.
func memberNames(authType string, who owner) []string {
	out := []string{"authType"}
	for k, m := range members {
		if k == "tokenExpiresAt" || (m.auth != nil && !slices.Contains(m.auth, authType)) || (m.admin && who != ownerAdmin) {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out[1:])
	return out
}

// clip shortens a caller's value quoted in a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// credentialsDiffer reports whether two admin authConfigs reach the database with
// different credentials: a change that makes user and team configs need a new test.
func credentialsDiffer(a, b authConfig) bool {
	if a.Type != b.Type {
		return true
	}
	for _, k := range []string{"username", "clientId", "tokenUrl"} {
		if a.str(k) != b.str(k) {
			return true
		}
	}
	for _, k := range []string{"password", "clientSecret", "refreshToken"} {
		if a.Secrets[k] != b.Secrets[k] {
			return true
		}
	}
	return false
}

// sealSecrets seals the secrets as one value ("" when there are none).
func sealSecrets(sealer store.Sealer, secrets map[string]string) (string, error) {
	if len(secrets) == 0 {
		return "", nil
	}
	b, err := json.Marshal(secrets)
	if err != nil {
		return "", err
	}
	return sealer.Seal(string(b))
}

// openSecrets opens what sealSecrets sealed. A value that cannot be opened (another
// key, damaged data) is an internal error: the config must be entered again.
func openSecrets(sealer store.Sealer, sealed string) (map[string]string, error) {
	out := map[string]string{}
	if sealed == "" {
		return out, nil
	}
	plain, err := sealer.Open(sealed)
	if err != nil {
		return nil, meridian.Errorf(meridian.EInternal, "a stored Query Runner secret cannot be opened with the catalog's key; enter the config again")
	}
	if err := json.Unmarshal([]byte(plain), &out); err != nil {
		return nil, meridian.Errorf(meridian.EInternal, "a stored Query Runner secret is damaged; enter the config again")
	}
	return out, nil
}

// decodeAuth reads a stored authConfig: its doc member and its opened secrets.
func decodeAuth(raw map[string]any, secrets map[string]string) authConfig {
	a := authConfig{Plain: map[string]any{}, Secrets: secrets}
	a.Type, _ = raw["authType"].(string)
	if a.Type == "" {
		a.Type = AuthBasic
	}
	for k, v := range raw {
		if k == "authType" {
			continue
		}
		if list, ok := v.([]any); ok {
			ss := make([]string, 0, len(list))
			for _, x := range list {
				if s, ok := x.(string); ok {
					ss = append(ss, s)
				}
			}
			a.Plain[k] = ss
			continue
		}
		a.Plain[k] = v
	}
	return a
}
