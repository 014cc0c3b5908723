package queryrunner_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/queryrunner"
	"github.com/meridian-catalog/meridian/store"
)

// tokenEndpoint is a fake OAuth token endpoint (the outside world): it accepts the
// refresh token it last issued for each user, rotates it, and refuses anything else
// with invalid_grant. The client must authenticate as meridian/client-secret.
type tokenEndpoint struct {
	mu     sync.Mutex
	valid  map[string]string // refresh token -> user
	issued int
}

func (e *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	w.Header().Set("Content-Type", "application/json")
	if id != "meridian" || secret != "client-secret" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
		return
	}
	var user string
	switch r.PostForm.Get("grant_type") {
	case "refresh_token":
		u, known := e.valid[r.PostForm.Get("refresh_token")]
		if !known {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"refresh token ` + r.PostForm.Get("refresh_token") + ` is unknown"}`))
			return
		}
		delete(e.valid, r.PostForm.Get("refresh_token"))
		user = u
	case "client_credentials":
		user = "service"
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"unsupported_grant_type"}`))
		return
	}
	e.issued++
	n := string(rune('0' + e.issued))
	next := "rt-" + user + "-" + n
	e.valid[next] = user
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + user + "-" + n, "token_type": "Bearer", "expires_in": 3600, "refresh_token": next})
}

func testRefreshToken(t *testing.T, f *fixture) {
	ep := &tokenEndpoint{valid: map[string]string{"rt-alice-0": "alice", "rt-bob-0": "bob"}}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	f.putAdmin("pgsvc", `{"serviceName":"pgsvc","serviceType":"Postgres","enabled":true,"hostPort":"127.0.0.1:5432","allowAdminCredentials":true,
		"authConfig":{"authType":"OAuth","clientId":"meridian","clientSecret":"client-secret","tokenUrl":"`+srv.URL+`/token","scopes":["read"]}}`)
	f.putAdmin("mysvc", adminConfig("mysvc", "Mysql", ""))
	f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"authType":"OAuth","username":"alice","refreshToken":"rt-alice-0"}}`)
	f.putUser(f.bob, `{"serviceName":"pgsvc","userAuthConfig":{"username":"bob","refreshToken":"rt-bob-0"}}`)
	f.putUser(f.alice, `{"serviceName":"mysvc","userAuthConfig":{"username":"alice","password":"pw"}}`)

	v := must[map[string]any](t)(f.qr.RefreshToken(f.ctx, f.alice, "pgsvc", ""))
	auth := v["userAuthConfig"].(map[string]any)
	if auth["accessToken"] != store.Mask || auth["refreshToken"] != store.Mask || auth["tokenExpiresAt"] == nil {
		t.Fatalf("refreshed config %v", auth)
	}
	res := must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.alice, "pgsvc", "", false))
	if res.AuthType != "oauth" || !strings.HasPrefix(res.Conn.Token, "at-alice-") || res.Conn.Username != "alice" {
		t.Fatalf("resolution token %q auth %s", res.Conn.Token, res.AuthType)
	}
	// The rotated refresh token was stored: a second refresh works.
	must[map[string]any](t)(f.qr.RefreshToken(f.ctx, f.alice, "pgsvc", ""))
	raw := f.rawRows()
	if strings.Contains(raw, "at-alice") || strings.Contains(raw, "rt-alice") || strings.Contains(raw, "client-secret") {
		t.Fatalf("tokens stored in clear text:\n%s", raw)
	}
	// Bob has no access token yet: resolving fetches one.
	res = must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.bob, "pgsvc", "", false))
	if !strings.HasPrefix(res.Conn.Token, "at-bob-") {
		t.Fatalf("bob's token %q", res.Conn.Token)
	}
	// The admin's own credentials use the client credentials grant.
	res = must[queryrunner.Resolution](t)(f.qr.Resolve(f.ctx, f.carol, "pgsvc", "", false))
	if res.Layer != queryrunner.LayerAdmin || !strings.HasPrefix(res.Conn.Token, "at-service-") {
		t.Fatalf("admin layer token %q (%s)", res.Conn.Token, res.Layer)
	}
	// Basic: 400 saying why.
	_, err := f.qr.RefreshToken(f.ctx, f.alice, "mysvc", "")
	if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "Basic") {
		t.Fatalf("basic refresh: %v", err)
	}
	// A refused refresh names the OAuth error and never echoes the token.
	f.putUser(f.alice, `{"serviceName":"pgsvc","userAuthConfig":{"username":"alice","refreshToken":"stolen-token-xyz"}}`)
	_, err = f.qr.RefreshToken(f.ctx, f.alice, "pgsvc", "")
	if meridian.ErrorCode(err) != meridian.EInvalid || !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), "stolen-token-xyz") {
		t.Fatalf("refused refresh: %v", err)
	}
	// No config: 404.
	_, err = f.qr.RefreshToken(f.ctx, f.carol, "pgsvc", "")
	wantCode(t, err, meridian.ENotFound)
	// An unreachable endpoint is 503, not a crash.
	srv.Close()
	_, err = f.qr.RefreshToken(f.ctx, f.bob, "pgsvc", "")
	wantCode(t, err, meridian.EUnavailable)
}
