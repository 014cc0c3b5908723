package store

import (
	"context"
	"io/fs"
)

// Module is a capability that owns tables in the catalog database (auth's tokens, the
// data-quality time series, jobs, and later vectors, graph, collab, queryrunner and
// billing). It declares its own migrations and reaches its tables through Tx.SQL, so
// its rows commit in the same transaction as an entity write when they must. Adding a
// module adds no method to Tx.
type Module struct {
	// Name identifies the module; its applied migrations are recorded under it.
	Name string
	// Migrations holds sqlite/NNNN_description.sql and postgres/NNNN_description.sql.
	// The numbers are the module's own, start at 1, and are the same on both drivers.
	Migrations fs.FS
}

// Dialect names the SQL a driver speaks.
type Dialect string

// Dialects.
const (
	DialectSQLite   Dialect = "sqlite"
	DialectPostgres Dialect = "postgres"
)

// SQL runs a module's statements in the transaction that returned it. Placeholders
// are $1, $2, … on both drivers; every value is a bound parameter. Exec reports a
// unique-constraint violation as EConflict, and a write in a read-only transaction as
// an error. QueryRow's Scan returns ENotFound when there is no row.
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
