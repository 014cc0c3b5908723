package rest

import (
	"net/http"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/store"
)

// Defaults of the token endpoints when the body leaves them out.
const (
	defaultTokenExpiry = "30d"
	defaultTokenName   = "personal-access-token"
	botTokenName       = "bot-token"
)

// callerUser reads the caller's user entity, with its roles.
func (s *server) callerUser(r *http.Request, fields string) (meridian.Entity, error) {
	p := principal(r)
	return s.ents.Get(r.Context(), p, "user", store.ByFQN(meridian.QuoteName(p.Name)),
		store.GetOptions{Fields: fields, Include: store.IncludeNonDeleted})
}

func (s *server) me(w http.ResponseWriter, r *http.Request) error {
	o, err := getOptions(r)
	if err != nil {
		return err
	}
	p := principal(r)
	e, err := s.ents.Get(r.Context(), p, "user", store.ByFQN(meridian.QuoteName(p.Name)), o)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// UserRoles returns the role names of a user document: "roles" may hold role names or
// entity references.
func UserRoles(e meridian.Entity) []string {
	var out []string
	list, _ := e["roles"].([]any)
	for _, v := range list {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case map[string]any:
			if n, _ := t["name"].(string); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// subjectOf is the token subject for a user document.
func subjectOf(e meridian.Entity, scopes []string) auth.Subject {
	isBot, _ := e["isBot"].(bool)
	return auth.Subject{ID: e.ID(), Name: e.Name(), Email: e.String("email"), Roles: UserRoles(e),
		IsBot: isBot, Scopes: scopes}
}

// optionalString reads an optional string field of a body.
func optionalString(body meridian.Entity, field string) (string, error) {
	v, ok := body[field]
	if !ok || v == nil {
		return "", nil
	}
	str, ok := v.(string)
	if !ok {
		return "", invalid("%s must be a string", field)
	}
	return strings.TrimSpace(str), nil
}

// readExpiry reads JWTTokenExpiry ("30d", "30" days, "never", "Unlimited").
func readExpiry(body meridian.Entity) (string, error) {
	exp, err := optionalString(body, "JWTTokenExpiry")
	if err != nil {
		return "", err
	}
	if exp == "" {
		exp = defaultTokenExpiry
	}
	return exp, nil
}

// tokenInfo is a token as listed, without its secret.
type tokenInfo struct {
	ID        string `json:"id"`
	TokenName string `json:"tokenName"`
	TokenType string `json:"tokenType"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt int64  `json:"expiresAt,omitempty"`
	Revoked   bool   `json:"revoked"`
}

func infoOf(t auth.Token) tokenInfo {
	return tokenInfo{ID: t.ID, TokenName: t.Name, TokenType: t.TokenType, CreatedAt: t.CreatedAt,
		ExpiresAt: t.ExpiresAt, Revoked: t.Revoked}
}

// createPersonalToken issues a personal access token for the caller. The token carries
// the caller's roles as the user entity holds them now, and the caller's scopes, so a
// read-scoped token can never mint a wider one.
func (s *server) createPersonalToken(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r)
	if err != nil {
		return err
	}
	name, err := optionalString(body, "tokenName")
	if err != nil {
		return err
	}
	if name == "" {
		name = defaultTokenName
	}
	exp, err := readExpiry(body)
	if err != nil {
		return err
	}
	ttl, err := auth.ParseExpiry(exp)
	if err != nil {
		return err
	}
	u, err := s.callerUser(r, "roles")
	if err != nil {
		return err
	}
	raw, tok, err := s.auth.Issue(r.Context(), subjectOf(u, principal(r).Scopes), meridian.TokenTypePersonal, ttl, name)
	if err != nil {
		return err
	}
	out := map[string]any{"id": tok.ID, "tokenName": tok.Name, "token": raw, "tokenType": tok.TokenType,
		"createdAt": tok.CreatedAt}
	if tok.ExpiresAt != 0 {
		out["expiresAt"] = tok.ExpiresAt
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// listTokens lists the caller's tokens without their secrets.
func (s *server) listTokens(w http.ResponseWriter, r *http.Request) error {
	toks, err := s.auth.Tokens(r.Context(), principal(r).Name)
	if err != nil {
		return err
	}
	out := make([]tokenInfo, 0, len(toks))
	for _, t := range toks {
		out = append(out, infoOf(t))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// revokeToken revokes one of the caller's tokens; an admin may revoke any token. A
// token of another user is "not found" to a non-admin, so ids are not probed.
func (s *server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "tokenId")
	if err != nil {
		return err
	}
	if strings.TrimSpace(id) == "" {
		return invalid("Invalid token id")
	}
	p := principal(r)
	if !p.IsAdmin() {
		toks, err := s.auth.Tokens(r.Context(), p.Name)
		if err != nil {
			return err
		}
		own := false
		for _, t := range toks {
			if t.ID == id {
				own = true
				break
			}
		}
		if !own {
			return meridian.Errorf(meridian.ENotFound, "token instance for %s not found", id)
		}
	}
	if err := s.auth.Revoke(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "revoked": true})
	return nil
}

// generateBotToken issues a BOT token for a bot user. Admins only.
func (s *server) generateBotToken(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.IsAdmin() {
		return meridian.Errorf(meridian.EForbidden, "Principal: %s is not an admin; only admins can generate bot tokens", p.Name)
	}
	userID, err := uuidParam(r, "userId")
	if err != nil {
		return err
	}
	body := meridian.Entity{}
	if r.ContentLength != 0 {
		b, err := readBody(r)
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			v, err := decodeJSON(b)
			if err != nil {
				return err
			}
			m, ok := v.(map[string]any)
			if !ok {
				return invalid("Invalid request format: the body must be a JSON object")
			}
			body = m
		}
	}
	exp, err := readExpiry(body)
	if err != nil {
		return err
	}
	ttl, err := auth.ParseExpiry(exp)
	if err != nil {
		return err
	}
	u, err := s.ents.Get(r.Context(), p, "user", store.ByID(userID),
		store.GetOptions{Fields: "roles", Include: store.IncludeNonDeleted})
	if err != nil {
		return err
	}
	if isBot, _ := u["isBot"].(bool); !isBot {
		return invalid("User %s is not a bot", u.Name())
	}
	sub := subjectOf(u, nil)
	sub.IsBot = true
	raw, tok, err := s.auth.Issue(r.Context(), sub, meridian.TokenTypeBot, ttl, botTokenName)
	if err != nil {
		return err
	}
	out := map[string]any{"JWTToken": raw, "JWTTokenExpiry": exp, "JWTTokenExpiresAt": nil,
		"id": tok.ID, "userId": u.ID(), "tokenType": tok.TokenType}
	if tok.ExpiresAt != 0 {
		out["JWTTokenExpiresAt"] = tok.ExpiresAt
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
