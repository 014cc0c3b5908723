package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
)

// adminTokenTTL is the lifetime of the admin token serve writes to admin.token. The
// specification keeps tokens that never expire for bots; `meridian admin-token`
// renews it, and serve rewrites it on start once it has expired.
const adminTokenTTL = 30 * 24 * time.Hour

// adminToken is what admin.token holds.
type adminToken struct {
	present bool   // the file exists and is not empty
	valid   bool   // its token verifies as the admin's
	expires bool   // its token has an expiry
	id      string // its token id (jti), when valid
}

// currentAdminToken reads and checks the token in the admin token file.
func (c *catalog) currentAdminToken(ctx context.Context, path string) (adminToken, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return adminToken{}, nil
	}
	if err != nil {
		return adminToken{}, fmt.Errorf("read admin token: %w", err)
	}
	raw := strings.TrimSpace(string(b))
	if raw == "" {
		return adminToken{}, nil
	}
	t := adminToken{present: true}
	p, err := c.Auth.Verify(ctx, raw)
	switch {
	case err != nil && meridian.ErrorCode(err) != meridian.EUnauthorized:
		return adminToken{}, fmt.Errorf("verify %s: %w", path, err)
	case err != nil || p == nil || p.Name != adminName:
		return t, nil
	}
	t.valid = true
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(raw, claims); err == nil { // verified above
		exp, _ := claims.GetExpirationTime()
		t.expires = exp != nil
		t.id, _ = claims["jti"].(string)
	}
	return t, nil
}

// writeAdminToken issues an admin token that expires after ttl and writes it to path
// (mode 0600).
func (c *catalog) writeAdminToken(ctx context.Context, u meridian.Entity, path string, ttl time.Duration) error {
	sub := subject(u)
	sub.Roles = []string{meridian.RoleAdmin}
	raw, _, err := c.Auth.Issue(ctx, sub, meridian.TokenTypePersonal, ttl, "admin-bootstrap")
	if err != nil {
		return fmt.Errorf("issue admin token: %w", err)
	}
	if err := writeFileAtomic(path, []byte(raw+"\n"), 0o600); err != nil {
		return fmt.Errorf("write admin token: %w", err)
	}
	return nil
}

// adminTokenCmd runs `meridian admin-token`: it writes a new admin token to
// <data-dir>/admin.token and prints the file's path. The token it replaces keeps
// working until it expires or is revoked, so that a shell holding it is not cut off.
func adminTokenCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("admin-token", stderr)
	dir := fs.string("data-dir", "MERIDIAN_DATA_DIR", defaultDataDir, "data directory")
	dbURL := databaseURL(fs)
	expires := fs.string("expires", "MERIDIAN_ADMIN_TOKEN_EXPIRES", "30d", "lifetime of the new token: 30d, 12h or 90m")
	if err := fs.parse(args); err != nil {
		return err
	}
	ttl, err := auth.ParseExpiry(*expires)
	if err == nil && ttl == 0 {
		err = meridian.Errorf(meridian.EInvalid, "the admin token must expire (tokens that never expire are for bots)")
	}
	if err != nil {
		fmt.Fprintf(stderr, "invalid --expires: %s\n", meridian.ErrorMessage(err))
		fs.Usage()
		return errUsage
	}
	cat, err := openCatalog(ctx, app.Config{DataDir: *dir, DatabaseURL: *dbURL})
	if err != nil {
		return err
	}
	defer cat.Close()
	u, _, err := cat.ensureUser(ctx, adminName, false, []string{meridian.RoleAdmin}, true)
	if err != nil {
		return err
	}
	path := filepath.Join(cat.DataDir, adminTokenFile)
	if err := cat.writeAdminToken(ctx, u, path, ttl); err != nil {
		return err
	}
	fmt.Fprintln(stdout, path)
	return nil
}
