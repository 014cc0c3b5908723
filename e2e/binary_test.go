package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVersionCommandPrintsTheVersion(t *testing.T) {
	t.Parallel()
	out := strings.TrimSpace(runCLI(t, "version"))
	if out == "" {
		t.Fatalf("meridian version printed nothing")
	}
}

func TestBinaryServesHealthTokensAndCLITokens(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	anon := s.client(t, "")

	t.Run("healthz and readyz answer 200 without a token", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz"} {
			r := anon.do("GET", p, nil, nil)
			if r.status != http.StatusOK {
				t.Errorf("%s: want 200", r)
			}
			if got := str(object(r.body)["status"]); got != "ok" {
				t.Errorf("%s: status %q, want ok", r, got)
			}
		}
	})

	t.Run("every response carries a request id", func(t *testing.T) {
		r := anon.do("GET", "/healthz", nil, nil)
		if r.header.Get("X-Request-ID") == "" {
			t.Errorf("%s: no X-Request-ID header", r)
		}
	})

	t.Run("admin.token is private and works", func(t *testing.T) {
		fi, err := os.Stat(filepath.Join(s.dataDir, "admin.token"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("admin.token mode %o, want 600", fi.Mode().Perm())
		}
		me := s.admin.must(http.StatusOK, "GET", "/api/v1/users/me", nil)
		if me["name"] != "admin" {
			t.Errorf("/users/me name = %v, want admin", me["name"])
		}
		s.admin.must(http.StatusOK, "GET", "/api/v1/tables", nil)
	})

	t.Run("token create with 30d expiry prints a working token", func(t *testing.T) {
		tok := s.cliToken(t, "bob", "", "30d")
		c := s.client(t, tok)
		me := c.must(http.StatusOK, "GET", "/api/v1/users/me", nil)
		if me["name"] != "bob" {
			t.Errorf("/users/me name = %v, want bob", me["name"])
		}
		c.must(http.StatusOK, "GET", "/api/v1/tables", nil)
		claims := jwtPayload(t, tok)
		iat, exp := num(claims["iat"]), num(claims["exp"])
		if iat <= 0 || exp <= 0 {
			t.Fatalf("claims iat=%v exp=%v, want both", claims["iat"], claims["exp"])
		}
		if got := time.Duration(exp-iat) * time.Second; got != 30*24*time.Hour {
			t.Errorf("exp - iat = %s, want 30 days", got)
		}
		if claims["tokenType"] != "PERSONAL_ACCESS" {
			t.Errorf("tokenType = %v, want PERSONAL_ACCESS", claims["tokenType"])
		}
	})

	t.Run("token create with never expiry has no exp and every documented claim", func(t *testing.T) {
		tok := s.cliToken(t, "carol", "DataSteward", "never")
		claims := jwtPayload(t, tok)
		if v, ok := claims["exp"]; ok {
			t.Errorf("exp = %v in a non-expiring token", v)
		}
		for _, c := range []string{"sub", "iss", "roles", "email", "isBot", "tokenType", "iat"} {
			if _, ok := claims[c]; !ok {
				t.Errorf("claim %s missing from %v", c, claims)
			}
		}
		if claims["sub"] != "carol" || claims["isBot"] != false || claims["tokenType"] != "PERSONAL_ACCESS" {
			t.Errorf("claims = %v", claims)
		}
		if roles := list(claims["roles"]); len(roles) != 1 || roles[0] != "DataSteward" {
			t.Errorf("roles = %v, want [DataSteward]", claims["roles"])
		}
		if str(claims["iss"]) == "" || !strings.Contains(str(claims["email"]), "@") {
			t.Errorf("iss = %v, email = %v", claims["iss"], claims["email"])
		}
		s.client(t, tok).must(http.StatusOK, "GET", "/api/v1/tables", nil)
	})
}
