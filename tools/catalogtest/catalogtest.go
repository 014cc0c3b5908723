// Package catalogtest opens a real catalog for the tests of tools/ and rpc/: SQLite in a
// temporary directory, wired by app.Open as `meridian serve` wires it. Nothing is
// mocked.
package catalogtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/app"
	"github.com/meridian-catalog/meridian/auth"
	"github.com/meridian-catalog/meridian/store"
)

// Catalog is an open test catalog with an admin user.
type Catalog struct {
	*app.Catalog
	Admin *meridian.Principal
}

// system creates the fixtures' users.
var system = &meridian.Principal{Name: "system", Roles: []string{meridian.RoleAdmin}}

// New opens a catalog in t.TempDir(), closed when the test ends.
func New(t testing.TB) *Catalog {
	t.Helper()
	return Open(t, app.Config{})
}

// Open is New with the settings of cfg (ReadOnly, Budget, Logger); an empty
// DataDir means t.TempDir().
func Open(t testing.TB, cfg app.Config) *Catalog {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cat, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	// The knowledge graph of an empty catalog is built at once; Dispatcher.Drain keeps
	// it in step afterwards.
	if err := cat.BuildGraph(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := &Catalog{Catalog: cat}
	c.Admin = c.User(t, "admin", meridian.RoleAdmin)
	return c
}

// User creates a user with roles and returns its principal.
func (c *Catalog) User(t testing.TB, name string, roles ...string) *meridian.Principal {
	t.Helper()
	rs := make([]any, len(roles))
	for i, r := range roles {
		rs[i] = r
	}
	body := meridian.Entity{"name": name, "email": name + "@example.com", "roles": rs}
	if len(roles) == 1 && roles[0] == meridian.RoleAdmin {
		body["isAdmin"] = true
	}
	res, err := c.Entities.Create(context.Background(), system, "user", body)
	if err != nil {
		t.Fatal(err)
	}
	return &meridian.Principal{ID: res.Entity.ID(), Name: name, Email: name + "@example.com", Roles: roles,
		TokenType: meridian.TokenTypePersonal}
}

// Token issues a personal access token for an existing principal, scoped to scopes
// (none: every scope).
func (c *Catalog) Token(t testing.TB, p *meridian.Principal, scopes ...string) string {
	t.Helper()
	raw, _, err := c.Auth.Issue(context.Background(), auth.Subject{ID: p.ID, Name: p.Name, Email: p.Email,
		Roles: p.Roles, Scopes: scopes}, meridian.TokenTypePersonal, time.Hour, "test")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Create creates an entity as admin and returns it.
func (c *Catalog) Create(t testing.TB, kind string, body meridian.Entity) meridian.Entity {
	t.Helper()
	res, err := c.Entities.Create(context.Background(), c.Admin, kind, body)
	if err != nil {
		t.Fatalf("create %s %v: %v", kind, body["name"], err)
	}
	return res.Entity
}

// Table creates service svc, database db, schema sch (when missing) and table name with
// n columns col_0001…, each with a description; it returns the table's FQN.
func (c *Catalog) Table(t testing.TB, svc, db, sch, name string, n int) string {
	t.Helper()
	ctx := context.Background()
	ensure := func(kind, fqn string, body meridian.Entity) {
		if _, err := c.Entities.Get(ctx, c.Admin, kind, store.ByFQN(fqn), store.GetOptions{}); err == nil {
			return
		}
		c.Create(t, kind, body)
	}
	ensure("databaseService", svc, meridian.Entity{"name": svc, "serviceType": "Mysql"})
	ensure("database", svc+"."+db, meridian.Entity{"name": db, "service": svc})
	ensure("databaseSchema", svc+"."+db+"."+sch, meridian.Entity{"name": sch, "database": svc + "." + db})
	cols := make([]any, n)
	for i := range cols {
		cols[i] = map[string]any{"name": fmt.Sprintf("col_%04d", i+1), "dataType": "VARCHAR", "dataLength": 64,
			"description": fmt.Sprintf("Column number %d of %s, holding some text.", i+1, name)}
	}
	e := c.Create(t, "table", meridian.Entity{"name": name, "databaseSchema": svc + "." + db + "." + sch,
		"columns": cols, "description": "Table " + name})
	return e.FQN()
}
