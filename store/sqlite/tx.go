package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// tx implements store.Tx over one database/sql transaction. All SQL text is constant
// or assembled from constant fragments; every value is a bound parameter.
type tx struct {
	db       *DB
	tx       *sql.Tx
	writable bool
	stmts    *stmts              // the pool's prepared statements
	bound    [numStmts]*sql.Stmt // those bound to this transaction so far
	modules  []store.Module      // the modules the database was opened with
	modStmts *moduleStmts        // the pool's prepared module statements
	fts      []ftsRow            // full-text rows held back (search.go)
	vocab    map[string]int      // vocabulary count changes held back, by word (search.go)
	indexed  bool                // the transaction changed the full-text index
}

var errReadOnly = errors.New("sqlite: write in a read-only transaction")

// write refuses a write in a read-only transaction. The reader connections are also
// query_only, so SQLite itself would refuse it too.
func (t *tx) write() error {
	if !t.writable {
		return errReadOnly
	}
	return nil
}

func (t *tx) Commit() error {
	if err := t.flushHeld(context.Background()); err != nil {
		return err
	}
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	if t.indexed {
		t.db.indexWrites.Add(1)
	}
	return nil
}

// Rollback aborts the transaction. After Commit or Rollback it does nothing, so
// callers can defer it.
func (t *tx) Rollback() error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlite: rollback: %w", err)
	}
	return nil
}

// isUnique reports whether err is a UNIQUE or PRIMARY KEY constraint violation.
func isUnique(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const entityColumns = rowscan.EntityColumns

func (t *tx) Get(ctx context.Context, kind, id string) (store.Row, error) {
	var row *sql.Row
	if kind == "" {
		row = t.queryRow(ctx, stmtGet, id)
	} else {
		row = t.queryRow(ctx, stmtGetKind, id, kind)
	}
	r, err := rowscan.Row(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Row{}, rowscan.EntityNotFound(kind, id)
	}
	if err != nil {
		return store.Row{}, fmt.Errorf("sqlite: get entity: %w", err)
	}
	return r, nil
}

func (t *tx) GetByFQN(ctx context.Context, kind, fqn string) (store.Row, error) {
	r, err := rowscan.Row(t.queryRow(ctx, stmtGetByFQN, kind, fqn))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Row{}, rowscan.EntityNotFound(kind, fqn)
	}
	if err != nil {
		return store.Row{}, fmt.Errorf("sqlite: get entity by fqn: %w", err)
	}
	return r, nil
}

func errExists() error { return meridian.Errorf(meridian.EConflict, "Entity already exists") }

// KeepsTxOnConflict marks tx a store.ConflictKeeper: SQLite undoes an INSERT the
// entities table's unique keys refuse, alone, and the transaction goes on.
func (t *tx) KeepsTxOnConflict() {}

func (t *tx) Insert(ctx context.Context, r store.Row) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.exec(ctx, stmtInsert, r.ID, r.Kind, r.Name, r.FQN, int64(r.Version), r.UpdatedAt, r.UpdatedBy,
		boolInt(r.Deleted), string(r.Doc), boolInt(r.Snapshot))
	if isUnique(err) {
		return errExists()
	}
	if err != nil {
		return fmt.Errorf("sqlite: insert entity: %w", err)
	}
	return nil
}

