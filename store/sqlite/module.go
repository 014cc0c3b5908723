package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
)

// SQL returns the module seam of the transaction.
func (t *tx) SQL() store.SQL { return moduleSQL{t} }

// moduleSQL implements store.SQL over the transaction.
type moduleSQL struct{ t *tx }

func (m moduleSQL) Dialect() store.Dialect { return store.DialectSQLite }

func (m moduleSQL) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := m.t.write(); err != nil {
		return 0, err
	}
	if err := m.t.flushHeld(ctx); err != nil {
		return 0, err
	}
	var (
		res sql.Result
		err error
	)
	q := numbered(query)
	if st := m.t.moduleStmt(ctx, q); st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = m.t.tx.ExecContext(ctx, q, args...)
	}
	if isUnique(err) {
		return 0, meridian.Errorf(meridian.EConflict, "Row already exists")
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return res.RowsAffected()
}

func (m moduleSQL) Query(ctx context.Context, query string, args ...any) (store.Rows, error) {
	if err := m.t.flushHeld(ctx); err != nil {
		return nil, err
	}
	var (
		rows *sql.Rows
		err  error
	)
	q := numbered(query)
	if st := m.t.moduleStmt(ctx, q); st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = m.t.tx.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return sqlRows{rows}, nil
}

func (m moduleSQL) QueryRow(ctx context.Context, query string, args ...any) store.Scanner {
	if err := m.t.flushHeld(ctx); err != nil {
		return errRow{err}
	}
	q := numbered(query)
	if st := m.t.moduleStmt(ctx, q); st != nil {
		return sqlRow{st.QueryRowContext(ctx, args...)}
	}
	return sqlRow{m.t.tx.QueryRowContext(ctx, q, args...)}
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return meridian.Errorf(meridian.ENotFound, "not found")
	}
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// numbered returns the SQLite text of a module statement. When its $N placeholders
// are $1, $2, … in order, each once, each becomes an anonymous ?, which SQLite binds
// by position; otherwise each becomes ?N, which SQLite binds to the N-th argument, so a
// number may repeat and come in any order. The anonymous form matters for a statement
// of many rows: the driver asks SQLite for every parameter's name, which for ?N is a
// walk of the statement's list of names, quadratic in its parameters (a 500-row
// insert of the vectors index has 6,000).
func numbered(q string) string {
	// digitsEnd is the end of the digits of a placeholder at i, or i when none is there.
	digitsEnd := func(i int) int {
		j := i + 1
		for q[i] == '$' && j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		if j == i+1 {
			return i
		}
		return j
	}
	inOrder, next := true, 1
	var num [20]byte
	for i := 0; i < len(q) && inOrder; i++ {
		if j := digitsEnd(i); j > i {
			inOrder = q[i+1:j] == string(strconv.AppendInt(num[:0], int64(next), 10))
			next++
			i = j - 1
		}
	}
	var b strings.Builder
	b.Grow(len(q))
	for i := 0; i < len(q); i++ {
		j := digitsEnd(i)
		switch {
		case j == i:
			b.WriteByte(q[i])
		case inOrder:
			b.WriteByte('?')
			i = j - 1
		default:
			b.WriteByte('?') // the number follows, copied as text
		}
	}
	return b.String()
}

// maxModuleStmts bounds the module statements a pool keeps prepared; beyond it they
// run unprepared, so modules that build SQL text cost no unbounded memory.
const maxModuleStmts = 256

// moduleStmts prepares the module statements one pool runs, once each, as the fixed
// statements are (stmts.go): modernc.org/sqlite parses an unprepared statement at every
// call, which costs as much as a small indexed query (a token lookup on every request).
// Modules do not list their statements, and a pool cannot prepare inside a transaction
// (the writer's one connection is the transaction's), so the first run of a statement
// is unprepared and queues it; the next Begin on the pool prepares the queue before it
// takes its connection.
type moduleStmts struct {
	db       *sql.DB
	prepared atomic.Pointer[map[string]*sql.Stmt] // replaced, never changed
	queued   atomic.Bool

	mu    sync.Mutex // guards queue and the replacement of prepared
	queue map[string]bool
}

func newModuleStmts(db *sql.DB) *moduleStmts {
	m := &moduleStmts{db: db}
	m.prepared.Store(&map[string]*sql.Stmt{})
	return m
}

// moduleStmt returns the pool's prepared statement for q bound to the transaction, or
// nil after queueing q for the next Begin.
func (t *tx) moduleStmt(ctx context.Context, q string) *sql.Stmt {
	m := t.modStmts
	if m == nil {
		return nil
	}
	if st := (*m.prepared.Load())[q]; st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	m.mu.Lock()
	if len(*m.prepared.Load())+len(m.queue) < maxModuleStmts {
		if m.queue == nil {
			m.queue = map[string]bool{}
		}
		m.queue[q] = true
		m.queued.Store(true)
	}
	m.mu.Unlock()
	return nil
}

// prepareQueued prepares the queued statements on the pool. Call it outside any
// transaction of the pool. A statement that fails to prepare runs unprepared and is
// queued again at its next run.
func (m *moduleStmts) prepareQueued(ctx context.Context) {
	if !m.queued.Load() {
		return
	}
	m.mu.Lock()
	queue := m.queue
	m.queue = nil
	m.queued.Store(false)
	m.mu.Unlock()

	fresh := map[string]*sql.Stmt{}
	for q := range queue {
		if st, err := m.db.PrepareContext(ctx, q); err == nil {
			fresh[q] = st
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := maps.Clone(*m.prepared.Load())
	for q, st := range fresh {
		if next[q] != nil || len(next) >= maxModuleStmts {
			st.Close()
			continue
		}
		next[q] = st
	}
	m.prepared.Store(&next)
}

// close closes the prepared module statements.
func (m *moduleStmts) close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, st := range *m.prepared.Load() {
		errs = append(errs, st.Close())
	}
	m.prepared.Store(&map[string]*sql.Stmt{})
	return errors.Join(errs...)
}

// errRow is a row whose query was not run.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
