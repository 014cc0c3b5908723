package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/sqlite"
)

const testIssuer = "meridian-test"

// aliceID is the id of the user alice that openStore holds.
const aliceID = "6f1c1f0e-0b7e-4d43-9a0e-7a6f3b6c9f01"

// openStore opens a real SQLite catalog in a temporary directory, holding the users
// the tests issue tokens for: alice (a steward and consumer) and ingestion-bot.
func openStore(t *testing.T) store.Driver {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), Module())
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	addUser(t, db, aliceID, "alice", `{"name":"alice","roles":["DataSteward","DataConsumer"]}`)
	addUser(t, db, "b1", "ingestion-bot", `{"name":"ingestion-bot","isBot":true,"roles":[]}`)
	return db
}

// addUser stores a user row directly, as the engine would.
func addUser(t testing.TB, db store.Driver, id, name, doc string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Insert(ctx, store.Row{ID: id, Kind: "user", Name: name, FQN: meridian.QuoteName(name), Version: 1,
		UpdatedBy: "test", Doc: []byte(doc)}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func newAuthority(t *testing.T) *Authority {
	t.Helper()
	a, err := New(context.Background(), openStore(t), testIssuer)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// claimsOf decodes the payload of a token without verifying it.
func claimsOf(t *testing.T, raw string) map[string]any {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("decode payload: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal payload: %v", err)
	}
	return m
}

func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	raw, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return raw
}

// unsigned builds a token with the given header and claims and an empty signature.
func unsigned(header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c) + "."
}

func validClaims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"sub": "alice", "iss": testIssuer, "roles": []string{"Admin"}, "email": "alice@example.com",
		"isBot": false, "tokenType": meridian.TokenTypePersonal, "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "jti": "f0c2b1c8-5a52-4b59-a1c1-0b8e1c7c2d10", "uid": aliceID,
	}
}

func TestIssueAndVerifyCarryEveryClaim(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t)
	s := Subject{ID: "6f1c1f0e-0b7e-4d43-9a0e-7a6f3b6c9f01", Name: "alice", Email: "alice@example.com",
		Roles: []string{meridian.RoleDataSteward, meridian.RoleDataConsumer}, Scopes: []string{meridian.ScopeRead, "extra"}}
	before := time.Now().Unix()
	raw, tok, err := a.Issue(ctx, s, meridian.TokenTypePersonal, 30*24*time.Hour, "laptop")
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}

	c := claimsOf(t, raw)
	want := map[string]any{
		"sub": "alice", "iss": testIssuer, "email": "alice@example.com", "isBot": false,
		"tokenType": meridian.TokenTypePersonal, "jti": tok.ID, "uid": s.ID,
		"roles": []any{meridian.RoleDataSteward, meridian.RoleDataConsumer}, "scope": "metadata:read extra",
	}
	for k, v := range want {
		if !reflect.DeepEqual(c[k], v) {
			t.Errorf("claim %s = %#v, want %#v", k, c[k], v)
		}
	}
	iat, _ := c["iat"].(float64)
	exp, _ := c["exp"].(float64)
	if int64(iat) < before || int64(iat) > time.Now().Unix() {
		t.Errorf("iat = %v, want about now", c["iat"])
	}
	if got := int64(exp) - int64(iat); got != 30*24*3600 {
		t.Errorf("exp - iat = %d s, want 30 days", got)
	}
	if len(tok.ID) != 36 {
		t.Errorf("jti %q is not a UUID", tok.ID)
	}

	sum := sha256.Sum256([]byte(raw))
	if tok.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("stored hash is not the SHA-256 hex of the token")
	}
	if tok.ExpiresAt != int64(exp)*1000 || tok.UserName != "alice" || tok.Name != "laptop" ||
		tok.TokenType != meridian.TokenTypePersonal || tok.CreatedAt == 0 {
		t.Errorf("stored token = %+v", tok)
	}
	listed, err := a.Tokens(ctx, "alice")
	if err != nil || len(listed) != 1 || listed[0].ID != tok.ID || listed[0].Hash != tok.Hash {
		t.Fatalf("Tokens = %+v, %v; want the issued token", listed, err)
	}

	p, err := a.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	wantP := &meridian.Principal{ID: s.ID, Name: "alice", Email: "alice@example.com", Roles: s.Roles,
		TokenType: meridian.TokenTypePersonal, Scopes: s.Scopes}
	if !reflect.DeepEqual(p, wantP) {
		t.Errorf("principal = %+v, want %+v", p, wantP)
	}
	if !p.ReadOnly() {
		t.Errorf("a metadata:read token should give a read-only principal")
	}
}

