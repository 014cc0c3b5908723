package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/store"
	"github.com/meridian-catalog/meridian/store/rowscan"
)

// tx implements store.Tx over one pgx transaction. All SQL text is constant or
// assembled from constant fragments; every value is a bound parameter.
type tx struct {
	tx       guarded
	writable bool
	modules  []store.Module // the modules the database was opened with
	vocab    *vocabFolder   // told, at commit, of the documents indexed or removed
	indexed  int            // the documents indexed or removed (vocabulary changes pending)
	changes  *changeFeed    // told of every commit of a writable transaction
}

var errReadOnly = errors.New("postgres: write in a read-only transaction")

// write refuses a write in a read-only transaction before it reaches the server, so
// the transaction stays usable (PostgreSQL would refuse it too, and abort it).
func (t *tx) write() error {
	if !t.writable {
		return errReadOnly
	}
	return nil
}

// Commit commits, then tells the vocabulary's folder how many documents changed. A
// COMMIT that never reached the server (pgconn.SafeToRetry) is EUnavailable; one whose
// answer was lost has an unknown outcome and stays internal.
func (t *tx) Commit() error {
	if t.writable {
		// This node's reads see the commit at once, not when its notification comes
		// back; a commit that failed may have happened too.
		defer t.changes.committed()
	}
	if err := t.tx.Commit(context.Background()); err != nil {
		if pgconn.SafeToRetry(err) {
			return fmt.Errorf("postgres: commit: %w: %w", errLost(), err)
		}
		return fmt.Errorf("postgres: commit: %w", err)
	}
	t.vocab.committed(t.indexed)
	return nil
}

// Rollback aborts the transaction. After Commit or Rollback it does nothing, so
// callers can defer it.
func (t *tx) Rollback() error {
	if err := t.tx.Rollback(context.Background()); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("postgres: rollback: %w", err)
	}
	return nil
}

// isUnique reports whether err is a unique_violation (SQLSTATE 23505).
func isUnique(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

const entityColumns = rowscan.EntityColumns

// The row reads of Get, GetByFQN and GetRows.
const (
	selectByID     = "SELECT " + entityColumns + " FROM entities WHERE id = $1"
	selectByIDKind = "SELECT " + entityColumns + " FROM entities WHERE id = $1 AND kind = $2"
	selectByFQN    = "SELECT " + entityColumns + " FROM entities WHERE kind = $1 AND fqn = $2"
)

func (t *tx) Get(ctx context.Context, kind, id string) (store.Row, error) {
	var row pgx.Row
	if kind == "" {
		row = t.tx.QueryRow(ctx, selectByID, id)
	} else {
		row = t.tx.QueryRow(ctx, selectByIDKind, id, kind)
	}
	r, err := rowscan.Row(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Row{}, rowscan.EntityNotFound(kind, id)
	}
	if err != nil {
		return store.Row{}, fmt.Errorf("postgres: get entity: %w", err)
	}
	return r, nil
}

func (t *tx) GetByFQN(ctx context.Context, kind, fqn string) (store.Row, error) {
	if strings.ContainsRune(fqn, 0) {
		// PostgreSQL text cannot hold a NUL, and no name may contain one: no such entity,
		// as SQLite answers.
		return store.Row{}, rowscan.EntityNotFound(kind, fqn)
	}
	r, err := rowscan.Row(t.tx.QueryRow(ctx, selectByFQN, kind, fqn))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Row{}, rowscan.EntityNotFound(kind, fqn)
	}
	if err != nil {
		return store.Row{}, fmt.Errorf("postgres: get entity by fqn: %w", err)
	}
	return r, nil
}

func errExists() error { return meridian.Errorf(meridian.EConflict, "Entity already exists") }

// Insert adds a row. ON CONFLICT DO NOTHING covers both the id and the (kind, FQN)
// keys without aborting the transaction, so the caller may go on after an EConflict.
func (t *tx) Insert(ctx context.Context, r store.Row) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.tx.execOrHold(ctx, func(tag pgconn.CommandTag, err error) error {
		if isUnique(err) {
			return errExists()
		}
		if err != nil {
			return fmt.Errorf("postgres: insert entity: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return errExists()
		}
		return nil
	}, `INSERT INTO entities (`+entityColumns+`, snapshot)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT DO NOTHING`,
		r.ID, r.Kind, r.Name, r.FQN, int64(r.Version), r.UpdatedAt, r.UpdatedBy, r.Deleted, string(r.Doc), r.Snapshot)
}

