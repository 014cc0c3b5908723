package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
)

// adminFixture is a data directory with the admin user, and its admin.token path.
func adminFixture(t *testing.T) (*catalog, meridian.Entity, string) {
	t.Helper()
	ctx := context.Background()
	cat, err := openCatalog(ctx, app.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	u, _, err := cat.ensureUser(ctx, adminName, false, []string{meridian.RoleAdmin}, true)
	if err != nil {
		t.Fatal(err)
	}
	return cat, u, filepath.Join(cat.DataDir, adminTokenFile)
}

// readToken reads a token file and checks that it verifies as the admin.
func readToken(t *testing.T, cat *catalog, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw := strings.TrimSpace(string(b))
	if p, err := cat.Auth.Verify(context.Background(), raw); err != nil || p.Name != adminName {
		t.Fatalf("admin.token does not verify as the admin: %v", err)
	}
	return raw
}

// expiry is the exp claim of a token, or zero.
func expiry(t *testing.T, raw string) time.Time {
	t.Helper()
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(raw, claims); err != nil {
		t.Fatal(err)
	}
	exp, _ := claims.GetExpirationTime()
	if exp == nil {
		return time.Time{}
	}
	return exp.Time
}

func TestBootstrapAdminTokenExpires(t *testing.T) {
	cat, _, path := adminFixture(t)
	if _, err := cat.bootstrapAdmin(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	exp := expiry(t, readToken(t, cat, path))
	if want := time.Now().Add(adminTokenTTL); exp.IsZero() || exp.Before(want.Add(-time.Minute)) || exp.After(want.Add(time.Minute)) {
		t.Fatalf("admin token expires at %v, want about %v", exp, want)
	}
}

func TestBootstrapRewritesAnExpiredOrNeverExpiringAdminToken(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		ttl         time.Duration
		wait        time.Duration
		wantRevoked bool
	}{
		{"expired", time.Second, 2100 * time.Millisecond, false},
		{"never expiring", 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cat, u, path := adminFixture(t)
			sub := subject(u)
			old, _, err := cat.Auth.Issue(ctx, sub, meridian.TokenTypePersonal, c.ttl, "admin-bootstrap")
			if err != nil {
				t.Fatal(err)
			}
			if err := writeFileAtomic(path, []byte(old+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			time.Sleep(c.wait)
			if _, err := cat.bootstrapAdmin(ctx, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			fresh := readToken(t, cat, path)
			if fresh == old {
				t.Fatal("admin.token was not rewritten")
			}
			if expiry(t, fresh).IsZero() {
				t.Error("the rewritten admin token never expires")
			}
			if _, err := cat.Auth.Verify(ctx, old); c.wantRevoked && err == nil {
				t.Error("the replaced never-expiring admin token still verifies")
			}
		})
	}
}

func TestAdminTokenCommandRenewsTheTokenFile(t *testing.T) {
	ctx := context.Background()
	cat, _, path := adminFixture(t)
	if _, err := cat.bootstrapAdmin(ctx, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	old := readToken(t, cat, path)
	cat.Close()

	var out, errb bytes.Buffer
	if err := adminTokenCmd(ctx, []string{"--data-dir", cat.DataDir, "--expires", "2d"}, &out, &errb); err != nil {
		t.Fatalf("admin-token: %v: %s", err, errb.String())
	}
	if strings.TrimSpace(out.String()) != path {
		t.Errorf("admin-token printed %q, want the path %s", out.String(), path)
	}
	again, err := openCatalog(ctx, app.Config{DataDir: cat.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	fresh := readToken(t, again, path)
	if exp := expiry(t, fresh); exp.Before(time.Now().Add(47*time.Hour)) || exp.After(time.Now().Add(49*time.Hour)) {
		t.Errorf("renewed token expires at %v, want in 2 days", exp)
	}
	if _, err := again.Auth.Verify(ctx, old); err != nil {
		t.Errorf("the replaced admin token stopped working at once: %v", err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("admin.token mode: %v %v", st.Mode().Perm(), err)
	}

	errb.Reset()
	if err := adminTokenCmd(ctx, []string{"--data-dir", cat.DataDir, "--expires", "never"}, &out, &errb); err != errUsage ||
		!strings.Contains(errb.String(), "must expire") {
		t.Errorf("admin-token --expires never: %v %q, want a usage error", err, errb.String())
	}
}
