package store

import (
	"context"
	"io/fs"

	"github.com/meridian-catalog/meridian"
)

// Module is a capability that owns tables in the catalog database (auth's tokens, the
// data-quality time series, and later vectors, graph, collab, queryrunner and billing).
// It declares its own migrations and reaches its tables through Tx.SQL, so its rows
// commit in the same transaction as an entity write when they must. Adding a module
// adds no method to Tx.
//
// A module is wired by passing it to the driver's Open (sqlite.Open, postgres.Open),
// which applies its migrations, removes its rows with each entity (OnRemove), and hands
// it to the engine that runs over the driver (Computed).
type Module struct {
	// Name identifies the module; its applied migrations are recorded under it. It is
	// unique among the modules of a driver, and never CoreModule.
	Name string
	// Migrations holds sqlite/NNNN_description.sql and postgres/NNNN_description.sql.
	// The numbers are the module's own, start at 1, and are the same on both drivers
	// (Open refuses a module whose two sequences differ).
	Migrations fs.FS
	// OnRemove, when set, deletes the module's rows about an entity. Tx.Remove calls it
	// in its own transaction for every entity it removes, so a hard delete never leaves
	// them behind.
	OnRemove func(ctx context.Context, db SQL, entityID string) error
	// Computed maps a kind name to the function that adds the module's computed fields
	// to a document of that kind the engine reads (Get, List): a test case's latest
	// result. It runs in the read's transaction.
	Computed map[string]ComputeFunc
}

// ComputeFunc adds a module's computed fields to e, the full document of an entity
// being read. fields are the relationship and computed fields the caller asked for
// (?fields=); a field shown only when asked checks it.
type ComputeFunc func(ctx context.Context, db SQL, e meridian.Entity, fields map[string]bool) error

// CoreModule is the name under which the engine's own migrations are recorded beside
// the modules'.
const CoreModule = "store"

// Dialect names the SQL a driver speaks.
type Dialect string

// Dialects.
const (
	DialectSQLite   Dialect = "sqlite"
	DialectPostgres Dialect = "postgres"
)

// SQL runs a module's statements in the transaction that returned it. Placeholders
// are $1, $2, … on both drivers (a number may repeat and come in any order); every
// value is a bound parameter, and a '$' followed by a digit may appear nowhere else in
// the text. Exec reports a unique-constraint violation as EConflict, and any write in a
// read-only transaction as an error. QueryRow's Scan returns ENotFound when there is no
// row. After an error from a statement, roll the transaction back: PostgreSQL has
// aborted it (SQLite has not, but portable code must not rely on that), so a module
// that expects a duplicate writes ON CONFLICT instead.
type SQL interface {
	Dialect() Dialect
	Exec(ctx context.Context, query string, args ...any) (affected int64, err error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Scanner
}

// Rows is the result of SQL.Query. Close it when done.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Scanner reads one row.
type Scanner interface {
	Scan(dest ...any) error
}

// The engine's side of the seam: what a module's service needs to work on entities it
// keeps rows about, with the engine's rules for finding and authorizing them.

// RelationContains is the relation type from a parent entity to each child (a table to
// its test cases), for modules that read the hierarchy with Tx.Relations.
const RelationContains = relationTypeContains

// InTx runs fn in one transaction, writable or read-only. A writable one commits when fn
// returns nil, and then wakes the outbox dispatcher for the events fn appended. Errors:
// those of fn and of the driver.
func (s *Entities) InTx(ctx context.Context, writable bool, fn func(tx Tx) error) error {
	if writable {
		return s.inTx(ctx, fn)
	}
	return s.inReadTx(ctx, fn)
}

// Load reads, in tx, the entity of kind named by key with all its relationship fields
// and its secrets opened, and checks that p may perform op on it (a member of an owning
// team counts as an owner). include says whether a soft-deleted entity is found.
// Errors: EInvalid (unknown kind, bad FQN), ENotFound, EForbidden, EUnauthorized.
func (s *Entities) Load(ctx context.Context, tx Tx, p *meridian.Principal, op Operation, kind string, key Key, include Include) (Row, meridian.Entity, error) {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return Row{}, nil, err
	}
	return s.loadFor(ctx, tx, p, op, k, key, include)
}

// RecordChange appends, in tx, an entityUpdated change event for e, an entity of kind
// as Load returned it, describing cd, with e's version unchanged: a module's rows
// changed what the entity shows (a test case's latest result), and outbox consumers
// such as alerts follow it. cd.PreviousVersion is set to e's version. Errors: EInvalid
// (unknown kind) and those of the driver.
func (s *Entities) RecordChange(ctx context.Context, tx Tx, p *meridian.Principal, kind string, e meridian.Entity, cd meridian.ChangeDescription) error {
	k, err := s.reg.Lookup(kind)
	if err != nil {
		return err
	}
	cd.PreviousVersion = e.Version().Float()
	return tx.AppendEvent(ctx, s.event(p, meridian.EventEntityUpdated, k, s.masked(k, e), &cd))
}

// decorate adds the computed fields the driver's modules keep for documents of kind k.
func (s *Entities) decorate(ctx context.Context, tx Tx, k *meridian.Kind, e meridian.Entity, fields map[string]bool) error {
	for _, m := range s.db.Modules() {
		if compute := m.Computed[k.Name]; compute != nil {
			if err := compute(ctx, tx.SQL(), e, fields); err != nil {
				return err
			}
		}
	}
	return nil
}
