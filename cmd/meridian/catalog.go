package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/rest"
	"github.com/meridian-catalog/meridian/store"
)

// Files in the data directory, and the bootstrap admin.
const (
	adminTokenFile = "admin.token"
	adminName      = "admin"
	adminEmail     = "admin@meridian.local"
)

// catalog is an open catalog (see app.Open) with the commands' bootstrap helpers: the
// admin user, its token file, and users created from the command line.
type catalog struct {
	*app.Catalog
}

// openCatalog opens (creating on first use) the catalog cfg describes.
func openCatalog(ctx context.Context, cfg app.Config) (*catalog, error) {
	cat, err := app.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &catalog{cat}, nil
}

// databaseURL adds the --database-url flag (MERIDIAN_DATABASE_URL) to a command.
func databaseURL(fs *flagSet) *string {
	return fs.string("database-url", "MERIDIAN_DATABASE_URL", "",
		"PostgreSQL URL (postgres://…); empty keeps the catalog in <data-dir>/"+app.CatalogFile)
}

// system is the principal of the binary's own bootstrap writes.
var system = &meridian.Principal{Name: "system", Roles: []string{meridian.RoleAdmin}}

// ensureUser returns the user named name with its roles, creating it when it does not
// exist with the given bot flag and roles. A soft-deleted user is restored.
func (c *catalog) ensureUser(ctx context.Context, name string, isBot bool, roles []string, isAdmin bool) (u meridian.Entity, created bool, err error) {
	get := func() (meridian.Entity, error) {
		return c.Entities.Get(ctx, system, "user", store.ByFQN(meridian.QuoteName(name)),
			store.GetOptions{Fields: "roles", Include: store.IncludeAll})
	}
	u, err = get()
	switch {
	case err == nil && u.Deleted():
		if _, err := c.Entities.Restore(ctx, system, "user", u.ID()); err != nil {
			return nil, false, fmt.Errorf("restore user %s: %w", name, err)
		}
		u, err = get()
		return u, false, err
	case err == nil:
		return u, false, nil
	case meridian.ErrorCode(err) != meridian.ENotFound:
		return nil, false, err
	}
	rs := make([]any, len(roles))
	for i, r := range roles {
		rs[i] = r
	}
	body := meridian.Entity{"name": name, "email": emailFor(name), "roles": rs, "isBot": isBot}
	if isAdmin {
		body["isAdmin"] = true
	}
	if _, err := c.Entities.Create(ctx, system, "user", body); err != nil {
		return nil, false, fmt.Errorf("create user %s: %w", name, err)
	}
	u, err = get()
	return u, true, err
}

// emailFor is the e-mail given to a user the binary creates.
func emailFor(name string) string {
	if name == adminName {
		return adminEmail
	}
	local := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '+':
			return r
		}
		return '-'
	}, name)
	local = strings.Trim(local, ".")
	if local == "" {
		local = "user"
	}
	return local + "@meridian.local"
}

// subject is the token subject for a user document.
func subject(u meridian.Entity) auth.Subject {
	isBot, _ := u["isBot"].(bool)
	return auth.Subject{ID: u.ID(), Name: u.Name(), Email: u.String("email"), Roles: rest.UserRoles(u), IsBot: isBot}
}

// bootstrapAdmin creates the admin user on first start, and writes an admin token that
// expires after adminTokenTTL to <dir>/admin.token (mode 0600) when the file is missing,
// its token no longer verifies (it expired or was revoked), or it never expires (as
// older versions wrote it; that token is revoked). It returns the token file path.
// `meridian admin-token` renews the file at any time.
func (c *catalog) bootstrapAdmin(ctx context.Context, log *slog.Logger) (string, error) {
	u, created, err := c.ensureUser(ctx, adminName, false, []string{meridian.RoleAdmin}, true)
	if err != nil {
		return "", err
	}
	if created {
		log.Info("created the admin user", slog.String("id", u.ID()))
	}
	path := filepath.Join(c.DataDir, adminTokenFile)
	current, err := c.currentAdminToken(ctx, path)
	if err != nil {
		return "", err
	}
	switch {
	case current.valid && current.expires:
		return path, nil
	case current.valid:
		log.Warn("the admin token never expires; replacing and revoking it", slog.String("path", path))
	case current.present:
		log.Warn("the admin token no longer verifies; writing a new one", slog.String("path", path))
	}
	if err := c.writeAdminToken(ctx, u, path, adminTokenTTL); err != nil {
		return "", err
	}
	if current.valid && current.id != "" {
		if err := c.Auth.Revoke(ctx, current.id); err != nil {
			return "", fmt.Errorf("revoke the never-expiring admin token: %w", err)
		}
	}
	log.Info("wrote the admin token", slog.String("path", path), slog.Duration("expiresIn", adminTokenTTL))
	return path, nil
}

// writeFileAtomic writes data to path through a temporary file in the same directory,
// so a reader never sees a half-written file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
