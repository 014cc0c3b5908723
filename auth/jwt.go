package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// KeySetting is the settings key under which the HS256 signing key is kept, base64
// encoded. Keeping it in the database lets several replicas on one database share it.
const KeySetting = "auth.jwt.key"

// DefaultIssuer is the issuer New uses when it is given an empty one.
const DefaultIssuer = "meridian"

// maxTokenLen bounds the raw token Verify will look at; real tokens are well under 2 KB.
const maxTokenLen = 16 << 10

// maxExpiry is the longest lifetime ParseExpiry accepts: 100 years.
const maxExpiry = 36500 * 24 * time.Hour

// Subject is who a token is issued to.
type Subject struct {
	ID     string   // user or bot entity id (claim uid)
	Name   string   // user or bot name (claim sub)
	Email  string   // claim email
	Roles  []string // claim roles
	IsBot  bool     // claim isBot
	Scopes []string // claim scope, space separated; empty means every scope
}

// Authority issues, verifies and revokes HS256 JWTs. Only the SHA-256 of each issued
// token is stored; a token whose hash is not in the store is refused, so revocation is
// immediate. It is safe for concurrent use.
type Authority struct {
	db     store.Driver
	issuer string
	key    []byte
	now    func() time.Time
	cache  *principalCache // nil until UseCache: every Verify reads the store
}

// New returns an Authority for issuer over db, which must have been opened with
// Module. It loads the signing key from the settings table (KeySetting), or creates a
// random 32-byte key there on first use. An empty issuer means DefaultIssuer.
func New(ctx context.Context, db store.Driver, issuer string) (*Authority, error) {
	if db == nil {
		return nil, meridian.Errorf(meridian.EInternal, "auth: no store")
	}
	if !slices.ContainsFunc(db.Modules(), func(m store.Module) bool { return m.Name == Module().Name }) {
		return nil, errors.New("auth: the store was opened without auth.Module(), which owns the tokens table")
	}
	if issuer == "" {
		issuer = DefaultIssuer
	}
	key, err := loadKey(ctx, db)
	if err != nil {
		return nil, err
	}
	return &Authority{db: db, issuer: issuer, key: key, now: time.Now}, nil
}

// Issuer returns the iss claim of the tokens this Authority issues and accepts.
func (a *Authority) Issuer() string { return a.issuer }

// loadKey reads the signing key; when there is none it creates one in a writable
// transaction and reads it back, so that two replicas starting together end up with
// the same key.
func loadKey(ctx context.Context, db store.Driver) ([]byte, error) {
	key, err := readKey(ctx, db)
	if err == nil || meridian.ErrorCode(err) != meridian.ENotFound {
		return key, err
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("auth: generate signing key: %w", err)
	}
	tx, err := db.Begin(ctx, true)
	if err != nil {
		return nil, err
	}
	_, err = tx.Setting(ctx, KeySetting)
	switch meridian.ErrorCode(err) {
	case "": // another replica created it meanwhile
		_ = tx.Rollback()
	case meridian.ENotFound:
		if err := tx.PutSetting(ctx, KeySetting, base64.StdEncoding.EncodeToString(fresh)); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
		if err := tx.Commit(); err != nil {
			// A concurrent writer may have won; fall through and read its key.
			if key, rerr := readKey(ctx, db); rerr == nil {
				return key, nil
			}
			return nil, err
		}
	default:
		_ = tx.Rollback()
		return nil, err
	}
	return readKey(ctx, db)
}

func readKey(ctx context.Context, db store.Driver) ([]byte, error) {
	tx, err := db.Begin(ctx, false)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	v, err := tx.Setting(ctx, KeySetting)
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("auth: setting %s does not hold a base64 key of at least 32 bytes", KeySetting)
	}
	return key, nil
}