func (t *tx) Update(ctx context.Context, r store.Row, expect meridian.Version) error {
	if err := t.write(); err != nil {
		return err
	}
	// An update the database refuses below (a rename onto a taken FQN) leaves this copy
	// behind: the same document as the row it keeps, which reads answer alike.
	if _, err := t.exec(ctx, stmtKeepSnapshot, rowscan.KeepSnapshotArgs(r, expect)...); err != nil {
		return fmt.Errorf("sqlite: keep snapshot: %w", err)
	}
	res, err := t.exec(ctx, stmtUpdate,
		r.Name, r.FQN, int64(r.Version), r.UpdatedAt, r.UpdatedBy, boolInt(r.Deleted), string(r.Doc), boolInt(r.Snapshot),
		r.ID, int64(expect))
	if isUnique(err) {
		return errExists()
	}
	if err != nil {
		return fmt.Errorf("sqlite: update entity: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: update entity: %w", err)
	}
	if n > 0 {
		if r.Snapshot {
			if _, err := t.exec(ctx, stmtDropSnapshot, r.ID, int64(r.Version)); err != nil {
				return fmt.Errorf("sqlite: update entity: %w", err)
			}
		}
		return nil
	}
	var one int
	err = t.queryRow(ctx, stmtExists, r.ID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return rowscan.EntityNotFound(r.Kind, r.ID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: update entity: %w", err)
	}
	return meridian.Errorf(meridian.EPreconditionFailed,
		"The entity has been modified by another user. Please refresh and retry.")
}

// Remove deletes an entity row, its version snapshots, its search document, every
// relation from or to it and the modules' rows about it (Module.OnRemove). It is
// ENotFound when there was no entity row (the rest is still deleted in the
// transaction).
func (t *tx) Remove(ctx context.Context, id string) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, err := t.exec(ctx, stmtInlineEventSnapshots, id); err != nil {
		return fmt.Errorf("sqlite: keep the events' entities: %w", err)
	}
	if _, err := t.exec(ctx, stmtRemoveVersions, id); err != nil {
		return fmt.Errorf("sqlite: remove versions: %w", err)
	}
	if _, err := t.exec(ctx, stmtRemoveRelations, id, id); err != nil {
		return fmt.Errorf("sqlite: remove relations: %w", err)
	}
	if err := t.flushHeld(ctx); err != nil {
		return err
	}
	if _, err := t.exec(ctx, stmtRemoveSearch, id); err != nil {
		return fmt.Errorf("sqlite: remove search document: %w", err)
	}
	for _, m := range t.modules {
		if m.OnRemove == nil {
			continue
		}
		if err := m.OnRemove(ctx, t.SQL(), id); err != nil {
			return fmt.Errorf("sqlite: remove module %s rows: %w", m.Name, err)
		}
	}
	res, err := t.exec(ctx, stmtRemoveEntity, id)
	if err != nil {
		return fmt.Errorf("sqlite: remove entity: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: remove entity: %w", err)
	}
	if n == 0 {
		return meridian.NotFound("entity", id)
	}
	return nil
}

// fieldName is the shape of a top-level document field usable in a Condition.
var fieldName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Condition SQL. The prefix condition is LIKE with the prefix's wildcards escaped, plus
// an exact substr comparison, because SQLite's LIKE ignores ASCII case and FQNs are
// case-sensitive (as they are in PostgreSQL, whose LIKE is case-sensitive).
//
// The field condition matches when the top-level field is a string, number or boolean
// whose text form ("true"/"false" for booleans) equals the value, or an array holding
// such an element. Objects, nulls and nested arrays never match. The JSON path is built
// in SQL from a bound, validated field name.
const (
	prefixCond = `(fqn LIKE ? ESCAPE '\' AND substr(fqn, 1, ?) = ?)`
	fieldCond  = `EXISTS (SELECT 1 FROM json_each(doc, '$.' || ?) AS j
WHERE json_type(doc, '$.' || ?) <> 'object'
  AND j.type IN ('text', 'integer', 'real', 'true', 'false')
  AND (CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(j.value AS TEXT) END) = ?)`
)

// List returns one page ordered by name, then id, and the count of all rows matching
// the kind, include and conditions (cursors ignored). A negative Limit means no limit.
func (t *tx) List(ctx context.Context, q store.ListQuery) ([]store.Row, int, error) {
	var (
		where []string
		args  []any
	)
	if q.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, q.Kind)
	}
	switch q.Include {
	case "", store.IncludeNonDeleted:
		where = append(where, "deleted = 0")
	case store.IncludeDeleted:
		where = append(where, "deleted = 1")
	case store.IncludeAll:
	default:
		return nil, 0, meridian.Errorf(meridian.EInvalid, "Invalid include value %q", string(q.Include))
	}
	for _, c := range q.Conditions {
		if c.Prefix {
			p := c.Value + "."
			where = append(where, prefixCond)
			args = append(args, likeEscaper.Replace(p)+"%", utf8.RuneCountInString(p), p)
			continue
		}
		if !fieldName.MatchString(c.Field) {
			return nil, 0, meridian.Errorf(meridian.EInvalid, "Invalid filter field %q", c.Field)
		}
		var alts []string
		for _, v := range c.Values() {
			alts = append(alts, fieldCond)
			args = append(args, c.Field, c.Field, v)
		}
		where = append(where, store.OrClause(alts))
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}

	var total int
	if err := t.tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM entities"+filter, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count entities: %w", err)
	}
	if q.Limit == 0 {
		return []store.Row{}, total, nil
	}

	query, args := listPage(q, where, args)
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: list entities: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Row)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: list entities: %w", err)
	}
	if q.Before != nil {
		slices.Reverse(out)
	}
	return out, total, nil
}

