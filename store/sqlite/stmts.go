package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/meridian-catalog/meridian/store/rowscan"
)

// Prepared statements. modernc.org/sqlite parses the SQL text of every unprepared call
// again (sqlite3_prepare_v2), which costs as much as running a small indexed query. So
// each pool prepares the driver's fixed statements once, when the database opens, and
// a transaction binds them to its connection with Tx.StmtContext: database/sql prepares
// a statement at most once per connection and keeps it, so after warm-up no call parses
// SQL. Statements whose text depends on the query (List, Search) run unprepared.

// stmtID names a fixed statement.
type stmtID int

const (
	stmtGet stmtID = iota
	stmtGetKind
	stmtGetByFQN
	stmtExists
	stmtVersions
	stmtVersion
	// stmtRelations is the first of eight variants: stmtRelations + the mask of
	// relFrom, relTo and relType for the fields the query sets.
	stmtRelations
	_
	_
	_
	_
	_
	_
	_
	stmtEvents
	stmtEventsLimit
	// stmtEventsOfTypes takes the entity types as one JSON array, so that a list of
	// any length runs one prepared statement (the principal cache asks at every
	// request that follows a write); its limit is -1 for none.
	stmtEventsOfTypes
	// stmtEventsWithoutEntity is the first of the three statements above again, in
	// order, without the entity document (EventQuery.WithoutEntity).
	stmtEventsWithoutEntity
	_
	_
	stmtSetting
	stmtSearchGeneration
	// stmtRelated is the first of 2*relatedPrepared variants; see relatedStmt.
	stmtRelated
)

const (
	// Writes, prepared on the writer only (from firstWrite on). They follow the
	// variants of stmtRelated.
	stmtInsert = stmtRelated + 2*relatedPrepared + iota
	stmtKeepSnapshot
	stmtUpdate
	stmtDropSnapshot
	stmtRemoveVersions
	stmtInlineEventSnapshots
	stmtRemoveRelations
	stmtRemoveSearch
	stmtRemoveEntity
	stmtPutVersion
	stmtRelate
	stmtUnrelate
	stmtAppendEvent
	stmtPutSetting
	stmtIndexDoc
	stmtIndexNewDoc
	stmtIndexDeleteFTS
	stmtIndexInsertFTS
	stmtVocabularyOf
	stmtVocabularyAdd
	stmtVocabularyRemove

	numStmts
)

// firstWrite is the first statement only the writer prepares.
const firstWrite = stmtInsert

// Variant bits of stmtRelations.
const (
	relFrom = 1 << iota
	relTo
	relType
)

// relatedPrepared is how many relation types Related runs a prepared statement for
// (every relationship field of a kind takes one); beyond it the SQL runs unprepared.
const relatedPrepared = 8

// relatedStmt is the Related statement for n types (1 to relatedPrepared), from the
// entity or, with inverse, to it.
func relatedStmt(n int, inverse bool) stmtID {
	id := stmtRelated + stmtID(2*(n-1))
	if inverse {
		id++
	}
	return id
}

