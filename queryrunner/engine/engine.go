// Package engine is Query Runner's database engine layer: one Engine per service type,
// each over a real Go driver, that runs one read-only statement in a READ ONLY
// transaction with a statement timeout and a row cap, and introspects what the caller's
// credentials can reach. The service (package queryrunner) resolves credentials; this
// package only connects with them and never logs them.
package engine

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Conn is how to reach a database with one caller's resolved credentials. It is never
// logged, stored or returned to a client.
type Conn struct {
	// Type is the service type (Engine.Type), as in a Query Runner config's serviceType.
	Type string
	// AuthType is "basic" (Username and Password) or "oauth" (Token).
	AuthType  string
	Host      string
	Port      int
	Username  string
	Password  string
	Token     string
	Database  string
	Schema    string
	Role      string
	Warehouse string
	Dataset   string
	// Options are engine-specific connection options (sslmode, …), never secrets.
	Options map[string]string
}

// Column is a result column: its name and the database's name for its type.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Limits bound one run.
type Limits struct {
	// MaxRows is the row cap; the run stops reading after it and reports Truncated.
	MaxRows int
	// Timeout is the statement timeout enforced by the database itself (and by ctx).
	Timeout time.Duration
}

// Sink receives a run's result as it streams: Columns once, then Row per row (values
// JSON-ready: string, int64, float64, bool, nil, or a string form of anything else).
type Sink interface {
	Columns(cols []Column) error
	Row(values []any) error
}

// Summary is how a run ended.
type Summary struct {
	Rows      int64
	Truncated bool // the row cap stopped the run
}

// Engine is one database engine type.
type Engine interface {
	// Type is the service type name (for example "Postgres", "Mysql").
	Type() string
	// Dialect names the SQL dialect the statement classifier parses for this engine.
	Dialect() string
	// HasRoles reports whether the engine has roles a user may pick (warehouse engines).
	HasRoles() bool
	// Query runs one statement, already classified read-only, in a READ ONLY
	// transaction with lim.Timeout as a statement timeout, streaming into sink until
	// lim.MaxRows. Cancelling ctx cancels the statement on the database server.
	// Errors: invalid (the database refused the statement), unauthorized (the
	// credentials were refused; the message never holds a secret), unavailable (the
	// database cannot be reached), and ctx's error when cancelled.
	Query(ctx context.Context, c Conn, sql string, lim Limits, sink Sink) (Summary, error)
	// Ping runs SELECT 1 with c. Errors as Query.
	Ping(ctx context.Context, c Conn) error
	// Roles lists the roles c can use (only when HasRoles), Databases the databases
	// it can reach, Schemas the schemas of database it can reach. Errors as Query.
	Roles(ctx context.Context, c Conn) ([]string, error)
	Databases(ctx context.Context, c Conn) ([]string, error)
	Schemas(ctx context.Context, c Conn, database string) ([]string, error)
}

var (
	mu      sync.RWMutex
	engines = map[string]Engine{}
)

// Register adds an engine under its Type; a second registration of a type replaces
// the first.
func Register(e Engine) {
	mu.Lock()
	defer mu.Unlock()
	engines[e.Type()] = e
}

// Lookup returns the engine of a service type.
func Lookup(serviceType string) (Engine, bool) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := engines[serviceType]
	return e, ok
}

// Types lists the registered service types, sorted.
func Types() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(engines))
	for t := range engines {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