// Issue signs a token for s and stores its hash. tokenType is meridian.TokenTypeBot or
// meridian.TokenTypePersonal; ttl 0 means the token never expires (no exp claim).
// tokenName is a label shown in token lists. It returns the raw token, which is never
// stored and cannot be retrieved later, and the stored record (ID is the jti claim).
// The token carries the subject's entity id (claim uid), which Verify checks against
// the user entity. Errors: EInvalid for a bad subject (no name or no id), token type or
// ttl.
func (a *Authority) Issue(ctx context.Context, s Subject, tokenType string, ttl time.Duration, tokenName string) (string, Token, error) {
	if strings.TrimSpace(s.Name) == "" {
		return "", Token{}, meridian.Errorf(meridian.EInvalid, "A token needs a subject name")
	}
	if strings.TrimSpace(s.ID) == "" {
		return "", Token{}, meridian.Errorf(meridian.EInvalid, "A token needs the id of its subject's user entity")
	}
	if tokenType != meridian.TokenTypeBot && tokenType != meridian.TokenTypePersonal {
		return "", Token{}, meridian.Errorf(meridian.EInvalid,
			"Invalid token type %q: use %s or %s", tokenType, meridian.TokenTypeBot, meridian.TokenTypePersonal)
	}
	if ttl < 0 {
		return "", Token{}, meridian.Errorf(meridian.EInvalid, "Token expiry must be positive, or never")
	}
	now := a.now()
	jti := uuid.NewString()
	roles := s.Roles
	if roles == nil {
		roles = []string{}
	}
	claims := jwt.MapClaims{
		"sub":       s.Name,
		"iss":       a.issuer,
		"roles":     roles,
		"email":     s.Email,
		"isBot":     s.IsBot,
		"tokenType": tokenType,
		"iat":       now.Unix(),
		"jti":       jti,
		"uid":       s.ID,
	}
	if len(s.Scopes) > 0 {
		claims["scope"] = strings.Join(s.Scopes, " ")
	}
	var expiresAt int64
	if ttl > 0 {
		// exp has one-second precision; store the same instant so both checks agree.
		exp := now.Add(ttl).Unix()
		claims["exp"] = exp
		expiresAt = exp * 1000
	}
	raw, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(a.key)
	if err != nil {
		return "", Token{}, fmt.Errorf("auth: sign token: %w", err)
	}
	t := Token{
		ID:        jti,
		Hash:      hashToken(raw),
		UserName:  s.Name,
		Name:      tokenName,
		TokenType: tokenType,
		CreatedAt: now.UnixMilli(),
		ExpiresAt: expiresAt,
	}
	tx, err := a.db.Begin(ctx, true)
	if err != nil {
		return "", Token{}, err
	}
	if err := putToken(ctx, tx.SQL(), t); err != nil {
		_ = tx.Rollback()
		return "", Token{}, err
	}
	if err := tx.Commit(); err != nil {
		return "", Token{}, err
	}
	return raw, t, nil
}