func TestBotTokenWithoutExpiryHasNoExpClaim(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t)
	raw, tok, err := a.Issue(ctx, Subject{ID: "b1", Name: "ingestion-bot", IsBot: true}, meridian.TokenTypeBot, 0, "")
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	c := claimsOf(t, raw)
	if _, ok := c["exp"]; ok {
		t.Errorf("exp claim present in a never-expiring token: %v", c["exp"])
	}
	if _, ok := c["scope"]; ok {
		t.Errorf("scope claim present in an unscoped token")
	}
	if got, ok := c["roles"].([]any); !ok || len(got) != 0 {
		t.Errorf("roles = %#v, want an empty array", c["roles"])
	}
	if tok.ExpiresAt != 0 {
		t.Errorf("stored ExpiresAt = %d, want 0", tok.ExpiresAt)
	}
	p, err := a.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !p.IsBot || p.TokenType != meridian.TokenTypeBot || p.Name != "ingestion-bot" || p.ID != "b1" || p.ReadOnly() {
		t.Errorf("principal = %+v", p)
	}
}

func TestSigningKeyIsSharedThroughTheStore(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	a1, err := New(ctx, db, testIssuer)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := New(ctx, db, testIssuer)
	if err != nil {
		t.Fatal(err)
	}
	if string(a1.key) != string(a2.key) || len(a1.key) != 32 {
		t.Fatalf("replicas got different or short keys")
	}
	tx, err := db.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tx.Setting(ctx, KeySetting)
	tx.Rollback()
	if err != nil || v != base64.StdEncoding.EncodeToString(a1.key) {
		t.Fatalf("setting %s = %q, %v; want the key", KeySetting, v, err)
	}
	raw, _, err := a1.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Verify(ctx, raw); err != nil {
		t.Fatalf("a token from one replica fails on the other: %v", err)
	}
}

