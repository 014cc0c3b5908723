// Package sqlite is Meridian's embedded store driver: one SQLite file opened with
// modernc.org/sqlite (pure Go, no cgo). It implements store.Driver.
//
// The file runs in WAL mode with synchronous=FULL, so every committed write is durable.
// Three connection pools share it: a writer pool of exactly one connection whose
// transactions start with BEGIN IMMEDIATE (the write lock is taken at once, so writers
// queue in the pool instead of failing with SQLITE_BUSY or deadlocking on a lock
// upgrade), and a reader pool of query_only connections for read-only transactions,
// which WAL lets run beside the writer. A second, smaller pool of query_only connections
// is reserved for short reads (store.ShortReader: token verification), so they never
// queue behind long searches holding every reader. Each pool prepares the driver's fixed
// statements once (stmts.go), so transactions do not parse their SQL again.
//
// The engine's write transactions, and the modules' writes of rows that record no
// change event (store.InUnorderedTx), are committed in groups (DB implements
// store.GroupCommitter with a store.Group): writers that arrive while another commits
// share the next transaction, each in its own savepoint, so one fsync makes several
// writes durable, and each is acknowledged only after that commit.
//
// Once no document has been indexed for a while, DB.Maintain (run by the serving
// process) merges the full-text index's segments into one (merge.go).
//
// A third, one-connection pool answers PRAGMA data_version (dataversion.go), which
// changes with every commit to the file by any connection or process: the engine's read
// cache is valid while it does not change (store.DataVersioner).
//
// The schema is created by embedded, numbered migrations (migrations/0001_init.sql, …)
// and by the migrations of the store.Modules the file is opened with, each applied in
// its own transaction and recorded in module_migrations (migrate.go). Module statements
// run through Tx.SQL and are prepared once per pool too (module.go).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/meridian-catalog/meridian/store"
)

// readers is the size of the read-only connection pool.
const readers = 4

// shortReaders is the size of the pool reserved for short reads (BeginShort), which
// never wait behind the long queries that can hold every connection of the other.
const shortReaders = 2

// busyTimeout is how long, in milliseconds, a connection waits for a lock held by
// another process before it gives up with SQLITE_BUSY.
const busyTimeout = 10000

// checkpointPages is how many pages the write-ahead log holds before a commit copies
// them into the database file (a checkpoint, which the committing writer runs). At
// SQLite's default of 1,000, a catalog taking single creates checkpointed every few
// groups, each time copying again the pages every commit changes (the indexes' last
// pages, the full-text segments), all while no write could run: 10,000 pages (40 MiB)
// made SQLite ingest about 9% faster. The log file is cut back to walLimit bytes when it
// starts over after a checkpoint, so a large bulk group does not leave it large.
const checkpointPages = 10000

// walLimit is the size, in bytes, the write-ahead log file is cut back to.
const walLimit = 64 << 20

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an open SQLite catalog. It is safe for concurrent use.
type DB struct {
	path   string
	writer *sql.DB // one connection, BEGIN IMMEDIATE
	reader *sql.DB // query_only connections
	short  *sql.DB // query_only connections reserved for short reads (BeginShort)

	// The fixed statements, prepared once per pool: every one on the writer, the
	// reads on the readers.
	writerStmts, readerStmts, shortStmts *stmts
	// The module statements each pool has run, prepared once.
	writerModStmts, readerModStmts, shortModStmts *moduleStmts

	modules []store.Module

	group *store.Group // commits the engine's concurrent writes together

	dataVersion *dataVersion  // PRAGMA data_version on a connection of its own
	indexWrites atomic.Uint64 // the commits that changed the full-text index (merge.go)
	terms       termCache     // query stems' FTS5 terms while the file is unchanged (terms.go)
}

var (
	_ store.Driver         = (*DB)(nil)
	_ store.GroupCommitter = (*DB)(nil)
	_ store.ShortReader    = (*DB)(nil)
	_ store.DataVersioner  = (*DB)(nil)
)

