// Package postgres is Meridian's production store driver: PostgreSQL 15 or later through
// pgx/v5, with tsvector and pg_trgm keyword search and pgvector for embeddings. It
// implements store.Driver with the same semantics, error codes and messages as
// store/sqlite.
//
// Open creates the vector and pg_trgm extensions and applies the embedded, numbered
// migrations (migrations/0001_init.sql, …) and those of the store.Modules it is given
// on one dedicated connection before the pool is used (migrate.go). Each step runs
// under a transaction-scoped advisory lock, so servers starting at the same time apply
// each migration exactly once. The pool registers pgvector-go's types on every new
// connection.
//
// Writable transactions run at READ COMMITTED and take a transaction-scoped advisory
// lock at once (the driver's write lock): writers queue instead of deadlocking, and the
// outbox's sequence numbers are assigned in commit order, so a consumer reading "events
// after N" never skips one that commits late. Update stays optimistic on the stored
// version. Read-only transactions run at REPEATABLE READ READ ONLY and see one snapshot.
// Every writable transaction notifies the change feed, which each DB follows on a
// connection of its own to tell its read cache that something was committed
// (changes.go).
//
// Writers append their changes to the counts of the search vocabulary and of the
// index's terms to tables of their own, which a background folder moves into the
// counts (vocab.go). Where autovacuum is off, a background upkeep vacuums and analyzes
// the catalog's tables by its thresholds (upkeep.go). Close stops them and the feed.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/meridian-catalog/meridian/store"
)

// Pool bounds, used unless the URL sets pool_min_conns or pool_max_conns. The pool's
// size is a quarter of the connections the server accepts from ordinary roles (see
// defaultMaxConns), between FewestMaxConns and DefaultMaxConns.
const (
	DefaultMinConns = 2
	DefaultMaxConns = 64
	FewestMaxConns  = 4
)

// serversPerDatabase is how many Meridian servers the default pool size leaves room
// for on one PostgreSQL server: each takes at most a quarter of its connections.
const serversPerDatabase = 4

// defaultMaxConns is the pool size for a server that accepts usable connections from
// ordinary roles (max_connections less the reserved ones): a quarter of them, so that
// several Meridian servers sharing the database (and psql, migrations, backups) stay
// within the limit, between FewestMaxConns and DefaultMaxConns. PostgreSQL's default
// max_connections of 100 gives 24.
func defaultMaxConns(usable int) int32 {
	return int32(min(max(usable/serversPerDatabase, FewestMaxConns), DefaultMaxConns))
}

// Advisory lock keys (pg_advisory_xact_lock). They are arbitrary constants that
// identify Meridian's locks within one database.
const (
	migrateLock int64 = 0x4d5249_4d4947 // "MRI" "MIG"
	writeLock   int64 = 0x4d5249_575254 // "MRI" "WRT"
)

// ErrNoPgvector is the message of the error Open returns when the server lacks the
// pgvector extension.
const ErrNoPgvector = `pgvector extension "vector" is not installed on this PostgreSQL server; run scripts/install-pgvector.sh`

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an open PostgreSQL catalog. It is safe for concurrent use.
type DB struct {
	pool    *pgxpool.Pool
	modules []store.Module
	vocab   *vocabFolder
	upkeep  *upkeeper
	changes *changeFeed
}

var (
	_ store.Driver        = (*DB)(nil)
	_ store.DataVersioner = (*DB)(nil)
)

// Open connects to the PostgreSQL database at url (postgres://… or a keyword/value
// connection string), creates the vector and pg_trgm extensions when missing, and
// brings the schema up to date. It fails with a message naming the extension when the
// server lacks pgvector, and when the database was migrated by a newer Meridian whose
// schema this binary does not know, and when a module is malformed (no name, a taken
// name, migrations numbered differently on the two drivers). Each module's migrations
// are applied after the engine's own; a database made by a release before the module
// seam is adopted (migrate.go).
func Open(ctx context.Context, url string, modules ...store.Module) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, errors.New("postgres: invalid database URL")
	}
	usable, err := bootstrap(ctx, cfg.ConnConfig.Copy(), modules)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns(usable)
	}
	if !strings.Contains(url, "pool_min_conns") {
		cfg.MinConns = DefaultMinConns
	}
	if cfg.MinConns > cfg.MaxConns {
		cfg.MinConns = cfg.MaxConns
	}

	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		if err := pgxvec.RegisterTypes(ctx, c); err != nil {
			return fmt.Errorf("postgres: register pgvector types: %w", err)
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	return &DB{pool: pool, modules: modules, vocab: startVocabFolder(pool), upkeep: startUpkeep(pool),
		changes: startChangeFeed(cfg.ConnConfig, queueFull)}, nil
}

// Pool returns the connection pool, for packages that keep their own tables in the
// catalog database (the vectors index).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// DataVersion returns the change feed's version (changes.go) while the feed is
// trusted, and otherwise the server's current snapshot (pg_current_snapshot) as text:
// the transactions finished and in progress. Either changes with every commit of a
// writable transaction, on any node and through any connection: the feed's when the
// commit's notification arrives, typically within a few milliseconds and at most
// feedStale later; the snapshot's at once (a writing transaction finishes by leaving
// the in-progress list or by moving its end past the last one). A read-only
// transaction changes neither (store.DataVersioner, the engine's read cache). Writes
// to other databases of the same server move the snapshot too, which only costs cache
// misses. A broken connection is retried once, as in Begin.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	if v, ok := db.changes.version(); ok {
		return v, nil
	}
	const snapshot = "SELECT pg_current_snapshot()::text"
	var v string
	err := db.pool.QueryRow(ctx, snapshot).Scan(&v)
	if broken(err) && ctx.Err() == nil {
		db.pool.Reset()
		err = db.pool.QueryRow(ctx, snapshot).Scan(&v)
	}
	if broken(err) {
		return "", fmt.Errorf("postgres: data version: %w: %w", errLost(), err)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: data version: %w", err)
	}
	return v, nil
}