// Update replaces a row whose stored version is expect. The statement runs inside a
// savepoint, so a rename onto a taken FQN (unique_violation) is EConflict and leaves
// the transaction usable.
func (t *tx) Update(ctx context.Context, r store.Row, expect meridian.Version) error {
	if err := t.write(); err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue("SAVEPOINT meridian_update")
	b.Queue(rowscan.KeepSnapshot, rowscan.KeepSnapshotArgs(r, expect)...)
	b.Queue(`UPDATE entities
SET name = $1, fqn = $2, version = $3, updated_at = $4, updated_by = $5, deleted = $6, doc = $7, snapshot = $8
WHERE id = $9 AND version = $10`,
		r.Name, r.FQN, int64(r.Version), r.UpdatedAt, r.UpdatedBy, r.Deleted, string(r.Doc), r.Snapshot,
		r.ID, int64(expect))
	if r.Snapshot {
		b.Queue(rowscan.DropSnapshot, r.ID, int64(r.Version))
	}
	b.Queue("RELEASE SAVEPOINT meridian_update")
	res := t.tx.SendBatch(ctx, b)
	_, err := res.Exec() // SAVEPOINT
	if err == nil {
		_, err = res.Exec() // KeepSnapshot
	}
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = res.Exec() // UPDATE
	}
	for range b.Len() - 3 { // DropSnapshot, RELEASE
		if err == nil {
			_, err = res.Exec()
		}
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if isUnique(err) {
		if _, rerr := t.tx.Exec(ctx, "ROLLBACK TO SAVEPOINT meridian_update"); rerr != nil {
			return fmt.Errorf("postgres: update entity: %w", rerr)
		}
		if _, rerr := t.tx.Exec(ctx, "RELEASE SAVEPOINT meridian_update"); rerr != nil {
			return fmt.Errorf("postgres: update entity: %w", rerr)
		}
		return errExists()
	}
	if err != nil {
		return fmt.Errorf("postgres: update entity: %w", err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var exists bool
	if err := t.tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM entities WHERE id = $1)", r.ID).Scan(&exists); err != nil {
		return fmt.Errorf("postgres: update entity: %w", err)
	}
	if !exists {
		return rowscan.EntityNotFound(r.Kind, r.ID)
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
	if _, err := t.tx.Exec(ctx, rowscan.InlineEventSnapshots, id); err != nil {
		return fmt.Errorf("postgres: keep the events' entities: %w", err)
	}
	if _, err := t.tx.Exec(ctx, "DELETE FROM entity_versions WHERE id = $1", id); err != nil {
		return fmt.Errorf("postgres: remove versions: %w", err)
	}
	if _, err := t.tx.Exec(ctx, "DELETE FROM relations WHERE from_id = $1 OR to_id = $1", id); err != nil {
		return fmt.Errorf("postgres: remove relations: %w", err)
	}
	if _, err := t.tx.Exec(ctx, "DELETE FROM search_docs WHERE id = $1", id); err != nil {
		return fmt.Errorf("postgres: remove search document: %w", err)
	}
	t.indexed++
	for _, m := range t.modules {
		if m.OnRemove == nil {
			continue
		}
		if err := m.OnRemove(ctx, t.SQL(), id); err != nil {
			return fmt.Errorf("postgres: remove module %s rows: %w", m.Name, err)
		}
	}
	tag, err := t.tx.Exec(ctx, "DELETE FROM entities WHERE id = $1", id)
	if err != nil {
		return fmt.Errorf("postgres: remove entity: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return meridian.NotFound("entity", id)
	}
	return nil
}

// fieldName is the shape of a top-level document field usable in a Condition.
var fieldName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Condition SQL, with the semantics of store/sqlite's. The prefix condition is LIKE
// with the prefix's wildcards escaped (case-sensitive in PostgreSQL), plus an exact
// comparison of the leading characters.
//
// The field condition matches when the top-level field is a string, number or boolean
// whose text form ("true"/"false" for booleans) equals the value, or an array holding
// such an element. Objects, nulls and nested arrays never match. The field name is a
// bound, validated parameter.
const (
	prefixCond = `(fqn LIKE %s::text ESCAPE '\' AND left(fqn, %s::int) = %s::text)`
	fieldCond  = `EXISTS (SELECT 1 FROM jsonb_array_elements(
  CASE jsonb_typeof(doc -> %[1]s::text) WHEN 'array' THEN doc -> %[1]s::text
  ELSE jsonb_build_array(doc -> %[1]s::text) END) AS j(v)
WHERE jsonb_typeof(j.v) IN ('string', 'number', 'boolean') AND (j.v #>> '{}') = %[2]s::text)`
)

// params collects bound parameters and returns their placeholders.
type params []any

func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

// List returns one page ordered by name, then id, and the count of all rows matching
// the kind, include and conditions (cursors ignored). A negative Limit means no limit.
func (t *tx) List(ctx context.Context, q store.ListQuery) ([]store.Row, int, error) {
	var (
		where []string
		args  params
	)
	if q.Kind != "" {
		where = append(where, "kind = "+args.add(q.Kind))
	}
	switch q.Include {
	case "", store.IncludeNonDeleted:
		where = append(where, "NOT deleted")
	case store.IncludeDeleted:
		where = append(where, "deleted")
	case store.IncludeAll:
	default:
		return nil, 0, meridian.Errorf(meridian.EInvalid, "Invalid include value %q", string(q.Include))
	}
	for _, c := range q.Conditions {
		if c.Prefix {
			p := c.Value + "."
			where = append(where, fmt.Sprintf(prefixCond,
				args.add(likeEscaper.Replace(p)+"%"), args.add(utf8.RuneCountInString(p)), args.add(p)))
			continue
		}
		if !fieldName.MatchString(c.Field) {
			return nil, 0, meridian.Errorf(meridian.EInvalid, "Invalid filter field %q", c.Field)
		}
		var alts []string
		for _, v := range c.Values() {
			alts = append(alts, fmt.Sprintf(fieldCond, args.add(c.Field), args.add(v)))
		}
		where = append(where, store.OrClause(alts))
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}

	var total int
	if err := t.tx.QueryRow(ctx, "SELECT COUNT(*) FROM entities"+filter, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("postgres: count entities: %w", err)
	}
	if q.Limit == 0 {
		return []store.Row{}, total, nil
	}

	if q.After != nil {
		where = append(where, "(name, id) > ("+args.add(q.After.Name)+", "+args.add(q.After.ID)+")")
	}
	if q.Before != nil {
		where = append(where, "(name, id) < ("+args.add(q.Before.Name)+", "+args.add(q.Before.ID)+")")
	}
	query := "SELECT " + entityColumns + " FROM entities"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	backward := q.Before != nil
	if backward {
		query += " ORDER BY name DESC, id DESC"
	} else {
		query += " ORDER BY name, id"
	}
	if q.Limit > 0 {
		query += " LIMIT " + args.add(q.Limit)
	}
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: list entities: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Row)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: list entities: %w", err)
	}
	if backward {
		slices.Reverse(out)
	}
	return out, total, nil
}