// stmtSQL is the text of every fixed statement.
var stmtSQL = func() [numStmts]string {
	var s [numStmts]string
	s[stmtGet] = "SELECT " + entityColumns + " FROM entities WHERE id = ?"
	s[stmtGetKind] = "SELECT " + entityColumns + " FROM entities WHERE id = ? AND kind = ?"
	s[stmtGetByFQN] = "SELECT " + entityColumns + " FROM entities WHERE kind = ? AND fqn = ?"
	s[stmtExists] = "SELECT 1 FROM entities WHERE id = ?"
	s[stmtVersions] = rowscan.Versions
	s[stmtVersion] = rowscan.Version
	for mask := 0; mask < 8; mask++ {
		s[stmtRelations+stmtID(mask)] = relationsSQL(mask)
	}
	for _, withoutEntity := range []bool{false, true} {
		columns := rowscan.EventColumns
		if withoutEntity {
			columns = rowscan.EventColumnsWithoutEntity
		}
		events := "SELECT " + columns + " FROM change_events WHERE seq > ? AND ts >= ?"
		s[eventsStmt(stmtEvents, withoutEntity)] = events + " ORDER BY seq"
		s[eventsStmt(stmtEventsLimit, withoutEntity)] = events + " ORDER BY seq LIMIT ?"
		s[eventsStmt(stmtEventsOfTypes, withoutEntity)] = events + " AND entity_type IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?"
	}
	s[stmtSetting] = "SELECT value FROM settings WHERE key = ?"
	s[stmtSearchGeneration] = "SELECT n FROM search_generation WHERE id = 1"
	for n := 1; n <= relatedPrepared; n++ {
		s[relatedStmt(n, false)] = relatedSQL(n, false)
		s[relatedStmt(n, true)] = relatedSQL(n, true)
	}

	s[stmtInsert] = `INSERT INTO entities (` + entityColumns + `, snapshot)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	s[stmtKeepSnapshot] = rowscan.KeepSnapshot
	s[stmtUpdate] = `UPDATE entities
SET name = ?, fqn = ?, version = ?, updated_at = ?, updated_by = ?, deleted = ?, doc = ?, snapshot = ?
WHERE id = ? AND version = ?`
	s[stmtDropSnapshot] = rowscan.DropSnapshot
	s[stmtRemoveVersions] = "DELETE FROM entity_versions WHERE id = ?"
	s[stmtInlineEventSnapshots] = rowscan.InlineEventSnapshots
	s[stmtRemoveRelations] = "DELETE FROM relations WHERE from_id = ? OR to_id = ?"
	s[stmtRemoveSearch] = "DELETE FROM search_docs WHERE id = ?"
	s[stmtRemoveEntity] = "DELETE FROM entities WHERE id = ?"
	s[stmtPutVersion] = `INSERT INTO entity_versions (id, version, doc) VALUES (?, ?, ?)
ON CONFLICT (id, version) DO UPDATE SET doc = excluded.doc`
	s[stmtRelate] = `INSERT INTO relations (from_id, from_kind, to_id, to_kind, type, doc, seq)
VALUES (?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM relations))
ON CONFLICT (from_id, to_id, type) DO UPDATE
SET from_kind = excluded.from_kind, to_kind = excluded.to_kind, doc = excluded.doc`
	s[stmtUnrelate] = "DELETE FROM relations WHERE from_id = ? AND to_id = ? AND type = ?"
	s[stmtAppendEvent] = `INSERT INTO change_events
(id, event_type, entity_type, entity_id, entity_fqn, user_name, ts, previous_version, current_version,
 change_description, entity, snapshot_version, recursive)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	s[stmtPutSetting] = `INSERT INTO settings (key, value) VALUES (?, ?)
ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	s[stmtIndexDoc] = `INSERT INTO search_docs
(id, kind, fqn, name_words, service, deleted, tags, owners, domains, source, snapshot, vocab)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, fqn = excluded.fqn, name_words = excluded.name_words,
    service = excluded.service, deleted = excluded.deleted, tags = excluded.tags, owners = excluded.owners,
    domains = excluded.domains, source = excluded.source, snapshot = excluded.snapshot, vocab = excluded.vocab
RETURNING seq`
	// A created entity's document is new: a plain insert, which fails, rather than
	// replaces, if the document were there after all.
	s[stmtIndexNewDoc] = `INSERT INTO search_docs
(id, kind, fqn, name_words, service, deleted, tags, owners, domains, source, snapshot, vocab)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING seq`
	s[stmtIndexDeleteFTS] = "DELETE FROM search_fts WHERE rowid = ?"
	s[stmtIndexInsertFTS] = "INSERT INTO search_fts (rowid, name, display, description, columns) VALUES (?, ?, ?, ?, ?)"
	s[stmtVocabularyOf] = "SELECT vocab FROM search_docs WHERE id = ?"
	// The vocabulary's changes are a JSON object of words and counts to add (or, to
	// remove, negative ones).
	s[stmtVocabularyAdd] = `INSERT INTO search_vocab (word, docs) SELECT key, value FROM json_each(?) WHERE true
ON CONFLICT (word) DO UPDATE SET docs = docs + excluded.docs`
	s[stmtVocabularyRemove] = `UPDATE search_vocab SET docs = search_vocab.docs + d.value FROM json_each(?) AS d