func TestVerifyRefusesBadTokens(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t)

	revoked, tok, err := a.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(ctx, tok.ID); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	// Issued an hour ago with a one-minute lifetime.
	a.now = func() time.Time { return time.Now().Add(-time.Hour) }
	shortLived, _, err := a.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Minute, "")
	a.now = time.Now
	if err != nil {
		t.Fatal(err)
	}
	good, _, err := a.Issue(ctx, Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")

	expired := validClaims()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	otherIssuer := validClaims()
	otherIssuer["iss"] = "someone-else"
	noIssuer := validClaims()
	delete(noIssuer, "iss")
	badRoles := validClaims()
	badRoles["roles"] = "Admin"
	noSubject := validClaims()
	delete(noSubject, "sub")
	badExp := validClaims()
	badExp["exp"] = "tomorrow"
	noUserID := validClaims()
	delete(noUserID, "uid")

	tests := []struct {
		name, raw, want string
	}{
		{"empty token", "", "Missing token"},
		{"blank token", "   ", "Missing token"},
		{"expired by its exp claim", sign(t, jwt.SigningMethodHS256, a.key, expired), "Token has expired"},
		{"expired after its ttl", shortLived, "Token has expired"},
		{"signed with another key", sign(t, jwt.SigningMethodHS256, []byte(strings.Repeat("k", 32)), validClaims()), "Invalid token: signature is invalid"},
		{"signature altered", parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])), "Invalid token: signature is invalid"},
		{"payload altered", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin","iss":"meridian-test","roles":["Admin"]}`)) + "." + parts[2], "Invalid token: signature is invalid"},
		{"alg none", unsigned(map[string]any{"alg": "none", "typ": "JWT"}, validClaims()), "Invalid token: signing method not allowed"},
		{"alg None spelled otherwise", unsigned(map[string]any{"alg": "None"}, validClaims()), "Invalid token: signing method not allowed"},
		{"alg missing", unsigned(map[string]any{"typ": "JWT"}, validClaims()), "Invalid token: signing method not allowed"},
		{"HS384 with the right key", sign(t, jwt.SigningMethodHS384, a.key, validClaims()), "Invalid token: signing method not allowed"},
		{"RS256 header", unsigned(map[string]any{"alg": "RS256"}, validClaims()) + "c2ln", "Invalid token: signing method not allowed"},
		{"ES256 header", unsigned(map[string]any{"alg": "ES256"}, validClaims()) + "c2ln", "Invalid token: signing method not allowed"},
		{"one segment", "abc", "Invalid token: malformed"},
		{"four segments", good + ".x", "Invalid token: malformed"},
		{"three empty segments", "..", "Invalid token: malformed"},
		{"header not base64", "!!!." + parts[1] + "." + parts[2], "Invalid token: malformed"},
		{"header not JSON", base64.RawURLEncoding.EncodeToString([]byte("nope")) + "." + parts[1] + "." + parts[2], "Invalid token: malformed"},
		{"oversized", strings.Repeat("a", maxTokenLen+1), "Invalid token: malformed"},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, a.key, otherIssuer), "Invalid token: issuer"},
		{"no issuer", sign(t, jwt.SigningMethodHS256, a.key, noIssuer), "Invalid token: issuer"},
		{"exp not a number", sign(t, jwt.SigningMethodHS256, a.key, badExp), "Invalid token: claims are invalid"},
		{"roles not an array", sign(t, jwt.SigningMethodHS256, a.key, badRoles), "Invalid token: claims are invalid"},
		{"no subject", sign(t, jwt.SigningMethodHS256, a.key, noSubject), "Invalid token: claims are invalid"},
		{"no user id, as older versions issued", sign(t, jwt.SigningMethodHS256, a.key, noUserID), "Invalid token: no user id; issue a new token"},
		{"revoked", revoked, "Token has been revoked"},
		{"validly signed but never issued", sign(t, jwt.SigningMethodHS256, a.key, validClaims()), "Token has been revoked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Verify(ctx, tt.raw)
			if err == nil {
				t.Fatalf("Verify accepted the token: %+v", p)
			}
			if p != nil {
				t.Errorf("Verify returned a principal with an error")
			}
			if code := meridian.ErrorCode(err); code != meridian.EUnauthorized {
				t.Errorf("code = %s, want %s", code, meridian.EUnauthorized)
			}
			if err.Error() != tt.want {
				t.Errorf("message = %q, want %q", err.Error(), tt.want)
			}
		})
	}
	if _, err := a.Verify(ctx, good); err != nil {
		t.Fatalf("the good token stopped verifying: %v", err)
	}
}

func TestVerifyChecksStoredExpiry(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t)
	// A token without exp whose stored record expired a minute ago: the record wins.
	c := validClaims()
	delete(c, "exp")
	raw := sign(t, jwt.SigningMethodHS256, a.key, c)
	tx, err := a.db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := putToken(ctx, tx.SQL(), Token{ID: "a3c0d9a4-6f35-4c8e-9a57-2f3b5d1e7c10", Hash: hashToken(raw), UserName: "alice",
		TokenType: meridian.TokenTypePersonal, CreatedAt: time.Now().Add(-time.Hour).UnixMilli(),
		ExpiresAt: time.Now().Add(-time.Minute).UnixMilli()}); err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err = a.Verify(ctx, raw)
	if err == nil || err.Error() != "Token has expired" || meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Fatalf("Verify = %v, want unauthorized %q", err, "Token has expired")
	}
}

func TestIssueRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t)
	tests := []struct {
		name      string
		s         Subject
		tokenType string
		ttl       time.Duration
	}{
		{"no subject name", Subject{ID: aliceID}, meridian.TokenTypePersonal, time.Hour},
		{"no subject id", Subject{Name: "alice"}, meridian.TokenTypePersonal, time.Hour},
		{"unknown token type", Subject{ID: aliceID, Name: "alice"}, "SESSION", time.Hour},
		{"negative ttl", Subject{ID: aliceID, Name: "alice"}, meridian.TokenTypePersonal, -time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := a.Issue(ctx, tt.s, tt.tokenType, tt.ttl, "")
			if meridian.ErrorCode(err) != meridian.EInvalid {
				t.Fatalf("err = %v, want %s", err, meridian.EInvalid)
			}
		})
	}
}

