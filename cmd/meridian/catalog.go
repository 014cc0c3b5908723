package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
		return c.Entities.Get(ctx, system, "user", store.ByName(meridian.QuoteName(name)),
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

// bootstrapAdmin creates the admin user on first start, and writes a non-expiring admin
// token to <dir>/admin.token (mode 0600) when the file is missing or its token no
// longer verifies. It returns the token file path.
func (c *catalog) bootstrapAdmin(ctx context.Context, log *slog.Logger) (string, error) {
	u, created, err := c.ensureUser(ctx, adminName, false, []string{meridian.RoleAdmin}, true)
	if err != nil {
		return "", err
	}
	if created {
		log.Info("created the admin user", slog.String("id", u.ID()))
	}
	path := filepath.Join(c.DataDir, adminTokenFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		p, verr := c.Auth.Verify(ctx, strings.TrimSpace(string(b)))
		if verr == nil && p.Name == adminName {
			return path, nil
		}
		if verr != nil && meridian.ErrorCode(verr) != meridian.EUnauthorized {
			return "", fmt.Errorf("verify %s: %w", path, verr)
		}
		log.Warn("the admin token no longer verifies; writing a new one", slog.String("path", path))
	case errors.Is(err, fs.ErrNotExist):
	default:
		return "", fmt.Errorf("read admin token: %w", err)
	}
	ttl, err := auth.ParseExpiry("never")
	if err != nil {
		return "", err
	}
	sub := subject(u)
	sub.Roles = []string{meridian.RoleAdmin}
	raw, _, err := c.Auth.Issue(ctx, sub, meridian.TokenTypePersonal, ttl, "admin-bootstrap")
	if err != nil {
		return "", fmt.Errorf("issue admin token: %w", err)
	}
	if err := writeFileAtomic(path, []byte(raw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	log.Info("wrote the admin token", slog.String("path", path))
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