// Begin starts a transaction. A writable one takes the write lock before it returns;
// a read-only one sees one consistent snapshot. When the connection it got is broken
// (broken.go), every idle connection of the pool is likely gone with it: the pool is
// reset and Begin tries once more, which is safe since nothing was done yet. A second
// failure is EUnavailable.
func (db *DB) Begin(ctx context.Context, writable bool) (store.Tx, error) {
	return db.beginTx(ctx, writable, writable)
}

// BeginUnordered starts a writable transaction without the write lock (see
// store.UnorderedWriter).
func (db *DB) BeginUnordered(ctx context.Context) (store.Tx, error) {
	return db.beginTx(ctx, true, false)
}

// beginTx starts a transaction, taking the write lock when lock is set, and retries once
// on a broken connection.
func (db *DB) beginTx(ctx context.Context, writable, lock bool) (store.Tx, error) {
	t, err := db.begin(ctx, writable, lock)
	if broken(err) && ctx.Err() == nil {
		db.pool.Reset()
		t, err = db.begin(ctx, writable, lock)
	}
	if broken(err) {
		return nil, fmt.Errorf("postgres: begin: %w: %w", errLost(), err)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: begin: %w", err)
	}
	return &tx{tx: guarded{Tx: t, h: &held{}}, writable: writable, modules: db.modules, vocab: db.vocab, changes: db.changes}, nil
}

func (db *DB) begin(ctx context.Context, writable, lock bool) (pgx.Tx, error) {
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	if writable {
		opts = pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}
	}
	t, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	// A writable transaction notifies the change feeds when it commits (changes.go);
	// the notification rides on the write lock's statement.
	switch {
	case lock:
		if _, err := t.Exec(ctx, "SELECT pg_advisory_xact_lock($1), pg_notify($2, '')", writeLock, changesChannel); err != nil {
			_ = t.Rollback(context.Background())
			return nil, fmt.Errorf("take the write lock: %w", err)
		}
	case writable:
		if _, err := t.Exec(ctx, "SELECT pg_notify($1, '')", changesChannel); err != nil {
			_ = t.Rollback(context.Background())
			return nil, fmt.Errorf("notify the change feeds: %w", err)
		}
	}
	return t, nil
}

// Modules returns the modules the database was opened with.
func (db *DB) Modules() []store.Module { return db.modules }

// Close stops the vocabulary's folder (vocab.go), the upkeep (upkeep.go) and the change
// feed (changes.go), and closes the connection pool.
func (db *DB) Close() error {
	db.changes.close()
	db.vocab.close()
	db.upkeep.close()
	db.pool.Close()
	return nil
}

// SchemaVersion returns the newest of the engine's own migrations applied to the
// database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	return moduleVersion(ctx, db.pool, store.CoreModule)
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// bootstrap creates the extensions and applies the migrations on a dedicated
// connection, before the pool (whose AfterConnect needs the vector type) opens, and
// returns how many connections the server accepts from ordinary roles.
func bootstrap(ctx context.Context, cc *pgx.ConnConfig, modules []store.Module) (int, error) {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return 0, fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if err := createExtensions(ctx, conn); err != nil {
		return 0, err
	}
	if err := migrate(ctx, conn, modules); err != nil {
		return 0, err
	}
	return usableConnections(ctx, conn)
}

// usableConnections returns how many connections the server accepts from ordinary
// roles: max_connections less superuser_reserved_connections and, from PostgreSQL 16,
// reserved_connections (current_setting(…, true) is NULL before).
func usableConnections(ctx context.Context, q queryRower) (int, error) {
	var usable int
	if err := q.QueryRow(ctx, `SELECT current_setting('max_connections')::int
	- current_setting('superuser_reserved_connections')::int
	- COALESCE(current_setting('reserved_connections', true), '0')::int`).Scan(&usable); err != nil {
		return 0, fmt.Errorf("postgres: read max_connections: %w", err)
	}
	return usable, nil
}

// extensions are the extensions Meridian needs, with the fix to suggest when the
// server does not have one.
var extensions = []struct{ name, missing string }{
	{"vector", ErrNoPgvector},
	{"pg_trgm", `PostgreSQL extension "pg_trgm" is not available on this server; install PostgreSQL's contrib modules (Debian: postgresql-15)`},
}

func createExtensions(ctx context.Context, conn *pgx.Conn) error {
	return lockedTx(ctx, conn, func(t pgx.Tx) error {
		for _, ext := range extensions {
			var available bool
			if err := t.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = $1)",
				ext.name).Scan(&available); err != nil {
				return fmt.Errorf("postgres: check extension %s: %w", ext.name, err)
			}
			if !available {
				return errors.New("postgres: " + ext.missing)
			}
			// The name is one of the constants above, never input.
			if _, err := t.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{ext.name}.Sanitize()); err != nil {
				var pe *pgconn.PgError
				if errors.As(err, &pe) && pe.Code == "58P01" { // undefined_file: control file missing
					return errors.New("postgres: " + ext.missing)
				}
				return fmt.Errorf("postgres: create extension %s: %w", ext.name, err)
			}
		}
		return nil
	})
}

// lockedTx runs fn in a transaction that holds the migration lock.
func lockedTx(ctx context.Context, conn *pgx.Conn, fn func(t pgx.Tx) error) error {
	t, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	defer t.Rollback(context.Background())
	if _, err := t.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
		return fmt.Errorf("postgres: take the migration lock: %w", err)
	}
	if err := fn(t); err != nil {
		return err
	}
	if err := t.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}