// PutVersion stores a snapshot; storing the same version again replaces it.
func (t *tx) PutVersion(ctx context.Context, id string, v meridian.Version, doc []byte) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.tx.execOrHold(ctx, wrapErr("put version"), `INSERT INTO entity_versions (id, version, doc) VALUES ($1, $2, $3)
ON CONFLICT (id, version) DO UPDATE SET doc = excluded.doc`, id, int64(v), string(doc))
}

func (t *tx) Versions(ctx context.Context, id string) ([][]byte, error) {
	rows, err := t.tx.Query(ctx, rowscan.Versions, id)
	if err != nil {
		return nil, fmt.Errorf("postgres: versions: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Doc)
	if err != nil {
		return nil, fmt.Errorf("postgres: versions: %w", err)
	}
	return out, nil
}

func (t *tx) Version(ctx context.Context, id string, v meridian.Version) ([]byte, error) {
	var doc []byte
	err := t.tx.QueryRow(ctx, rowscan.Version, id, int64(v)).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, meridian.Errorf(meridian.ENotFound, "entity instance for %s version %s not found", id, v)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: version: %w", err)
	}
	return doc, nil
}

// Relate inserts a relation at the end of the insertion order, or replaces the
// details of an existing one without moving it.
func (t *tx) Relate(ctx context.Context, r store.Relation) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.tx.execOrHold(ctx, wrapErr("relate"), `INSERT INTO relations (from_id, from_kind, to_id, to_kind, type, doc)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (from_id, to_id, type) DO UPDATE
SET from_kind = excluded.from_kind, to_kind = excluded.to_kind, doc = excluded.doc`,
		r.FromID, r.FromKind, r.ToID, r.ToKind, r.Type, rowscan.NullDoc(r.Doc))
}

func (t *tx) Unrelate(ctx context.Context, r store.Relation) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, "DELETE FROM relations WHERE from_id = $1 AND to_id = $2 AND type = $3",
		r.FromID, r.ToID, r.Type)
	if err != nil {
		return fmt.Errorf("postgres: unrelate: %w", err)
	}
	return nil
}

