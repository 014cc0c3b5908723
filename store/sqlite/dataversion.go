package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"strconv"
	"sync"
)

// dataVersion answers PRAGMA data_version on a connection of its own, which never
// writes: its value changes whenever any other connection, of this process or
// another, commits to the file. The engine's read cache compares it before each
// cached GET (store.DataVersioner), so it runs the statement on the driver's
// connection directly: through database/sql's pool, row and scan, a GET paid twice
// the statement's own cost again.
//
// Values from two connections cannot be compared, so a connection that fails is
// replaced and the generation counts the replacements: DataVersion answers both.
type dataVersion struct {
	db *sql.DB

	mu   sync.Mutex  // guards the fields below while they are replaced
	gen  int64       // connections replaced so far
	conn *sql.Conn   // the connection, held while open
	stmt driver.Stmt // PRAGMA data_version, prepared on conn; used only inside conn.Raw
}

func openDataVersion(ctx context.Context, path string) (*dataVersion, error) {
	db, err := sql.Open("sqlite", dsn(path, url.Values{
		"_pragma": {"busy_timeout(" + strconv.Itoa(busyTimeout) + ")", "query_only(1)"},
	}))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open data version connection: %w", err)
	}
	d := &dataVersion{db: db}
	if err := d.connect(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// connect takes a connection of the pool and prepares the statement on it. d.mu is
// held, or d is not yet shared.
func (d *dataVersion) connect(ctx context.Context) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: data version connection: %w", err)
	}
	var stmt driver.Stmt
	if err := conn.Raw(func(dc any) error {
		var perr error
		stmt, perr = dc.(driver.ConnPrepareContext).PrepareContext(ctx, "PRAGMA data_version")
		return perr
	}); err != nil {
		conn.Close()
		return fmt.Errorf("sqlite: prepare data version: %w", err)
	}
	d.conn, d.stmt = conn, stmt
	return nil
}

// number runs the statement and returns its answer with the connection's generation.
// A connection that fails (not for ctx) is replaced before the next call.
func (d *dataVersion) number(ctx context.Context) (gen, v int64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		if err := d.connect(ctx); err != nil {
			return 0, 0, err
		}
	}
	err = d.conn.Raw(func(any) error {
		// The pragma answers at once: it runs without ctx's cancellation, for which
		// the driver would start a goroutine to interrupt it.
		rows, err := d.stmt.(driver.StmtQueryContext).QueryContext(context.WithoutCancel(ctx), nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, 1)
		if err := rows.Next(dest); err != nil {
			return err
		}
		n, ok := dest[0].(int64)
		if !ok {
			return fmt.Errorf("PRAGMA data_version answered %T", dest[0])
		}
		v = n
		return nil
	})
	if err != nil && ctx.Err() == nil {
		d.disconnect()
		d.gen++
	}
	return d.gen, v, err
}

// disconnect closes the statement and gives the connection back. d.mu is held.
func (d *dataVersion) disconnect() {
	if d.conn == nil {
		return
	}
	_ = d.conn.Raw(func(any) error { return d.stmt.Close() })
	d.conn.Close()
	d.conn, d.stmt = nil, nil
}

func (d *dataVersion) close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	d.disconnect()
	d.mu.Unlock()
	return d.db.Close()
}

// DataVersion returns SQLite's data_version as seen by a connection that never
// writes, in decimal, after the number of that connection (see dataVersion): it
// differs after every commit to the file by any connection or process.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	gen, v, err := db.dataVersion.number(ctx)
	if err != nil {
		return "", fmt.Errorf("sqlite: data version: %w", err)
	}
	return strconv.FormatInt(gen, 10) + "." + strconv.FormatInt(v, 10), nil
}