// Verify checks a raw token (without the "Bearer " prefix) and returns its principal.
// Only HS256 tokens signed with this Authority's key and issuer are accepted, only while
// their hash is stored and not revoked, and only while the user entity whose id the
// token carries (claim uid) exists, is not deleted and still has the token's name: a
// token issued to a user who was deleted and re-created under the same name is refused.
// A token without a uid claim (issued before tokens carried one) is refused too; its
// user issues a new one. The principal's roles are the user entity's current ones.
// With UseCache, a token verified before is answered from the cache (cache.go).
//
// Every refusal is EUnauthorized, with one of the messages "Missing token", "Token has
// expired", "Token has been revoked", "Token has been revoked: user … is not active",
// "Invalid token: malformed", "Invalid token: signature is invalid", "Invalid token:
// signing method not allowed", "Invalid token: issuer", "Invalid token: no user id;
// issue a new token" or "Invalid token: claims are invalid". A store failure is
// returned as it is.
func (a *Authority) Verify(ctx context.Context, raw string) (p *meridian.Principal, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, unauthorized("Invalid token: malformed")
		}
	}()
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, unauthorized("Missing token")
	}
	if len(raw) > maxTokenLen {
		return nil, unauthorized("Invalid token: malformed")
	}
	hash := hashToken(raw)
	var gen uint64
	if a.cache != nil {
		var hit bool
		if p, gen, hit = a.cache.lookup(ctx, hash); hit {
			return p, nil
		}
	}
	claims := jwt.MapClaims{}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(a.issuer),
		jwt.WithTimeFunc(a.now),
	)
	tok, err := parser.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return a.key, nil })
	if err != nil {
		return nil, classify(tok, err)
	}
	p, err = principalOf(claims)
	if err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, unauthorized("Invalid token: no user id; issue a new token")
	}

	// A short read: it never queues behind long searches.
	tx, err := store.BeginShort(ctx, a.db)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	t, err := tokenByHash(ctx, tx.SQL(), hash)
	switch {
	case meridian.ErrorCode(err) == meridian.ENotFound:
		return nil, unauthorized("Token has been revoked")
	case err != nil:
		return nil, err
	case t.Revoked:
		return nil, unauthorized("Token has been revoked")
	case t.ExpiresAt != 0 && a.now().UnixMilli() >= t.ExpiresAt:
		return nil, unauthorized("Token has expired")
	}
	if p.TokenType == "" {
		p.TokenType = t.TokenType
	}
	kind, err := currentUser(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	if a.cache != nil {
		a.cache.put(hash, p, kind, t.ExpiresAt, gen)
	}
	return p, nil
}

// userKind is the kind of the entities tokens are issued to (bots have a user entity
// too, with isBot).
const userKind = "user"

// teamsRelation links a user to each team it is a member of.
const teamsRelation = "teams"

// currentUser checks that the token's user, found by the id the token carries, still
// exists, is active and has the token's name, and takes the principal's roles and
// teams from the user entity, so that a role or membership change or a deleted user
// takes effect at once for every token already issued. It returns the kind of the
// user's entity.
func currentUser(ctx context.Context, tx store.Tx, p *meridian.Principal) (string, error) {
	u, err := tx.Get(ctx, userKind, p.ID)
	if meridian.ErrorCode(err) == meridian.ENotFound || (err == nil && (u.Deleted || u.Name != p.Name)) {
		return "", unauthorized("Token has been revoked: user " + p.Name + " is not active")
	}
	if err != nil {
		return "", err
	}
	var doc struct {
		Roles   []any `json:"roles"`
		IsAdmin bool  `json:"isAdmin"`
		IsBot   bool  `json:"isBot"`
	}
	if err := json.Unmarshal(u.Doc, &doc); err != nil {
		return "", err
	}
	p.IsBot = doc.IsBot
	p.Roles = p.Roles[:0]
	for _, r := range doc.Roles {
		switch t := r.(type) {
		case string:
			p.Roles = append(p.Roles, t)
		case map[string]any:
			if name, ok := t["name"].(string); ok {
				p.Roles = append(p.Roles, name)
			}
		}
	}
	if doc.IsAdmin && !p.HasRole(meridian.RoleAdmin) {
		p.Roles = append(p.Roles, meridian.RoleAdmin)
	}
	teams, err := tx.Relations(ctx, store.RelationQuery{FromID: p.ID, Type: teamsRelation})
	if err != nil {
		return "", err
	}
	p.Teams = p.Teams[:0]
	for _, r := range teams {
		if r.ToKind == meridian.KindTeam {
			p.Teams = append(p.Teams, r.ToID)
		}
	}
	return u.Kind, nil
}

// classify turns a jwt parse error into the caller-facing EUnauthorized error.
func classify(tok *jwt.Token, err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return unauthorized("Invalid token: malformed")
	case tok != nil && (tok.Method == nil || tok.Method.Alg() != jwt.SigningMethodHS256.Alg()):
		// alg missing, unknown, "none", or another algorithm.
		return unauthorized("Invalid token: signing method not allowed")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return unauthorized("Invalid token: signature is invalid")
	case errors.Is(err, jwt.ErrTokenExpired):
		return unauthorized("Token has expired")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer),
		errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return unauthorized("Invalid token: issuer")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return unauthorized("Invalid token: not valid yet")
	}
	return unauthorized("Invalid token: claims are invalid")
}