// listPage returns the query of List's page, q's Limit rows after or before its cursor,
// from the conditions (where, with args) of the rows it counted.
func listPage(q store.ListQuery, where []string, args []any) (string, []any) {
	if q.After != nil {
		where = append(where, "(name, id) > (?, ?)")
		args = append(args, q.After.Name, q.After.ID)
	}
	if q.Before != nil {
		where = append(where, "(name, id) < (?, ?)")
		args = append(args, q.Before.Name, q.Before.ID)
	}
	order := " ORDER BY name, id"
	if q.Before != nil {
		order = " ORDER BY name DESC, id DESC"
	}
	if q.Kind != "" && q.Include == store.IncludeAll {
		// Live and deleted entities of a kind are two ranges of
		// entities_kind_deleted_name_id, each in name order: each gives its first Limit
		// and only those are merged, where one range of the kind would be sorted whole
		// (migrations/0011 dropped the index on kind and name alone).
		arm := func(deleted string) string {
			return "SELECT * FROM (SELECT " + entityColumns + " FROM entities WHERE " +
				strings.Join(append(slices.Clone(where), "deleted = "+deleted), " AND ") + order + " LIMIT ?)"
		}
		return arm("0") + " UNION ALL " + arm("1") + order + " LIMIT ?",
			slices.Concat(args, []any{q.Limit}, args, []any{q.Limit, q.Limit})
	}
	query := "SELECT " + entityColumns + " FROM entities"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += order
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	return query, args
}

// PutVersion stores a snapshot; storing the same version again replaces it.
func (t *tx) PutVersion(ctx context.Context, id string, v meridian.Version, doc []byte) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.exec(ctx, stmtPutVersion, id, int64(v), string(doc))
	if err != nil {
		return fmt.Errorf("sqlite: put version: %w", err)
	}
	return nil
}

func (t *tx) Versions(ctx context.Context, id string) ([][]byte, error) {
	rows, err := t.query(ctx, stmtVersions, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: versions: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Doc)
	if err != nil {
		return nil, fmt.Errorf("sqlite: versions: %w", err)
	}
	return out, nil
}

func (t *tx) Version(ctx context.Context, id string, v meridian.Version) ([]byte, error) {
	var doc []byte
	err := t.queryRow(ctx, stmtVersion, id, int64(v)).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, meridian.Errorf(meridian.ENotFound, "entity instance for %s version %s not found", id, v)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: version: %w", err)
	}
	return doc, nil
}

// Relate inserts a relation at the end of the insertion order, or replaces the
// details of an existing one without moving it.
func (t *tx) Relate(ctx context.Context, r store.Relation) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.exec(ctx, stmtRelate,
		r.FromID, r.FromKind, r.ToID, r.ToKind, r.Type, rowscan.NullDoc(r.Doc))
	if err != nil {
		return fmt.Errorf("sqlite: relate: %w", err)
	}
	return nil
}

func (t *tx) Unrelate(ctx context.Context, r store.Relation) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.exec(ctx, stmtUnrelate, r.FromID, r.ToID, r.Type)
	if err != nil {
		return fmt.Errorf("sqlite: unrelate: %w", err)
	}
	return nil
}

