// Package rowscan reads the store's values out of database rows, once for both drivers:
// a database/sql row (store/sqlite) and a pgx row (store/postgres) both have
// Scan(dest ...any) error, and both drivers convert the columns the same way. Each
// scanning function names the columns it reads, in order, as a constant the drivers
// put in their queries, so a query and its scan cannot drift apart.
//
// It also holds the few other dialect-free pieces both drivers shared word for word:
// the values optional JSON columns are written with (NullDoc, EventDocs) and the
// not-found error of an entity lookup. The SQL itself (tables, conditions,
// placeholders) and the recognition of "no rows" and constraint errors stay in each
// driver.
package rowscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/meridian-catalog/meridian"
	"github.com/meridian-catalog/meridian/search"
	"github.com/meridian-catalog/meridian/store"
)

// Scanner is one row: *sql.Row, *sql.Rows, pgx.Row or pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is a result set: *sql.Rows or pgx.Rows. The caller closes it.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// All scans every row with scan, in order. The slice is never nil. It returns the
// first error of a scan or of the result set, unwrapped.
func All[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Qualify prefixes every column of a column list with a table alias:
// Qualify("e", "id, kind") is "e.id, e.kind".
func Qualify(alias, columns string) string {
	cols := strings.Split(columns, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

// EntityColumns are the entities columns Row reads.
const EntityColumns = "id, kind, name, fqn, version, updated_at, updated_by, deleted, doc"

// rowDest returns the scan destinations of EntityColumns; the version goes through an
// int64, which both drivers scan an integer column into.
func rowDest(r *store.Row, version *int64) []any {
	return []any{&r.ID, &r.Kind, &r.Name, &r.FQN, version, &r.UpdatedAt, &r.UpdatedBy, &r.Deleted, &r.Doc}
}

// Row reads EntityColumns.
func Row(s Scanner) (store.Row, error) {
	var (
		r       store.Row
		version int64
	)
	err := s.Scan(rowDest(&r, &version)...)
	r.Version = meridian.Version(version)
	return r, err
}

// Related reads a relation type followed by the EntityColumns of the entity at the
// relation's other end.
func Related(s Scanner) (store.RelatedRow, error) {
	var (
		rr      store.RelatedRow
		version int64
	)
	err := s.Scan(append([]any{&rr.Type}, rowDest(&rr.Row, &version)...)...)
	rr.Row.Version = meridian.Version(version)
	return rr, err
}

// Doc reads a single document column (a version snapshot).
func Doc(s Scanner) ([]byte, error) {
	var doc []byte
	err := s.Scan(&doc)
	return doc, err
}

// RelationColumns are the relations columns Relation reads.
const RelationColumns = "from_id, from_kind, to_id, to_kind, type, doc"

// Relation reads RelationColumns. A relation without details has a nil Doc.
func Relation(s Scanner) (store.Relation, error) {
	var r store.Relation
	err := s.Scan(&r.FromID, &r.FromKind, &r.ToID, &r.ToKind, &r.Type, &r.Doc)
	return r, err
}

// SearchHit reads a hit's id, kind, FQN, source document and score, in that order.
func SearchHit(s Scanner) (search.Hit, error) {
	var h search.Hit
	err := s.Scan(&h.ID, &h.Kind, &h.FQN, &h.Source, &h.Score)
	return h, err
}

// String reads a single text column.
func String(s Scanner) (string, error) {
	var v string
	err := s.Scan(&v)
	return v, err
}

// WordCount reads a vocabulary word and its document count, in that order.
func WordCount(s Scanner) (search.WordCount, error) {
	var w search.WordCount
	err := s.Scan(&w.Word, &w.Docs)
	return w, err
}

// Bucket reads an aggregation bucket's key and count, in that order.
func Bucket(s Scanner) (search.Bucket, error) {
	var b search.Bucket
	err := s.Scan(&b.Key, &b.Count)
	return b, err
}

// eventColumnsHead are the change_events columns Event reads before the entity's.
const eventColumnsHead = `seq, id, event_type, entity_type, entity_id, entity_fqn, user_name, ts,
previous_version, current_version, change_description, `

// EventColumns are the change_events columns Event reads. An event whose entity is the
// snapshot its write stored (store.EncodedEventAppender) keeps the snapshot's version in
// snapshot_version instead of a copy in entity, and is read with the snapshot's document.
const EventColumns = eventColumnsHead + `COALESCE(entity, ` + eventSnapshot + `) AS entity, recursive`

// eventSnapshot is the document of the snapshot a change_events row refers to: its
// entity_versions row, or the entity's row while that is the snapshot (see Version).
const eventSnapshot = `COALESCE((SELECT v.doc FROM entity_versions v
WHERE v.id = change_events.entity_id AND v.version = change_events.snapshot_version),
(SELECT e.doc FROM entities e
WHERE e.id = change_events.entity_id AND e.version = change_events.snapshot_version AND e.snapshot))`

// InlineEventSnapshots is the statement, with the entity's id as its one parameter
// ($1), that copies the snapshots the events of an entity refer to into the events, so
// that the snapshots can be removed (a hard delete).
const InlineEventSnapshots = `UPDATE change_events SET entity = ` + eventSnapshot + `, snapshot_version = NULL
WHERE entity_id = $1 AND snapshot_version IS NOT NULL`

// HitSnapshot is the document of the snapshot of the entity's current version, for a
// hit of search_docs d whose source is that snapshot's (search.Doc.Snapshot).
const HitSnapshot = `(SELECT COALESCE(v.doc, CASE WHEN e.snapshot THEN e.doc END) FROM entities e
LEFT JOIN entity_versions v ON v.id = e.id AND v.version = e.version WHERE e.id = d.id)`

// The snapshot of an entity's current version is stored once when the entity's row
// document is that snapshot (store.Row.Snapshot; migrations/0012): entities.snapshot is
// set, and entity_versions holds no row for that version until an update replaces it.
// A snapshot is then the entity_versions row when there is one, and otherwise the
// entities row of that version when it is marked. These statements, with numbered
// parameters, are the drivers' reads and writes of that layout.
const (
	// Version reads the snapshot of entity $1 at version $2.
	Version = `SELECT doc FROM entity_versions WHERE id = $1 AND version = $2
UNION ALL
SELECT doc FROM entities e WHERE e.id = $1 AND e.version = $2 AND e.snapshot` + currentOnly

	// Versions reads every snapshot of entity $1, newest first.
	Versions = `SELECT doc FROM (SELECT version, doc FROM entity_versions WHERE id = $1
UNION ALL
SELECT e.version, e.doc FROM entities e WHERE e.id = $1 AND e.snapshot` + currentOnly + `) s
ORDER BY version DESC`

	// KeepSnapshot runs before an update of entity $1 from version $2: it copies the
	// row's document into entity_versions when the row is the snapshot of version $2,
	// unless $3 is that version too (the update replaces that version's snapshot with
	// a new row that is its snapshot; -1 otherwise). A snapshot already stored for the
	// version is kept.
	KeepSnapshot = `INSERT INTO entity_versions (id, version, doc)
SELECT id, version, doc FROM entities WHERE id = $1 AND version = $2 AND snapshot AND version <> $3
ON CONFLICT (id, version) DO NOTHING`

	// DropSnapshot runs after an update of entity $1 to version $2 whose row is that
	// version's snapshot (Row.Snapshot): it removes a snapshot stored for the version,
	// which would be read in the row's place, if the update took place.
	DropSnapshot = `DELETE FROM entity_versions WHERE id = $1 AND version = $2
AND EXISTS (SELECT 1 FROM entities WHERE id = $1 AND version = $2 AND snapshot)`
)

// KeepSnapshotArgs are KeepSnapshot's parameters for an update of r from version
// expect.
func KeepSnapshotArgs(r store.Row, expect meridian.Version) []any {
	replaced := int64(-1)
	if r.Snapshot {
		replaced = int64(r.Version)
	}
	return []any{r.ID, int64(expect), replaced}
}

// currentOnly keeps an entities row out of a read of snapshots when entity_versions
// already holds that version's.
const currentOnly = `
AND NOT EXISTS (SELECT 1 FROM entity_versions v WHERE v.id = e.id AND v.version = e.version)`

// EventColumnsWithoutEntity are EventColumns with NULL in place of the entity document,
// for a reader that does not use it: Event then neither reads nor decodes it.
const EventColumnsWithoutEntity = eventColumnsHead + `CAST(NULL AS TEXT) AS entity, recursive`

// DocError is a stored JSON document that does not decode. Its message names the row
// and the column ("event ev-1 entity: ..."); see Wrap.
type DocError struct {
	Row string
	Err error
}

func (e *DocError) Error() string { return e.Row + ": " + e.Err.Error() }
func (e *DocError) Unwrap() error { return e.Err }

// Event reads EventColumns and decodes the change description and entity documents,
// each nil when its column is NULL. A document that does not decode is a *DocError.
func Event(s Scanner) (meridian.ChangeEvent, error) {
	var (
		e              meridian.ChangeEvent
		change, entity []byte
	)
	if err := s.Scan(&e.Seq, &e.ID, &e.EventType, &e.EntityType, &e.EntityID, &e.EntityFQN, &e.UserName,
		&e.Timestamp, &e.PreviousVersion, &e.CurrentVersion, &change, &entity, &e.Recursive); err != nil {
		return meridian.ChangeEvent{}, err
	}
	if change != nil {
		e.ChangeDescription = new(meridian.ChangeDescription)
		if err := json.Unmarshal(change, e.ChangeDescription); err != nil {
			return meridian.ChangeEvent{}, &DocError{Row: "event " + e.ID + " change description", Err: err}
		}
	}
	if entity != nil {
		if err := json.Unmarshal(entity, &e.Entity); err != nil {
			return meridian.ChangeEvent{}, &DocError{Row: "event " + e.ID + " entity", Err: err}
		}
	}
	return e, nil
}

// NullDoc is the value an optional document column is written with: its JSON text, or
// nil (SQL NULL) when it is empty. Relation reads it back as a nil Doc.
func NullDoc(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// EntityNotFound is the error for a missing entity row looked up by kind and key (id or
// FQN); an empty kind, which matches any, is named "entity".
func EntityNotFound(kind, key string) error {
	if kind == "" {
		kind = "entity"
	}
	return meridian.NotFound(kind, key)
}

// EventDocs returns the values an event's change description and entity columns are
// written with: JSON text, or nil (SQL NULL) when the event has none. Event reads them
// back.
func EventDocs(e meridian.ChangeEvent) (change, entity any, err error) {
	change, entity, _, err = EncodedEventDocs(e, nil, false)
	return change, entity, err
}

// EncodedEventDocs is EventDocs of an event whose entity is already encoded as enc
// (the JSON of e.Entity); with enc nil it is EventDocs. With snapshot, enc is also the
// snapshot of the entity at e.CurrentVersion that the write stores: the entity column
// is then NULL and version, the snapshot_version column's value, names that snapshot
// (EventColumns reads it); otherwise version is nil.
func EncodedEventDocs(e meridian.ChangeEvent, enc []byte, snapshot bool) (change, entity, version any, err error) {
	if e.ChangeDescription != nil {
		b, err := json.Marshal(e.ChangeDescription)
		if err != nil {
			return nil, nil, nil, err
		}
		change = string(b)
	}
	switch {
	case enc != nil && snapshot:
		version = int64(meridian.VersionOf(e.CurrentVersion))
	case enc != nil:
		entity = string(enc)
	case e.Entity != nil:
		b, err := json.Marshal(e.Entity)
		if err != nil {
			return nil, nil, nil, err
		}
		entity = string(b)
	}
	return change, entity, version, nil
}

// Wrap words an error of a driver's operation as the drivers do:
// "<driver>: <op>: <err>". A *DocError names its row itself, so it gets the driver's
// name only: "<driver>: event ev-1 entity: <err>".
func Wrap(driver, op string, err error) error {
	var doc *DocError
	if errors.As(err, &doc) {
		return fmt.Errorf("%s: %w", driver, err)
	}
	return fmt.Errorf("%s: %s: %w", driver, op, err)
}