// principalOf reads the verified claims.
func principalOf(c jwt.MapClaims) (*meridian.Principal, error) {
	bad := unauthorized("Invalid token: claims are invalid")
	p := &meridian.Principal{}
	var ok bool
	if p.Name, ok = c["sub"].(string); !ok || strings.TrimSpace(p.Name) == "" {
		return nil, bad
	}
	str := func(key string, dst *string) bool {
		v, present := c[key]
		if !present || v == nil {
			return true
		}
		*dst, ok = v.(string)
		return ok
	}
	var scope string
	if !str("uid", &p.ID) || !str("email", &p.Email) || !str("tokenType", &p.TokenType) || !str("scope", &scope) {
		return nil, bad
	}
	p.Scopes = strings.Fields(scope)
	if v, present := c["isBot"]; present && v != nil {
		if p.IsBot, ok = v.(bool); !ok {
			return nil, bad
		}
	}
	switch roles := c["roles"].(type) {
	case nil:
	case []any:
		for _, r := range roles {
			s, ok := r.(string)
			if !ok {
				return nil, bad
			}
			p.Roles = append(p.Roles, s)
		}
	default:
		return nil, bad
	}
	return p, nil
}

// Revoke marks a token revoked by its id (the jti claim). The token stops verifying at
// once on this server, and within the cache's Poll on every other server sharing the
// database (cache.go). Errors: ENotFound.
func (a *Authority) Revoke(ctx context.Context, tokenID string) error {
	if tokenID == "" {
		return meridian.Errorf(meridian.ENotFound, "Token instance for %s not found", tokenID)
	}
	tx, err := a.db.Begin(ctx, true)
	if err != nil {
		return err
	}
	hash, err := revokeToken(ctx, tx.SQL(), tokenID, a.now().UnixMilli())
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if a.cache != nil {
		a.cache.dropToken(hash)
	}
	return nil
}

// Tokens lists the tokens issued to a user or bot, oldest first, as the store keeps
// them. It is a short read (store.BeginShort).
func (a *Authority) Tokens(ctx context.Context, userName string) ([]Token, error) {
	tx, err := store.BeginShort(ctx, a.db)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return listTokens(ctx, tx.SQL(), userName)
}

// ParseExpiry parses a token lifetime as the CLI and REST accept it: "never" or
// "Unlimited" (any case) is 0, meaning no expiry; "30d", "12h" and "90m" are days,
// hours and minutes; a bare number such as "30" is days, as OpenMetadata's
// JWTTokenExpiry values "7", "30", "60" and "90" are. Anything else, a zero or negative
// lifetime, or one over 100 years is EInvalid.
func ParseExpiry(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	switch strings.ToLower(in) {
	case "never", "unlimited":
		return 0, nil
	}
	bad := meridian.Errorf(meridian.EInvalid,
		"Invalid token expiry %q: use a number of days (30), a duration such as 30d, 12h or 90m, or never", s)
	if in == "" {
		return 0, bad
	}
	unit := 24 * time.Hour
	num := in
	switch in[len(in)-1] {
	case 'd', 'D':
		num = in[:len(in)-1]
	case 'h', 'H':
		unit, num = time.Hour, in[:len(in)-1]
	case 'm', 'M':
		unit, num = time.Minute, in[:len(in)-1]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, bad
	}
	if n <= 0 {
		return 0, meridian.Errorf(meridian.EInvalid, "Invalid token expiry %q: it must be positive, or never", s)
	}
	if n > int64(maxExpiry/unit) || n > math.MaxInt64/int64(unit) {
		return 0, meridian.Errorf(meridian.EInvalid, "Invalid token expiry %q: at most 36500 days", s)
	}
	return time.Duration(n) * unit, nil
}

func hashToken(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

func unauthorized(msg string) *meridian.Error {
	return &meridian.Error{Code: meridian.EUnauthorized, Message: msg}
}
