package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
)

// dataVersion answers PRAGMA data_version on a connection of its own, which never
// writes: its value changes whenever any other connection, of this process or
// another, commits to the file. The engine's read cache compares it before each
// cached GET (store.DataVersioner).
type dataVersion struct {
	db   *sql.DB
	stmt *sql.Stmt
}

func openDataVersion(ctx context.Context, path string) (*dataVersion, error) {
	db, err := sql.Open("sqlite", dsn(path, url.Values{
		"_pragma": {"busy_timeout(" + strconv.Itoa(busyTimeout) + ")", "query_only(1)"},
	}))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open data version connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	stmt, err := db.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: prepare data version: %w", err)
	}
	return &dataVersion{db: db, stmt: stmt}, nil
}

func (d *dataVersion) close() error {
	if d == nil {
		return nil
	}
	d.stmt.Close()
	return d.db.Close()
}

// DataVersion returns SQLite's data_version as seen by a connection that never
// writes, in decimal: it differs after every commit to the file by any connection or
// process.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	v, err := db.dataVersionNumber(ctx)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(v, 10), nil
}

// dataVersionNumber is DataVersion as the number SQLite answers; it only grows.
func (db *DB) dataVersionNumber(ctx context.Context) (int64, error) {
	var v int64
	if err := db.dataVersion.stmt.QueryRowContext(ctx).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: data version: %w", err)
	}
	return v, nil
}