func (t *tx) Relations(ctx context.Context, q store.RelationQuery) ([]store.Relation, error) {
	var (
		mask int
		args = make([]any, 0, 3)
	)
	if q.FromID != "" {
		mask |= relFrom
		args = append(args, q.FromID)
	}
	if q.ToID != "" {
		mask |= relTo
		args = append(args, q.ToID)
	}
	if q.Type != "" {
		mask |= relType
		args = append(args, q.Type)
	}
	rows, err := t.query(ctx, stmtRelations+stmtID(mask), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: relations: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Relation)
	if err != nil {
		return nil, fmt.Errorf("sqlite: relations: %w", err)
	}
	return out, nil
}

// Related joins the relations of the given types from (or, with inverse, to) id with
// the entities at their other ends, oldest relation first. Up to relatedPrepared types
// run a prepared statement; more run the same SQL unprepared.
func (t *tx) Related(ctx context.Context, id string, types []string, inverse bool) ([]store.RelatedRow, error) {
	if len(types) == 0 {
		return []store.RelatedRow{}, nil
	}
	args := make([]any, 0, 1+len(types))
	args = append(args, id)
	for _, typ := range types {
		args = append(args, typ)
	}
	var (
		rows *sql.Rows
		err  error
	)
	if len(types) <= relatedPrepared {
		rows, err = t.query(ctx, relatedStmt(len(types), inverse), args...)
	} else {
		rows, err = t.tx.QueryContext(ctx, relatedSQL(len(types), inverse), args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: related: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Related)
	if err != nil {
		return nil, fmt.Errorf("sqlite: related: %w", err)
	}
	return out, nil
}

// AppendEvent adds an event to the outbox. The database assigns its sequence number;
// an event without an id gets a new UUID.
func (t *tx) AppendEvent(ctx context.Context, e meridian.ChangeEvent) error {
	return t.AppendEncodedEvent(ctx, e, nil, false)
}

// AppendEncodedEvent is AppendEvent of an event whose entity is already encoded as
// entity (nil: encoded here); with snapshot, the event refers to the entity's snapshot
// at its current version rather than store entity again. Implements
// store.EncodedEventAppender.
func (t *tx) AppendEncodedEvent(ctx context.Context, e meridian.ChangeEvent, entity []byte, snapshot bool) error {
	if err := t.write(); err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	change, entityDoc, version, err := rowscan.EncodedEventDocs(e, entity, snapshot)
	if err != nil {
		return fmt.Errorf("sqlite: append event: %w", err)
	}
	_, err = t.exec(ctx, stmtAppendEvent,
		e.ID, e.EventType, e.EntityType, e.EntityID, e.EntityFQN, e.UserName, e.Timestamp,
		e.PreviousVersion, e.CurrentVersion, change, entityDoc, version, boolInt(e.Recursive))
	if isUnique(err) {
		return meridian.Errorf(meridian.EConflict, "Change event %s already exists", e.ID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: append event: %w", err)
	}
	return nil
}

// Events lists outbox events matching q, oldest first. A limit of 0 or less means no
// limit.
func (t *tx) Events(ctx context.Context, q store.EventQuery) ([]meridian.ChangeEvent, error) {
	args := []any{q.After, q.Since}
	var (
		rows *sql.Rows
		err  error
	)
	switch {
	case len(q.EntityTypes) > 0:
		limit := -1
		if q.Limit > 0 {
			limit = q.Limit
		}
		rows, err = t.query(ctx, eventsStmt(stmtEventsOfTypes, q.WithoutEntity), append(args, jsonList(q.EntityTypes), limit)...)
	case q.Limit > 0:
		rows, err = t.query(ctx, eventsStmt(stmtEventsLimit, q.WithoutEntity), append(args, q.Limit)...)
	default:
		rows, err = t.query(ctx, eventsStmt(stmtEvents, q.WithoutEntity), args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: events: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Event)
	if err != nil {
		return nil, rowscan.Wrap("sqlite", "events", err)
	}
	return out, nil
}

func (t *tx) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := t.queryRow(ctx, stmtSetting, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", meridian.NotFound("setting", key)
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: setting: %w", err)
	}
	return v, nil
}

func (t *tx) PutSetting(ctx context.Context, key, value string) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.exec(ctx, stmtPutSetting, key, value)
	if err != nil {
		return fmt.Errorf("sqlite: put setting: %w", err)
	}
	return nil
}