func TestRevokeUnknownTokenIsNotFound(t *testing.T) {
	a := newAuthority(t)
	for _, id := range []string{"", "4b0e3a52-1f0a-4cf1-9b0e-2d5f8f7d1a11"} {
		if err := a.Revoke(context.Background(), id); meridian.ErrorCode(err) != meridian.ENotFound {
			t.Errorf("Revoke(%q) = %v, want %s", id, err, meridian.ENotFound)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"never", 0, true},
		{"Never", 0, true},
		{"Unlimited", 0, true},
		{"unlimited", 0, true},
		{"30d", 30 * day, true},
		{"12h", 12 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"7", 7 * day, true},
		{"30", 30 * day, true},
		{"60", 60 * day, true},
		{"90", 90 * day, true},
		{" 30d ", 30 * day, true},
		{"36500d", 36500 * day, true},
		{"", 0, false},
		{"0", 0, false},
		{"0d", 0, false},
		{"-5d", 0, false},
		{"-1", 0, false},
		{"36501d", 0, false},
		{"99999999999999999999", 0, false},
		{"9223372036854775807h", 0, false},
		{"d", 0, false},
		{"1.5d", 0, false},
		{"30s", 0, false},
		{"1w", 0, false},
		{"forever", 0, false},
		{"30 d", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseExpiry(tt.in)
			if !tt.ok {
				if meridian.ErrorCode(err) != meridian.EInvalid {
					t.Fatalf("ParseExpiry(%q) = %v, %v; want %s", tt.in, got, err, meridian.EInvalid)
				}
				if !strings.Contains(err.Error(), "expiry") {
					t.Errorf("message %q does not say what is wrong", err.Error())
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseExpiry(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzVerifyNeverPanics(f *testing.F) {
	for _, s := range []string{"", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", "eyJhbGciOiJIUzI1NiJ9.bnVsbA.", "..", "\x00.\xff.\x01",
		"eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjFlMzAwfQ.x", "eyJhbGciOiJIUzI1NiJ9.W10.x"} {
		f.Add(s)
	}
	a, err := New(context.Background(), openStoreF(f), testIssuer)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := a.Verify(context.Background(), raw)
		if err == nil {
			t.Fatalf("Verify accepted %q as %+v", raw, p)
		}
		if meridian.ErrorCode(err) != meridian.EUnauthorized {
			t.Fatalf("Verify(%q) = %v, want %s", raw, err, meridian.EUnauthorized)
		}
	})
}

func openStoreF(f *testing.F) store.Driver {
	db, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "catalog.db"), Module())
	if err != nil {
		f.Fatalf("open sqlite: %v", err)
	}
	f.Cleanup(func() { db.Close() })
	return db
}

func TestNewRefusesACorruptStoredKey(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.PutSetting(ctx, KeySetting, "c2hvcnQ="); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, db, testIssuer); err == nil {
		t.Fatal("New accepted a 5-byte signing key")
	}
}

func TestNewDefaultsTheIssuer(t *testing.T) {
	a, err := New(context.Background(), openStore(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Issuer() != DefaultIssuer {
		t.Fatalf("Issuer = %q, want %q", a.Issuer(), DefaultIssuer)
	}
}

func TestVerifyFollowsTheCurrentUserEntity(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	a, err := New(ctx, db, testIssuer)
	if err != nil {
		t.Fatal(err)
	}
	const carolID = "c0ffee00-0000-4000-8000-000000000001"
	addUser(t, db, carolID, "carol", `{"name":"carol","roles":["DataConsumer"]}`)
	raw, _, err := a.Issue(ctx, Subject{ID: carolID, Name: "carol", Roles: []string{meridian.RoleAdmin}}, meridian.TokenTypePersonal, time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Verify(ctx, raw)
	if err != nil || p.IsAdmin() || !p.HasRole(meridian.RoleDataConsumer) || p.ID != carolID {
		t.Fatalf("roles must come from the user entity, not the claim: %+v, %v", p, err)
	}
	removeRow(t, db, carolID)
	if _, err := a.Verify(ctx, raw); meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Fatalf("a deleted user's token must be refused: %v", err)
	}
	// A new carol is another user: the old carol's token stays refused.
	addUser(t, db, "c0ffee00-0000-4000-8000-000000000002", "carol", `{"name":"carol","roles":["Admin"]}`)
	if p, err := a.Verify(ctx, raw); meridian.ErrorCode(err) != meridian.EUnauthorized {
		t.Fatalf("a token of the deleted carol verifies as the new carol: %+v, %v", p, err)
	}
}

// removeRow hard-deletes an entity row directly, as the engine would.
func removeRow(t testing.TB, db store.Driver, id string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