WHERE search_vocab.word = d.key`
	return s
}()

// relationsSQL is the Relations query for the fields set in mask (relFrom, relTo,
// relType), with their values bound in that order.
func relationsSQL(mask int) string {
	query := "SELECT " + rowscan.RelationColumns + " FROM relations"
	sep := " WHERE "
	for _, c := range []struct {
		bit  int
		cond string
	}{{relFrom, "from_id = ?"}, {relTo, "to_id = ?"}, {relType, "type = ?"}} {
		if mask&c.bit != 0 {
			query += sep + c.cond
			sep = " AND "
		}
	}
	return query + " ORDER BY seq"
}

// relatedEntityColumns are the entity columns of the Related join.
var relatedEntityColumns = rowscan.Qualify("e", rowscan.EntityColumns)

// relatedSQL is the Related query for n types, the entity id bound first, then the
// types. The join keeps a target only under the kind the relation records, if any, as
// Get(kind, id) would.
func relatedSQL(n int, inverse bool) string {
	self, other, otherKind := "r.from_id", "r.to_id", "r.to_kind"
	if inverse {
		self, other, otherKind = "r.to_id", "r.from_id", "r.from_kind"
	}
	return "SELECT r.type, " + relatedEntityColumns + ` FROM relations r
JOIN entities e ON e.id = ` + other + " AND (" + otherKind + " = '' OR e.kind = " + otherKind + `)
WHERE ` + self + " = ? AND r.type IN (?" + strings.Repeat(", ?", n-1) + ") ORDER BY r.seq"
}

// eventsStmt is the Events statement of the form of (stmtEvents, stmtEventsLimit or
// stmtEventsOfTypes), or its twin without the entity document.
func eventsStmt(of stmtID, withoutEntity bool) stmtID {
	if withoutEntity {
		return of + stmtEventsWithoutEntity - stmtEvents
	}
	return of
}

// stmts are the prepared statements of one pool; a nil entry is not prepared there.
type stmts [numStmts]*sql.Stmt

// prepare prepares the statements before last on the pool. Call it after the schema
// is up to date, outside any transaction of the pool (the writer has one connection).
func prepare(ctx context.Context, db *sql.DB, last stmtID) (*stmts, error) {
	var s stmts
	for id := stmtID(0); id < last; id++ {
		if stmtSQL[id] == "" {
			s.close()
			return nil, fmt.Errorf("sqlite: statement %d has no SQL", id)
		}
		st, err := db.PrepareContext(ctx, stmtSQL[id])
		if err != nil {
			s.close()
			return nil, fmt.Errorf("sqlite: prepare %q: %w", stmtSQL[id], err)
		}
		s[id] = st
	}
	return &s, nil
}

// close closes the prepared statements.
func (s *stmts) close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for i, st := range s {
		if st != nil {
			errs = append(errs, st.Close())
			s[i] = nil
		}
	}
	return errors.Join(errs...)
}

// stmt returns statement id bound to the transaction's connection, prepared once per
// connection and reused for the rest of the transaction. It is nil when the pool did
// not prepare it.
func (t *tx) stmt(ctx context.Context, id stmtID) *sql.Stmt {
	if st := t.bound[id]; st != nil {
		return st
	}
	if t.stmts == nil || t.stmts[id] == nil {
		return nil
	}
	st := t.tx.StmtContext(ctx, t.stmts[id])
	t.bound[id] = st
	return st
}

// fixedContext is the context a fixed statement runs under: in a write transaction,
// ctx without its cancellation. A write transaction is the writer's group, shared by
// several callers (store.Group), and its fixed statements each read or write rows by
// key: a caller gone is seen between writes, where the engine checks its context, and
// one caller's cancellation must not interrupt a statement of a transaction others
// share. The driver also starts a goroutine for each statement run under a context
// that can end, to interrupt it, at a cost near the statement's own: without it, the
// engine's bulk creates ran about 8% faster in-process under a request's context.
func (t *tx) fixedContext(ctx context.Context) context.Context {
	if t.writable {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// exec runs a fixed statement that returns no rows.
func (t *tx) exec(ctx context.Context, id stmtID, args ...any) (sql.Result, error) {
	ctx = t.fixedContext(ctx)
	if st := t.stmt(ctx, id); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, stmtSQL[id], args...)
}

// query runs a fixed statement that returns rows.
func (t *tx) query(ctx context.Context, id stmtID, args ...any) (*sql.Rows, error) {
	ctx = t.fixedContext(ctx)
	if st := t.stmt(ctx, id); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, stmtSQL[id], args...)
}

// queryRow runs a fixed statement that returns at most one row.
func (t *tx) queryRow(ctx context.Context, id stmtID, args ...any) *sql.Row {
	ctx = t.fixedContext(ctx)
	if st := t.stmt(ctx, id); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, stmtSQL[id], args...)
}