// Open opens the catalog file at path, creating it and its parent directory when
// missing, and brings its schema up to date. It fails when the file was written by a
// newer Meridian whose schema this binary does not know, and when a module is
// malformed (no name, a taken name, migrations numbered differently on the two
// drivers). Each module's migrations are applied after the engine's own; a file made
// by a release before the module seam is adopted (migrate.go).
func Open(ctx context.Context, path string, modules ...store.Module) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: %q is not a database file path", path)
	}
	if strings.ContainsAny(path, "?#") {
		// The driver reads a DSN's parameters after the first '?'.
		return nil, fmt.Errorf("sqlite: database path %q must not contain '?' or '#'", path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("sqlite: create directory: %w", err)
		}
	}

	writer, err := sql.Open("sqlite", dsn(path, url.Values{
		"_pragma": {
			"busy_timeout(" + strconv.Itoa(busyTimeout) + ")",
			"foreign_keys(1)",
			"journal_mode(WAL)",
			"synchronous(FULL)",
			"wal_autocheckpoint(" + strconv.Itoa(checkpointPages) + ")",
			"journal_size_limit(" + strconv.Itoa(walLimit) + ")",
			// Savepoints (one per write of a group commit or a bulk chunk) keep their
			// sub-journal in memory rather than in a temporary file.
			"temp_store(MEMORY)",
		},
		"_txlock": {"immediate"},
	}))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)

	db := &DB{path: path, writer: writer, modules: modules, writerModStmts: newModuleStmts(writer)}
	db.group = store.NewGroup(func(ctx context.Context) (store.Tx, error) { return db.Begin(ctx, true) })
	if err := db.checkWAL(ctx); err != nil {
		writer.Close()
		return nil, err
	}
	if err := migrate(ctx, writer, modules); err != nil {
		writer.Close()
		return nil, err
	}
	if db.writerStmts, err = prepare(ctx, writer, numStmts); err != nil {
		writer.Close()
		return nil, err
	}

	// Readers open after the writer has put the file in WAL mode (a persistent
	// setting), so they never need to write to change it.
	reader, readerStmts, err := openReaders(ctx, path, readers)
	if err != nil {
		db.writerStmts.close()
		writer.Close()
		return nil, err
	}
	short, shortStmts, err := openReaders(ctx, path, shortReaders)
	if err != nil {
		readerStmts.close()
		reader.Close()
		db.writerStmts.close()
		writer.Close()
		return nil, err
	}
	db.reader, db.readerStmts, db.readerModStmts = reader, readerStmts, newModuleStmts(reader)
	db.short, db.shortStmts, db.shortModStmts = short, shortStmts, newModuleStmts(short)
	if db.dataVersion, err = openDataVersion(ctx, path); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openReaders opens a pool of n query_only connections and prepares the read
// statements on it.
func openReaders(ctx context.Context, path string, n int) (*sql.DB, *stmts, error) {
	reader, err := sql.Open("sqlite", dsn(path, url.Values{
		"_pragma": {
			"busy_timeout(" + strconv.Itoa(busyTimeout) + ")",
			"foreign_keys(1)",
			"query_only(1)",
		},
	}))
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: open reader: %w", err)
	}
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	reader.SetConnMaxLifetime(0)
	reader.SetConnMaxIdleTime(0)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		return nil, nil, fmt.Errorf("sqlite: open reader: %w", err)
	}
	st, err := prepare(ctx, reader, firstWrite)
	if err != nil {
		reader.Close()
		return nil, nil, err
	}
	return reader, st, nil
}

func dsn(path string, params url.Values) string {
	return path + "?" + params.Encode()
}

// checkWAL makes sure the journal mode pragma took effect: synchronous=FULL in WAL mode
// is what makes acknowledged writes durable without blocking readers.
func (db *DB) checkWAL(ctx context.Context) error {
	var mode string
	if err := db.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", db.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("sqlite: open %s: journal mode is %q, want wal", db.path, mode)
	}
	return nil
}

// Begin starts a transaction. A writable one runs on the single writer connection with
// BEGIN IMMEDIATE, so it holds the write lock from its first statement; a read-only one
// runs on a query_only reader connection and sees one consistent snapshot.
func (db *DB) Begin(ctx context.Context, writable bool) (store.Tx, error) {
	var (
		t   *sql.Tx
		st  *stmts
		mst *moduleStmts
		err error
	)
	if writable {
		mst = db.writerModStmts
		mst.prepareQueued(ctx)
		t, err = db.writer.BeginTx(ctx, nil)
		st = db.writerStmts
	} else {
		mst = db.readerModStmts
		mst.prepareQueued(ctx)
		t, err = db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		st = db.readerStmts
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return &tx{db: db, tx: t, writable: writable, stmts: st, modules: db.modules, modStmts: mst}, nil
}

// BeginShort starts a read-only transaction on the pool reserved for short reads
// (store.ShortReader): token verification never queues behind long searches holding
// every connection of the main reader pool.
func (db *DB) BeginShort(ctx context.Context) (store.Tx, error) {
	db.shortModStmts.prepareQueued(ctx)
	t, err := db.short.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return &tx{db: db, tx: t, stmts: db.shortStmts, modules: db.modules, modStmts: db.shortModStmts}, nil
}

// Modules returns the modules the database was opened with.
func (db *DB) Modules() []store.Module { return db.modules }

// Group runs f in the next group commit of the writer: it returns f's error, or nil
// once the transaction holding f's writes has committed.
func (db *DB) Group(ctx context.Context, f func(store.Tx) error) error {
	return db.group.Group(ctx, f)
}

// GroupStats implements store.GroupCommitter.
func (db *DB) GroupStats() store.GroupStats { return db.group.Stats() }

// Close closes both connection pools.
func (db *DB) Close() error {
	var errs []error
	errs = append(errs, db.readerStmts.close(), db.shortStmts.close(), db.writerStmts.close(),
		db.readerModStmts.close(), db.shortModStmts.close(), db.writerModStmts.close(), db.dataVersion.close())
	for _, pool := range []*sql.DB{db.reader, db.short} {
		if pool != nil {
			errs = append(errs, pool.Close())
		}
	}
	if db.writer != nil {
		errs = append(errs, db.writer.Close())
	}
	return errors.Join(errs...)
}

// SchemaVersion returns the newest of the engine's own migrations applied to the
// database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	return moduleVersion(ctx, db.reader, store.CoreModule)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