func (t *tx) Relations(ctx context.Context, q store.RelationQuery) ([]store.Relation, error) {
	var (
		where []string
		args  params
	)
	if q.FromID != "" {
		where = append(where, "from_id = "+args.add(q.FromID))
	}
	if q.ToID != "" {
		where = append(where, "to_id = "+args.add(q.ToID))
	}
	if q.Type != "" {
		where = append(where, "type = "+args.add(q.Type))
	}
	query := "SELECT " + rowscan.RelationColumns + " FROM relations"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq"
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: relations: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Relation)
	if err != nil {
		return nil, fmt.Errorf("postgres: relations: %w", err)
	}
	return out, nil
}

// Related SQL: the relations of the types $2 from (or, with inverse, to) $1, each
// joined with the entity at its other end, oldest first. The join keeps a target only
// under the kind the relation records, if any, as Get(kind, id) would; relations'
// kinds use the default collation, the entities' "C".
var (
	relatedSQL = `SELECT r.type, ` + rowscan.Qualify("e", rowscan.EntityColumns) + ` FROM relations r
JOIN entities e ON e.id = r.to_id AND (r.to_kind = '' OR e.kind = r.to_kind COLLATE "C")
WHERE r.from_id = $1 AND r.type = ANY($2) ORDER BY r.seq`
	relatedInverseSQL = `SELECT r.type, ` + rowscan.Qualify("e", rowscan.EntityColumns) + ` FROM relations r
JOIN entities e ON e.id = r.from_id AND (r.from_kind = '' OR e.kind = r.from_kind COLLATE "C")
WHERE r.to_id = $1 AND r.type = ANY($2) ORDER BY r.seq`
)

// Related reads the relations of the given types from (or, with inverse, to) id with
// the entities at their other ends, in one query.
func (t *tx) Related(ctx context.Context, id string, types []string, inverse bool) ([]store.RelatedRow, error) {
	if len(types) == 0 {
		return []store.RelatedRow{}, nil
	}
	query := relatedSQL
	if inverse {
		query = relatedInverseSQL
	}
	rows, err := t.tx.Query(ctx, query, id, types)
	if err != nil {
		return nil, fmt.Errorf("postgres: related: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Related)
	if err != nil {
		return nil, fmt.Errorf("postgres: related: %w", err)
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
		return fmt.Errorf("postgres: append event: %w", err)
	}
	return t.tx.execOrHold(ctx, func(tag pgconn.CommandTag, err error) error {
		if err == nil && tag.RowsAffected() == 0 || isUnique(err) {
			return meridian.Errorf(meridian.EConflict, "Change event %s already exists", e.ID)
		}
		if err != nil {
			return fmt.Errorf("postgres: append event: %w", err)
		}
		return nil
	}, `INSERT INTO change_events
(id, event_type, entity_type, entity_id, entity_fqn, user_name, ts, previous_version, current_version,
 change_description, entity, snapshot_version, recursive)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (id) DO NOTHING`,
		e.ID, e.EventType, e.EntityType, e.EntityID, e.EntityFQN, e.UserName, e.Timestamp,
		e.PreviousVersion, e.CurrentVersion, change, entityDoc, version, e.Recursive)
}

// Events lists outbox events matching q, oldest first. A limit of 0 or less means no
// limit.
func (t *tx) Events(ctx context.Context, q store.EventQuery) ([]meridian.ChangeEvent, error) {
	var args params
	columns := rowscan.EventColumns
	if q.WithoutEntity {
		columns = rowscan.EventColumnsWithoutEntity
	}
	query := `SELECT ` + columns + `
FROM change_events WHERE seq > ` + args.add(q.After) + ` AND ts >= ` + args.add(q.Since)
	if len(q.EntityTypes) > 0 {
		query += " AND entity_type = ANY(" + args.add(q.EntityTypes) + ")"
	}
	query += " ORDER BY seq"
	if q.Limit > 0 {
		query += " LIMIT " + args.add(q.Limit)
	}
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: events: %w", err)
	}
	defer rows.Close()
	out, err := rowscan.All(rows, rowscan.Event)
	if err != nil {
		return nil, rowscan.Wrap("postgres", "events", err)
	}
	return out, nil
}

func (t *tx) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := t.tx.QueryRow(ctx, "SELECT value FROM settings WHERE key = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", meridian.NotFound("setting", key)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: setting: %w", err)
	}
	return v, nil
}

func (t *tx) PutSetting(ctx context.Context, key, value string) error {
	if err := t.write(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("postgres: put setting: %w", err)
	}
	return nil
}
